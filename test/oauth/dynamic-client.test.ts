// `oauth_mode: "per_user_dynamic_client"`, as the hosted product documents it: register the tool server,
// ask for the caller's OAuth provider (Hangar discovers the server's authorization server and registers
// a client there, RFC 9728 / RFC 8414 / RFC 7591), authorize, run. The authorization server is a real
// one (oidc-provider with dynamic registration on), the tool server a real MCP resource server that
// checks each token with it; only the person at the browser is scripted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect } from '../../src/client/stream.js';
import { startOidcServer, type OidcServer } from '../fixtures/oidc-server.js';
import { startProtectedMcpServer, type ProtectedMcpServer } from '../fixtures/protected-mcp-server.js';
import { createAgent, createThread, lastAiText, lastValues, start } from '../runtime/support.js';
import { runHangar } from '../support/cli.js';
import { allRowsAsText } from '../support/db-count.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let oidc: OidcServer;
let tools: ProtectedMcpServer;

const scopes = ['openid', 'offline_access'];

beforeAll(async () => {
  server = await startTestServer();
  oidc = await startOidcServer({ redirectUri: `${server.url}/oauth/callback`, registration: 'open' });
  tools = await startProtectedMcpServer(oidc, { metadata: { scopes } });
});
afterAll(async () => {
  await Promise.all([server?.close(), tools?.close(), oidc?.close()]);
});

type Answer = { status: number; body: Record<string, unknown> };

