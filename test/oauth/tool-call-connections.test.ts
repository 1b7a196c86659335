// As a user would: runs calling a tool of an OAuth-backed tool server that keeps sessions (a real MCP
// resource server checking tokens with a real authorization server, oidc-provider). Each call carries
// the run principal's token; what it opens on the tool server for that must not outlive the call.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOidcServer, type OidcServer } from '../fixtures/oidc-server.js';
import { startProtectedMcpServer, type ProtectedMcpServer } from '../fixtures/protected-mcp-server.js';
import { collect } from '../../src/client/stream.js';
import { createAgent, createThread, lastAiText, lastValues, start } from '../runtime/support.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { registerOAuthToolServer } from './support.js';

let server: TestServer;
let oidc: OidcServer;
let tools: ProtectedMcpServer;

beforeAll(async () => {
  server = await startTestServer();
  oidc = await startOidcServer({ redirectUri: `${server.url}/oauth/callback` });
  tools = await startProtectedMcpServer(oidc, { stateful: true });
});
afterAll(async () => {
  await Promise.all([server?.close(), tools?.close(), oidc?.close()]);
});

describe('tool calls to an OAuth-backed tool server that keeps sessions', () => {
  it('each call’s connection is closed after the call: calls do not pile up open sessions on the server', async () => {
    await registerOAuthToolServer(server, oidc, tools.url, { providerId: 'stateful-login', provider: 'Stateful tools login', toolServer: 'Stateful protected tools' });
    const agentId = await createAgent(server, { tools: { tools: [{ name: 'whoami', mcp_server_url: tools.url }] } });
    const key = await server.createKey({ role: 'member', principal: 'hana@example.com' });
    const call = async () => {
      const stream = await start(server, await createThread(server, agentId), { agent_id: agentId, messages: [{ role: 'user', content: '/call whoami {}' }] }, key);
      expect(stream.status).toBe(200);
      return collect(stream);
    };

    const url = /"authorization_url":"([^"]+)"/.exec(JSON.stringify(await call()))?.[1];
    expect(url).toBeDefined();
    expect((await oidc.authorizeInBrowser(url!.replace(/\\u0026/g, '&'), `${server.url}/oauth/callback`)).status).toBe(200);

    const answer = `Done.\nwhoami: ${JSON.stringify({ sub: oidc.accountId, client_id: oidc.clients.post.id })}`;
    for (let i = 0; i < 4; i++) expect(lastAiText(lastValues(await call()))).toBe(answer);
    expect(tools.refused).toBe(0);
    // What stays open is the agent's own connection (it lists the tools), not one per call.
    await expect.poll(() => tools.openStreams).toBeLessThanOrEqual(1);
  });
});
