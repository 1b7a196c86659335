// Tool servers that come and go while an agent is in use, against real MCP servers started by the
// test (@modelcontextprotocol/sdk, Streamable HTTP with sessions): the built agent is reused across
// runs, so what it learnt of a server at build time must not outlive the server's own state.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMcpTools } from '../../src/runtime/tools/mcp.js';
import { freePort, startSessionToolServer, startSseToolServer, type SessionToolServerFixture } from '../support/mcp.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent, createThread, lastAiText, lastValues, run } from './support.js';

let server: TestServer;
const started: SessionToolServerFixture[] = [];

beforeAll(async () => {
  server = await startTestServer({ env: { HANGAR_TOOL_CONNECT_TIMEOUT_MS: '3000' } });
});
afterAll(async () => {
  await Promise.all([server?.close(), ...started.map((s) => s.close())]);
});

async function sseServer(): Promise<SessionToolServerFixture> {
  const s = await startSseToolServer();
  started.push(s);
  return s;
}

async function toolServer(port = 0): Promise<SessionToolServerFixture> {
  const s = await startSessionToolServer(port);
  started.push(s);
  return s;
}

async function register(url: string): Promise<void> {
  const res = await server.client.POST('/v1/deepagents/mcp-servers', { body: { name: `srv-${url}`, url } });
  expect(res.response.status).toBe(201);
}

async function callAdd(agentId: string, a: number, b: number): Promise<string> {
  const threadId = await createThread(server, agentId);
  const { events } = await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: `/call add {"a": ${a}, "b": ${b}}` }] });
  return lastAiText(lastValues(events));
}

describe('tool servers that come and go', () => {
  it('a server that forgot the session (404, as after a restart) gets a new session and the call goes through', async () => {
    const tools = await toolServer();
    await register(tools.url);
    const agentId = await createAgent(server, { tools: { tools: [{ name: 'add', mcp_server_url: tools.url }] } });
    expect(await callAdd(agentId, 1, 2)).toBe('Done.\nadd: 3');
    expect(tools.initializes).toBe(1);

    await tools.forgetSessions();
    expect(await callAdd(agentId, 2, 40)).toBe('Done.\nadd: 42');
    expect(tools.unknownSessions).toBeGreaterThan(0);
    expect(tools.initializes).toBe(2);
    // The refused request was never executed: the call ran once, in the new session.
    expect(tools.calls).toEqual([
      { name: 'add', args: { a: 1, b: 2 } },
      { name: 'add', args: { a: 2, b: 40 } },
    ]);
  });

  it('an SSE server that forgot the session (it restarted) gets a new session and the call goes through', async () => {
    const tools = await sseServer();
    await register(tools.url);
    const agentId = await createAgent(server, { tools: { tools: [{ name: 'add', mcp_server_url: tools.url }] } });
    expect(await callAdd(agentId, 1, 2)).toBe('Done.\nadd: 3');

    await tools.forgetSessions();
    expect(await callAdd(agentId, 2, 40)).toBe('Done.\nadd: 42');
    expect(tools.unknownSessions).toBe(1);
    expect(tools.calls).toEqual([
      { name: 'add', args: { a: 1, b: 2 } },
      { name: 'add', args: { a: 2, b: 40 } },
    ]);
  });

  it('a server that says its tools changed (notifications/tools/list_changed) is listed again by the next run', async () => {
    const tools = await toolServer();
    await register(tools.url);
    const agentId = await createAgent(server, { tools: { tools: [{ name: 'add', mcp_server_url: tools.url }] } });
    const described = async () => {
      const { events } = await run(server, await createThread(server, agentId), { agent_id: agentId, messages: [{ role: 'user', content: 'hello' }] });
      return (lastValues(events).tools as { name: string; description: string }[]).find((t) => t.name === 'add')?.description;
    };
    expect(await described()).toBe('Add two numbers');

    tools.describeAdd!('Add two numbers; both must be integers');
    await expect.poll(described).toBe('Add two numbers; both must be integers');
    expect(tools.initializes).toBe(2);
  });

  it('a server that was down when the agent was first run is used once it is back', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/mcp`;
    await register(url);
    const agentId = await createAgent(server, { tools: { tools: [{ name: 'add', mcp_server_url: url }] } });
    expect(await callAdd(agentId, 1, 1)).toMatch(/^Done\.\nadd: Error: add failed: tool server .* is unreachable or failing/);

    const tools = await toolServer(port);
    expect(await callAdd(agentId, 20, 3)).toBe('Done.\nadd: 23');
    expect(tools.calls).toEqual([{ name: 'add', args: { a: 20, b: 3 } }]);
  });

  it('a run still using an agent the cache has dropped (and closed) keeps calling its tools', async () => {
    // The agent cache closes a dropped agent's clients a minute after a newer build replaces it
    // (its server was changed, or it was built while a server was down); a longer run still holds it.
    const tools = await toolServer();
    const ref = { name: 'add', mcpServerUrl: tools.url };
    const loaded = await loadMcpTools({
      refs: [ref],
      findServer: async (url) => (url === tools.url ? { url, name: 'session tools', headers: [] } : undefined),
      limits: { connectTimeoutMs: 3000, callTimeoutMs: 3000 },
    });
    const add = loaded.tools.get(ref)!;
    expect(await add.invoke({ a: 1, b: 2 })).toBe('3');
    await loaded.close();
    expect(await add.invoke({ a: 4, b: 5 })).toBe('9');
    expect(tools.calls).toEqual([
      { name: 'add', args: { a: 1, b: 2 } },
      { name: 'add', args: { a: 4, b: 5 } },
    ]);
  });
});