async function askProvider(mcpServerId: string, apiKey: string): Promise<Answer> {
  const res = await fetch(`${server.url}/v1/deepagents/mcp-servers/${mcpServerId}/oauth-provider`, {
    method: 'POST',
    headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
    body: '{}',
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function registerServer(name: string, url: string): Promise<string> {
  const created = await server.client.POST('/v1/deepagents/mcp-servers', { body: { name, url, auth_type: 'oauth', oauth_mode: 'per_user_dynamic_client' } });
  expect(created.response.status).toBe(201);
  expect(created.data).toMatchObject({ auth_type: 'oauth', oauth_mode: 'per_user_dynamic_client', oauth_provider_id: null });
  return created.data!.id;
}

/** `/call whoami {}` in a fresh thread as `apiKey`; the streamed events as text and the last answer. */
async function callWhoami(agentId: string, apiKey: string) {
  const thread = await createThread(server, agentId);
  const events = await collect(await start(server, thread, { agent_id: agentId, messages: [{ role: 'user', content: '/call whoami {}' }], stream_mode: ['updates', 'values'] }, apiKey));
  const text = JSON.stringify(events);
  return { text, answer: () => lastAiText(lastValues(events)) };
}

describe('per-user dynamic client registration', () => {
  it('registers a client per principal, idempotently; the documented flow and a run’s pause both end in tool calls with that principal’s token', async () => {
    const serverId = await registerServer('Dynamic tools', tools.url);
    const gina = await server.createKey({ role: 'member', principal: 'gina@example.com' });
    const hugo = await server.createKey({ role: 'member', principal: 'hugo@example.com' });

    // Gina, as the hosted product documents it: the provider, then an authorization session.
    const first = await askProvider(serverId, gina);
    expect(first.status).toBe(200);
    const providerId = first.body.oauth_provider_id as string;
    expect(await askProvider(serverId, gina)).toEqual(first);
    const provider = await server.clientFor(gina).GET('/v2/auth/providers/{provider_id}', { params: { path: { provider_id: providerId } } });
    expect(provider.data).toMatchObject({
      is_dynamic_client: true,
      auth_url: `${oidc.issuer}/auth`,
      token_url: `${oidc.issuer}/token`,
      uses_pkce: true,
      code_challenge_method: 'S256',
      token_endpoint_auth_method: 'client_secret_basic',
      scopes,
      mcp_server_url: tools.url,
    });
    const clientId = provider.data!.client_id;
    expect(Object.values(oidc.clients).map((c) => c.id)).not.toContain(clientId);
    // The secret the authorization server issued is sealed at rest and never answered.
    const stored = await server.hangar.services.oauthProviders.find(provider.data!.organization_id, providerId);
    expect(stored.clientSecret).toBeTruthy();
    expect(JSON.stringify(provider.data)).not.toContain(stored.clientSecret);
    expect(await allRowsAsText(server.databaseUrl)).not.toContain(stored.clientSecret);

    const started = await server.clientFor(gina).POST('/v1/deepagents/auth-sessions', { body: { provider_id: providerId } });
    expect(started.response.status).toBe(201);
    const verification = new URL(started.data!.verification_url!);
    expect(verification.searchParams.get('client_id')).toBe(clientId);
    expect(verification.searchParams.get('redirect_uri')).toBe(`${server.url}/oauth/callback`);
    expect(verification.searchParams.has('code_challenge')).toBe(true);
    const page = await oidc.authorizeInBrowser(started.data!.verification_url!, `${server.url}/oauth/callback`);
    expect(page.status).toBe(200);

    const agentId = await createAgent(server, { tools: { tools: [{ name: 'whoami', mcp_server_url: tools.url }] } });
    const ginaRun = await callWhoami(agentId, gina);
    expect(ginaRun.text).not.toContain('oauth_authorization_required');
    expect(ginaRun.answer()).toBe(`Done.\nwhoami: ${JSON.stringify({ sub: oidc.accountId, client_id: clientId })}`);

    // Hugo never asked: his first run registers his own client and pauses for his authorization.
    const paused = await callWhoami(agentId, hugo);
    expect(paused.text).toContain('oauth_authorization_required');
    const url = /"authorization_url":"([^"]+)"/.exec(paused.text)![1]!.replace(/\\u0026/g, '&');
    const hugoClientId = new URL(url).searchParams.get('client_id');
    expect(hugoClientId).not.toBe(clientId);
    expect((await oidc.authorizeInBrowser(url, `${server.url}/oauth/callback`)).status).toBe(200);
    const hugoRun = await callWhoami(agentId, hugo);
    expect(hugoRun.answer()).toBe(`Done.\nwhoami: ${JSON.stringify({ sub: oidc.accountId, client_id: hugoClientId })}`);
    // His provider is the one that run registered, and not Gina's.
    const hugos = await askProvider(serverId, hugo);
    expect(hugos.status).toBe(200);
    expect(hugos.body.oauth_provider_id).not.toBe(providerId);
    const hugoProvider = await server.clientFor(hugo).GET('/v2/auth/providers/{provider_id}', { params: { path: { provider_id: hugos.body.oauth_provider_id as string } } });
    expect(hugoProvider.data!.client_id).toBe(hugoClientId);
    // Gina's client is Gina's: Hugo cannot authorize with it.
    const borrowed = await server.clientFor(hugo).POST('/v1/deepagents/auth-sessions', { body: { provider_id: providerId, strategy: 'CREATE' } });
    expect(borrowed.response.status).toBe(403);
    expect(JSON.stringify(borrowed.error)).toContain('registered for another user');
    expect(tools.refused).toBeGreaterThan(0); // the probes and Hugo's first run, without a token
  });

  it('refuses what cannot be registered with a clear 4xx or 502 and stores nothing', async () => {
    const providersNow = async () => (await server.client.GET('/v2/auth/providers', { params: { query: { limit: 100 } } })).data!.resources.length;
    const before = await providersNow();

    // A server without OAuth.
    const plain = await server.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'Plain', url: `${tools.url}?plain=1` } });
    const notOAuth = await askProvider(plain.data!.id, server.adminKey);
    expect(notOAuth.status).toBe(409);
    expect(notOAuth.body.code).toBe('mcp_server_not_oauth');

    // A tool server that publishes no metadata at all.
    const bare = await startProtectedMcpServer(oidc);
    // An authorization server without a registration endpoint.
    const closedOidc = await startOidcServer({ redirectUri: `${server.url}/oauth/callback` });
    const closed = await startProtectedMcpServer(closedOidc, { metadata: { scopes, via: 'well-known' } });
    // An authorization server that refuses Hangar's registration.
    const refusingOidc = await startOidcServer({ redirectUri: `${server.url}/oauth/callback`, registration: 'token-required' });
    const refusing = await startProtectedMcpServer(refusingOidc, { metadata: { scopes } });
    try {
      const noMetadata = await askProvider(await registerServer('Bare', bare.url), server.adminKey);
      expect(noMetadata.status).toBe(409);
      expect(noMetadata.body.code).toBe('mcp_server_oauth_unsupported');
      expect(noMetadata.body.detail).toContain('publishes no OAuth metadata');
      expect(noMetadata.body.detail).toContain('legacy_shared_provider');

      const noRegistration = await askProvider(await registerServer('Closed', closed.url), server.adminKey);
      expect(noRegistration.status).toBe(409);
      expect(noRegistration.body.code).toBe('mcp_server_oauth_unsupported');
      expect(noRegistration.body.detail).toContain(`the authorization server ${closedOidc.issuer}`);
      expect(noRegistration.body.detail).toContain('no registration_endpoint');

      const refused = await askProvider(await registerServer('Refusing', refusing.url), server.adminKey);
      expect(refused.status).toBe(502);
      expect(refused.body.code).toBe('oauth_registration_failed');
      expect(refused.body.detail).toContain('refused the client registration: invalid_request: no access token provided');

      // A viewer may not register a client.
      const viewer = await server.createKey({ role: 'viewer', principal: 'vera@example.com' });
      const serverId = (await server.client.GET('/v1/deepagents/mcp-servers')).data!.find((s) => s.url === tools.url)!.id;
      expect((await askProvider(serverId, viewer)).status).toBe(403);

      expect(await providersNow()).toBe(before);
    } finally {
      await Promise.all([bare.close(), closed.close(), closedOidc.close(), refusing.close(), refusingOidc.close()]);
    }
  });
});

