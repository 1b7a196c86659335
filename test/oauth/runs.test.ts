// As a user would: an agent whose tool lives on an OAuth-backed tool server. The first run asks for
// authorization (an interrupt carrying the authorization URL, streamed over SSE); after the browser
// flow a run calls the tool with the run principal's token, which the tool server (a real MCP
// resource server) checks against a real authorization server (oidc-provider).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOidcServer, type OidcServer } from '../fixtures/oidc-server.js';
import { startProtectedMcpServer, type ProtectedMcpServer } from '../fixtures/protected-mcp-server.js';
import { collect } from '../../src/client/stream.js';
import { createAgent, createThread, lastAiText, lastValues, start } from '../runtime/support.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let oidc: OidcServer;
let tools: ProtectedMcpServer;

beforeAll(async () => {
  server = await startTestServer();
  oidc = await startOidcServer({ redirectUri: `${server.url}/oauth/callback` });
  tools = await startProtectedMcpServer(oidc);
});
afterAll(async () => {
  await Promise.all([server?.close(), tools?.close(), oidc?.close()]);
});

describe('runs with an OAuth-backed tool server', () => {
  it('the run asks for authorization, then a run uses the principal’s token', async () => {
    const provider = await server.client.POST('/v2/auth/providers', {
      body: {
        provider_id: 'tools-login',
        name: 'Tools login',
        client_id: oidc.clients.post.id,
        client_secret: oidc.clients.post.secret,
        auth_url: oidc.authUrl,
        token_url: oidc.tokenUrl,
        scopes: ['openid', 'offline_access'],
      },
    });
    expect(provider.response.status).toBe(200);
    expect(JSON.stringify(provider.data)).not.toContain(oidc.clients.post.secret);
    const registered = await server.client.POST('/v1/deepagents/mcp-servers', {
      body: { name: 'Protected tools', url: tools.url, auth_type: 'oauth', oauth_provider_id: provider.data!.id },
    });
    expect(registered.response.status).toBe(201);
    const agentId = await createAgent(server, { tools: { tools: [{ name: 'whoami', mcp_server_url: tools.url }] } });
    const key = await server.createKey({ role: 'member', principal: 'gina@example.com' });

    const firstThread = await createThread(server, agentId);
    const first = await start(server, firstThread, { agent_id: agentId, messages: [{ role: 'user', content: '/call whoami {}' }], stream_mode: ['updates', 'values'] }, key);
    expect(first.status).toBe(200);
    const firstEvents = await collect(first);
    const text = JSON.stringify(firstEvents);
    const url = /"authorization_url":"([^"]+)"/.exec(text)?.[1];
    expect(text).toContain('oauth_authorization_required');
    expect(url?.startsWith(`${oidc.authUrl}?`)).toBe(true);
    expect(tools.bearers.filter((b) => b !== null)).toEqual([]); // the tool server saw no token yet

    const page = await oidc.authorizeInBrowser(url!.replace(/\\u0026/g, '&'), `${server.url}/oauth/callback`);
    expect(page.status).toBe(200);

    const secondThread = await createThread(server, agentId);
    const second = await start(server, secondThread, { agent_id: agentId, messages: [{ role: 'user', content: '/call whoami {}' }], stream_mode: ['values'] }, key);
    const events = await collect(second);
    // Rebuilt now that someone has authorized: the tool is listed with its own description.
    expect(lastValues(events).tools).toContainEqual({ name: 'whoami', description: 'Who the bearer token belongs to.' });
    expect(lastAiText(lastValues(events))).toBe(`Done.\nwhoami: ${JSON.stringify({ sub: oidc.accountId, client_id: oidc.clients.post.id })}`);
    expect(tools.refused).toBe(0);
    const token = await server.hangar.services.oauth.bearerFor({
      workspaceId: provider.data!.organization_id,
      principal: 'gina@example.com',
      providerId: 'tools-login',
      // The run that asked was the agent's: the authorization made the agent's token.
      agentId,
    });
    expect(tools.bearers.at(-1)).toBe(token);
  });
});
