// The hosted SDK's agent health check (`GET /agents/{id}/health`), driven through the typed client
// against real MCP servers: every tool server the agent or a subagent names is probed with the
// credentials a run would send, and each failure is said in the hosted contract's words.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBearerToolServer, type ToolServerFixture } from '../support/mcp.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent } from '../runtime/support.js';

let server: TestServer;
let good: ToolServerFixture;
let wrongKey: ToolServerFixture;
let gone: ToolServerFixture;
let notMcp: Server;
let notMcpUrl: string;

beforeAll(async () => {
  [server, good, wrongKey, gone] = await Promise.all([startTestServer(), startBearerToolServer('right'), startBearerToolServer('other'), startBearerToolServer('gone')]);
  // A web server that is not an MCP server: every request is a 404 page.
  notMcp = createServer((_req, res) => res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not here</h1>'));
  await new Promise<void>((resolve) => notMcp.listen(0, '127.0.0.1', resolve));
  notMcpUrl = `http://127.0.0.1:${(notMcp.address() as AddressInfo).port}/mcp`;
  const register = async (name: string, url: string, token: string) => {
    const res = await server.client.POST('/v1/deepagents/mcp-servers', { body: { name, url, headers: [{ key: 'Authorization', value: `Bearer ${token}` }] } });
    if (!res.data) throw new Error(`register ${name}: ${JSON.stringify(res.error)}`);
    return res.data.id;
  };
  await Promise.all([register('good', good.url, 'right'), register('wrong-key', wrongKey.url, 'right'), register('gone', gone.url, 'gone'), register('not-mcp', notMcpUrl, 'x')]);
  await gone.close();
});
afterAll(async () => {
  await Promise.all([server?.close(), good?.close(), wrongKey?.close(), new Promise((resolve) => notMcp?.close(resolve))]);
});

const health = (agentId: string, client = server.client) => client.GET('/v1/deepagents/agents/{agent_id}/health', { params: { path: { agent_id: agentId } } });

describe('agent health', () => {
  it('is ok when every tool server answers with the stored credentials', async () => {
    const agentId = await createAgent(server, { tools: { tools: [{ name: 'add', mcp_server_url: good.url }, { name: 'whoami', mcp_server_url: `${good.url}/` }] } });
    const res = await health(agentId);
    expect(res.response.status).toBe(200);
    expect(res.data).toEqual({
      agent_id: agentId,
      mcp_check: { ok: true, servers: [{ mcp_server_url: good.url, mcp_server_id: expect.any(String), mcp_server_name: 'good', ok: true, error_code: null, error: null }] },
    });
    expect(good.seenAuthorization.at(-1)).toBe('Bearer right');
  });

  it('is ok with no tool servers at all', async () => {
    const agentId = await createAgent(server);
    expect((await health(agentId)).data).toEqual({ agent_id: agentId, mcp_check: { ok: true, servers: [] } });
  });

  it('names each failing server, subagents’ included: refused credentials, no answer, not an MCP server, no registration', async () => {
    const agentId = await createAgent(server, {
      tools: { tools: [{ name: 'add', mcp_server_url: good.url }, { name: 'add', mcp_server_url: wrongKey.url }] },
      subagents: [{ name: 'helper', description: 'helps', instructions: 'Help.', tools: { tools: [{ name: 'add', mcp_server_url: gone.url }, { name: 'x', mcp_server_url: notMcpUrl }] } }],
    });
    // A registration deleted after the agent named it: a run could not call it either.
    const extra = await startBearerToolServer('extra');
    try {
      const reg = await server.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'extra', url: extra.url, headers: [] } });
      const withExtra = await server.client.PATCH('/v1/deepagents/agents/{agent_id}', {
        params: { path: { agent_id: agentId } },
        body: { subagents: [{ name: 'helper', description: 'helps', instructions: 'Help.', tools: { tools: [{ name: 'add', mcp_server_url: gone.url }, { name: 'x', mcp_server_url: notMcpUrl }, { name: 'add', mcp_server_url: extra.url }] } }] },
      });
      expect(withExtra.response.status).toBe(200);
      await server.client.DELETE('/v1/deepagents/mcp-servers/{mcp_server_id}', { params: { path: { mcp_server_id: reg.data!.id } } });
    } finally {
      await extra.close();
    }
    const res = await health(agentId);
    expect(res.response.status).toBe(200);
    const check = res.data!.mcp_check;
    expect(check.ok).toBe(false);
    const byUrl = Object.fromEntries(check.servers.map((s) => [s.mcp_server_url, s]));
    expect(Object.keys(byUrl).sort()).toEqual([good.url, wrongKey.url, gone.url, notMcpUrl, extra.url].sort());
    expect(byUrl[good.url]).toMatchObject({ ok: true, error_code: null });
    expect(byUrl[wrongKey.url]).toMatchObject({ ok: false, error_code: 'auth_failed', mcp_server_name: 'wrong-key' });
    expect(byUrl[wrongKey.url]!.error).toContain('401');
    expect(byUrl[gone.url]).toMatchObject({ ok: false, error_code: 'unreachable', mcp_server_name: 'gone' });
    expect(byUrl[notMcpUrl]).toMatchObject({ ok: false, error_code: 'invalid_response' });
    expect(byUrl[notMcpUrl]!.error).not.toContain('Not here');
    expect(byUrl[extra.url]).toMatchObject({ ok: false, error_code: 'unreachable', mcp_server_id: null, mcp_server_name: null });
    expect(byUrl[extra.url]!.error).toContain('no tool server is registered');
  });

  it('is a 404 for an unknown agent, a 422 for an id that is not one, a 403 for a viewer', async () => {
    const unknown = await health('00000000-0000-4000-8000-000000000000');
    expect(unknown.response.status).toBe(404);
    const bad = await fetch(`${server.url}/v1/deepagents/agents/not-a-uuid/health`, { headers: { 'x-api-key': server.adminKey } });
    expect(bad.status).toBe(422);
    const agentId = await createAgent(server, { tools: { tools: [{ name: 'add', mcp_server_url: good.url }] } });
    const viewer = server.clientFor(await server.createKey({ role: 'viewer' }));
    const refused = await health(agentId, viewer);
    expect(refused.response.status).toBe(403);
  });
});