describe('changing a per-user tool server', () => {
  it('a shared provider is refused in this mode; a new URL drops the clients registered for the old one', async () => {
    const serverId = await registerServer('Moving tools', `${tools.url}?moving=1`);
    const isa = await server.createKey({ role: 'member', principal: 'isa@example.com' });
    const registered = await askProvider(serverId, isa);
    expect(registered.status).toBe(200);
    const providerId = registered.body.oauth_provider_id as string;

    const shared = await server.client.POST('/v2/auth/providers', {
      body: { provider_id: 'moving-shared', name: 'Shared', client_id: oidc.clients.post.id, client_secret: oidc.clients.post.secret, auth_url: oidc.authUrl, token_url: oidc.tokenUrl },
    });
    const withShared = await server.client.PATCH('/v1/deepagents/mcp-servers/{mcp_server_id}', { params: { path: { mcp_server_id: serverId } }, body: { oauth_provider_id: shared.data!.id } });
    expect(withShared.response.status).toBe(422);
    expect(JSON.stringify(withShared.error)).toContain('per_user_dynamic_client');
    const legacyWithout = await server.client.PATCH('/v1/deepagents/mcp-servers/{mcp_server_id}', { params: { path: { mcp_server_id: serverId } }, body: { oauth_mode: 'legacy_shared_provider' } });
    expect(legacyWithout.response.status).toBe(422);
    // Nothing of that changed Isa's client.
    expect((await askProvider(serverId, isa)).body.oauth_provider_id).toBe(providerId);

    const moved = await server.client.PATCH('/v1/deepagents/mcp-servers/{mcp_server_id}', { params: { path: { mcp_server_id: serverId } }, body: { url: `${tools.url}?moving=2` } });
    expect(moved.response.status).toBe(200);
    const gone = await server.clientFor(isa).GET('/v2/auth/providers/{provider_id}', { params: { path: { provider_id: providerId } } });
    expect(gone.response.status).toBe(404);
    // The next call registers a new client for the new URL.
    const again = await askProvider(serverId, isa);
    expect(again.status).toBe(200);
    const renewed = await server.clientFor(isa).GET('/v2/auth/providers/{provider_id}', { params: { path: { provider_id: again.body.oauth_provider_id as string } } });
    expect(renewed.data!.mcp_server_url).toBe(`${tools.url}?moving=2`);
  });
});

describe('the CLI with a per-user tool server', () => {
  it('`mcp-servers add --oauth-mode per_user_dynamic_client` registers it; `connect` uses the caller’s own client', async () => {
    const env = { HANGAR_URL: server.url, HANGAR_API_KEY: server.adminKey };
    const added = await runHangar(['mcp-servers', 'add', '--name', 'CLI tools', '--url', `${tools.url}?cli=1`, '--oauth-mode', 'per_user_dynamic_client', '--hangar-url', server.url], env);
    expect(added.code, added.stderr).toBe(0);
    const id = added.stdout.trim();
    const read = await server.client.GET('/v1/deepagents/mcp-servers/{mcp_server_id}', { params: { path: { mcp_server_id: id } } });
    expect(read.data).toMatchObject({ auth_type: 'oauth', oauth_mode: 'per_user_dynamic_client', oauth_provider_id: null });
    // The admin authorizes through the API; `connect` then finds that authorization on the admin's own client.
    const own = await askProvider(id, server.adminKey);
    const started = await server.client.POST('/v1/deepagents/auth-sessions', { body: { provider_id: own.body.oauth_provider_id as string } });
    expect((await oidc.authorizeInBrowser(started.data!.verification_url!, `${server.url}/oauth/callback`)).status).toBe(200);
    const connected = await runHangar(['mcp-servers', 'connect', 'CLI tools'], env);
    expect(connected.code, connected.stderr).toBe(0);
    expect(connected.stdout).toBe('Already authorized with CLI tools (per-user client).\n');
  });
});

describe('per-user dynamic client registration and the outbound policy', () => {
  it('metadata naming an address the installation may not call is refused, and nothing is stored', async () => {
    // This installation may call the host name `localhost` (the tool server's), but no other loopback address.
    const guarded = await startTestServer({ env: { HANGAR_EGRESS_ALLOW: 'localhost' } });
    // The tool server's metadata names its authorization server by a literal loopback address.
    const inner = await startProtectedMcpServer(oidc, { metadata: { scopes }, host: 'localhost' });
    try {
      const created = await guarded.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'Inner', url: inner.url, auth_type: 'oauth', oauth_mode: 'per_user_dynamic_client' } });
      expect(created.response.status).toBe(201);
      const res = await fetch(`${guarded.url}/v1/deepagents/mcp-servers/${created.data!.id}/oauth-provider`, { method: 'POST', headers: { 'x-api-key': guarded.adminKey } });
      expect(res.status).toBe(502);
      const body = (await res.json()) as { code: string; detail: string };
      expect(body.code).toBe('oauth_registration_failed');
      expect(body.detail).toContain(`names the authorization server ${oidc.issuer}`);
      expect(body.detail).toContain('loopback address; allow it with HANGAR_EGRESS_ALLOW');
      expect((await guarded.client.GET('/v2/auth/providers')).data!.resources).toEqual([]);
    } finally {
      await Promise.all([guarded.close(), inner.close()]);
    }
  });
});
