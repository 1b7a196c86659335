// Listing a tool server's tools trusts the server for nothing: a list that never ends, a server that
// fails after connecting (and, like every server of the MCP SDK, keeps a GET event stream open), or
// a server that never answers, each end the request with a 502 instead of keeping it open forever.
// The tool servers are real MCP servers (@modelcontextprotocol/sdk) with a hostile tools/list.
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ListToolsRequestSchema, type ListToolsResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_TOOL_PAGES } from '../../src/core/mcp-servers/tools.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
const httpServers: HttpServer[] = [];

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  for (const h of httpServers) h.closeAllConnections();
  await Promise.all([server?.close(), ...httpServers.map((h) => new Promise((resolve) => h.close(resolve)))]);
});

/** A stateless Streamable HTTP MCP server whose tools/list answers `list(page)` (page counts from 1). */
async function startToolServer(list: (page: number) => ListToolsResult): Promise<{ url: string; pages: () => number }> {
  let pages = 0;
  const http = createServer((req, res) => {
    void (async () => {
      const mcp = new Server({ name: 'hostile-tools', version: '1.0.0' }, { capabilities: { tools: {} } });
      mcp.setRequestHandler(ListToolsRequestSchema, async () => list(++pages));
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on('close', () => {
        void transport.close();
        void mcp.close();
      });
      await mcp.connect(transport);
      await transport.handleRequest(req, res, await readJson(req));
    })();
  });
  return { url: await listen(http), pages: () => pages };
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? undefined : JSON.parse(text);
}

async function listen(http: HttpServer): Promise<string> {
  httpServers.push(http);
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
}

async function register(url: string): Promise<string> {
  const created = await server.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'hostile', url } });
  expect(created.response.status).toBe(201);
  return created.data!.id;
}

async function listTools(id: string) {
  return server.client.GET('/v1/deepagents/mcp-servers/{mcp_server_id}/tools', { params: { path: { mcp_server_id: id } } });
}

describe('GET /v1/deepagents/mcp-servers/{id}/tools against hostile servers', () => {
  it('follows the pages of a tool list that ends', async () => {
    const tools = await startToolServer((page) => ({
      tools: [{ name: `tool_${page}`, inputSchema: { type: 'object' } }],
      ...(page < 3 ? { nextCursor: `after-${page}` } : {}),
    }));
    const listed = await listTools(await register(tools.url));
    expect(listed.response.status).toBe(200);
    expect(listed.data!.tools.map((t) => t.name)).toEqual(['tool_1', 'tool_2', 'tool_3']);
  });

  it('stops following a tool list that never ends', async () => {
    const tools = await startToolServer((page) => ({ tools: [{ name: `tool_${page}`, inputSchema: { type: 'object' } }], nextCursor: `after-${page}` }));
    const listed = await listTools(await register(tools.url));
    expect(listed.response.status).toBe(502);
    expect(listed.error).toMatchObject({ code: 'mcp_server_unreachable' });
    expect(JSON.stringify(listed.error)).toContain(`at most ${MAX_TOOL_PAGES}`);
    expect(tools.pages()).toBe(MAX_TOOL_PAGES);
  });

  it('answers a server that connected and then failed, without trying its event stream as an SSE server', async () => {
    const tools = await startToolServer(() => {
      throw new Error('tools are unavailable');
    });
    const listed = await listTools(await register(tools.url));
    expect(listed.response.status).toBe(502);
    expect(JSON.stringify(listed.error)).toContain('the server answered with MCP error');
    expect(tools.pages()).toBe(1);
  });

  it('refuses, when registered, a header value HTTP cannot send, instead of failing every listing and call', async () => {
    const tools = await startToolServer(() => ({ tools: [] }));
    const headers = [{ key: 'Authorization', value: 'Bearer tøken-😀' }];
    const created = await server.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'emoji', url: tools.url, headers } });
    expect(created.response.status).toBe(422);
    expect(created.error).toMatchObject({ code: 'validation_failed', errors: [{ loc: ['body', 'headers', 0, 'value'] }] });
    expect((await server.client.GET('/v1/deepagents/mcp-servers')).data!.some((s) => s.url === tools.url)).toBe(false);

    // ISO-8859-1 is sent as is; a later PATCH is checked the same way.
    const latin = await server.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'latin', url: tools.url, headers: [{ key: 'X-Team', value: 'Équipe' }] } });
    expect(latin.response.status).toBe(201);
    expect((await listTools(latin.data!.id)).response.status).toBe(200);
    const patched = await server.client.PATCH('/v1/deepagents/mcp-servers/{mcp_server_id}', { params: { path: { mcp_server_id: latin.data!.id } }, body: { headers } });
    expect(patched.response.status).toBe(422);
    expect((await server.client.GET('/v1/deepagents/mcp-servers/{mcp_server_id}', { params: { path: { mcp_server_id: latin.data!.id } } })).data!.headers).toEqual([
      { key: 'X-Team', value: 'Équipe' },
    ]);
  });

  it('refuses, when registered, a header the HTTP client or the MCP transport sets itself, instead of failing every listing and call', async () => {
    const tools = await startToolServer(() => ({ tools: [] }));
    for (const key of ['Keep-Alive', 'Transfer-Encoding', 'Content-Length', 'Mcp-Session-Id']) {
      const headers = [
        { key: 'Authorization', value: 'Bearer t' },
        { key, value: key === 'Content-Length' ? '5' : 'x' },
      ];
      const created = await server.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'framing', url: tools.url, headers } });
      expect(created.response.status).toBe(422);
      expect(created.error).toMatchObject({ code: 'validation_failed', errors: [{ loc: ['body', 'headers', 1, 'key'], msg: expect.stringContaining(`"${key}" cannot be stored`) }] });
    }
    expect((await server.client.GET('/v1/deepagents/mcp-servers')).data!.some((s) => s.url === tools.url)).toBe(false);

    const fine = await server.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'framing', url: tools.url, headers: [{ key: 'X-Team', value: 'a' }] } });
    expect(fine.response.status).toBe(201);
    expect((await listTools(fine.data!.id)).response.status).toBe(200);
    const patched = await server.client.PATCH('/v1/deepagents/mcp-servers/{mcp_server_id}', {
      params: { path: { mcp_server_id: fine.data!.id } },
      body: { headers: [{ key: 'keep-alive', value: 'timeout=5' }] },
    });
    expect(patched.response.status).toBe(422);
    expect((await server.client.GET('/v1/deepagents/mcp-servers/{mcp_server_id}', { params: { path: { mcp_server_id: fine.data!.id } } })).data!.headers).toEqual([{ key: 'X-Team', value: 'a' }]);
  });

  it('gives up on a server that accepts connections and never answers', async () => {
    const held: ServerResponse[] = [];
    const silent = createServer((req, res) => {
      req.resume();
      held.push(res);
    });
    const listed = await listTools(await register(await listen(silent)));
    expect(listed.response.status).toBe(502);
    expect(JSON.stringify(listed.error)).toContain('did not finish answering');
    expect(held.length).toBeGreaterThan(0);
  });
});
