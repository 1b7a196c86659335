// A tool server URL may carry a credential (`?api_key=…`, `https://user:pass@host/…`). The owner sees
// it where they configured it (the tool server's `url`, the agent's tools); everywhere else Hangar
// writes it (tool errors, interrupts, the run's state and stream, traces, logs) the secret is redacted.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, readJson } from '../support/mcp.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent, createThread, run } from './support.js';

const QUERY_SECRET = 'qs-secret-5f1e0c7d9a2b';
const DOWN_SECRET = 'down-secret-8e3a41c6b0d7';
const USER_SECRET = 'userinfo-secret-2c9d7e15';
const SHORT_SECRET = 'zq7x';

let server: TestServer;
let tools: { url: string; close(): Promise<void> };

/** A stateless Streamable HTTP MCP server: `add` works, `boom` is answered with HTTP 500 echoing the request URL. */
async function startFlakyServer(): Promise<{ url: string; close(): Promise<void> }> {
  const http: Server = createServer(async (req, res) => {
    const body = await readJson(req);
    if ((body as { method?: string } | undefined)?.method === 'tools/call' && (body as { params?: { name?: string } }).params?.name === 'boom') {
      res.writeHead(500, { 'content-type': 'text/plain' }).end(`internal error handling ${req.url}`);
      return;
    }
    const mcp = new McpServer({ name: 'flaky', version: '1.0.0' });
    mcp.registerTool('add', { description: 'Add', inputSchema: {} }, async () => ({ content: [{ type: 'text', text: '42' }] }));
    mcp.registerTool('boom', { description: 'Fails', inputSchema: {} }, async () => ({ content: [{ type: 'text', text: 'never' }] }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res, body);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

beforeAll(async () => {
  [server, tools] = await Promise.all([startTestServer(), startFlakyServer()]);
});
afterAll(async () => {
  await Promise.all([server?.close(), tools?.close()]);
});

async function stored(table: string): Promise<string> {
  const client = new pg.Client({ connectionString: server.databaseUrl });
  await client.connect();
  try {
    return JSON.stringify((await client.query(`SELECT * FROM ${table}`)).rows);
  } finally {
    await client.end();
  }
}

describe('tool server URLs carrying a credential', () => {
  it('keeps the secret out of tool errors, interrupts, state, stream, traces and logs', async () => {
    const flakyUrl = `${tools.url}?api_key=${QUERY_SECRET}`;
    // A value too short to be redacted on its own (`k`) must not be left in a quoted URL either.
    const downUrl = `http://127.0.0.1:${await freePort()}/mcp?token=${DOWN_SECRET}&k=${SHORT_SECRET}`;
    const userUrl = `http://hangar:${USER_SECRET}@127.0.0.1:${await freePort()}/mcp`;
    // A user name or password in the URL is refused outright, without echoing it.
    const refused = await server.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'Userinfo', url: userUrl } });
    expect(refused.response.status).toBe(422);
    expect(JSON.stringify(refused.error)).not.toContain(USER_SECRET);
    const ids: string[] = [];
    for (const [name, url] of [['Flaky', flakyUrl], ['Down', downUrl]]) {
      const created = await server.client.POST('/v1/deepagents/mcp-servers', { body: { name: name!, url: url! } });
      expect({ status: created.response.status, error: created.error }).toEqual({ status: 201, error: undefined });
      // The owner configured it: the tool server's own url is returned as given.
      expect((created.data as { url?: string }).url).toBe(url);
      ids.push(created.data!.id);
    }
    // Registering the same URL again, and listing the tools of a server that is down, are refused
    // naming the server by its redacted URL.
    const again = await server.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'Again', url: flakyUrl } });
    expect(again.response.status).toBe(409);
    expect(JSON.stringify(again.error)).toContain('api_key=[redacted]');
    const listing = await server.client.GET('/v1/deepagents/mcp-servers/{mcp_server_id}/tools', { params: { path: { mcp_server_id: ids[1]! } } });
    expect(listing.response.status).toBe(502);
    expect(JSON.stringify(listing.error)).toContain('token=[redacted]&k=[redacted]');
    // A viewer sees neither the headers nor the URL's credential.
    const viewer = server.clientFor(await server.createKey({ role: 'viewer' }));
    const seen = await viewer.GET('/v1/deepagents/mcp-servers/{mcp_server_id}', { params: { path: { mcp_server_id: ids[0]! } } });
    expect(seen.data?.url).toBe(`${tools.url}?api_key=[redacted]`);
    const apiAnswers = JSON.stringify([refused.error, again.error, listing.error, seen.data, (await viewer.GET('/v1/deepagents/mcp-servers')).data]);
    const agentId = await createAgent(server, {
      tools: {
        tools: [
          { name: 'boom', mcp_server_url: flakyUrl },
          { name: 'add', mcp_server_url: flakyUrl },
          { name: 'not_offered', mcp_server_url: flakyUrl },
          { name: 'ping', mcp_server_url: downUrl },
        ],
        interrupt_config: { [`${flakyUrl}::add`]: true },
      },
    });
    const threadId = await createThread(server, agentId);
    const first = await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: '/call boom {}\n/call ping {}' }] });
    const firstText = JSON.stringify(first.events);
    // The calls failed and the model was told so, with the server's URL in a form it may read.
    expect(firstText).toContain('boom failed');
    expect(firstText).toContain('ping failed');
    expect(firstText).toContain('/mcp?token=[redacted]&k=[redacted] is unreachable');
    expect(firstText).toContain('/mcp?api_key=[redacted]');

    const second = await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: '/call add {}' }] });
    const secondText = JSON.stringify(second.events);
    expect(secondText).toContain('/mcp?api_key=[redacted] requires approval');

    const state = await server.client.GET('/v1/deepagents/threads/{thread_id}/state', { params: { path: { thread_id: threadId } } });
    expect(state.response.status).toBe(200);
    const trace = await server.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}/trace', { params: { path: { thread_id: threadId, run_id: first.stream.runId! } } });
    expect(trace.response.status).toBe(200);
    const traceText = JSON.stringify(trace.data);
    expect((trace.data as unknown as { metadata: { dropped_tools: unknown } }).metadata.dropped_tools).toEqual([
      { name: 'not_offered', mcp_server_url: `${tools.url}?api_key=[redacted]`, reason: expect.stringContaining('not_offered') },
    ]);
    // Where the owner configured it, it stays as given.
    const agent = await server.client.GET('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: agentId } } });
    expect(JSON.stringify(agent.data)).toContain(QUERY_SECRET);

    const everywhere = {
      apiAnswers,
      stream: firstText + secondText,
      state: JSON.stringify(state.data),
      trace: traceText,
      tracesStored: await stored('tracing_runs'),
      logs: server.logs(),
    };
    for (const [where, text] of Object.entries(everywhere)) {
      for (const secret of [QUERY_SECRET, DOWN_SECRET, USER_SECRET, `k=${SHORT_SECRET}`]) {
        expect({ where, leaked: text.includes(secret) }).toEqual({ where, leaked: false });
      }
    }
  });
});
