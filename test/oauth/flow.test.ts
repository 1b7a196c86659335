// The OAuth 2.0 authorization-code flow end to end against a REAL authorization server (oidc-provider):
// with and without PKCE, each token endpoint auth method, polling, refresh after expiry, revocation,
// one-time state, per-principal tokens, and failures reported to the poller.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { OAuthAuthorizationRequired } from '../../src/core/oauth/authorization-required.js';
import { startOidcServer, type OidcServer } from '../fixtures/oidc-server.js';
import { allRowsAsText } from '../support/db-count.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let oidc: OidcServer;
let workspaceId: string;
/** The principal of the admin key (a key without an explicit principal is its own). */
let admin: string;

beforeAll(async () => {
  server = await startTestServer();
  oidc = await startOidcServer({ redirectUri: `${server.url}/oauth/callback` });
  const caller = (await server.hangar.services.workspaces.authenticate(server.adminKey))!;
  workspaceId = caller.workspaceId;
  admin = caller.principal;
});
afterAll(async () => {
  await server?.close();
  await oidc?.close();
});

async function sql(text: string, values: unknown[] = []): Promise<void> {
  const client = new pg.Client({ connectionString: server.databaseUrl });
  await client.connect();
  try {
    await client.query(text, values);
  } finally {
    await client.end();
  }
}

type Method = 'client_secret_post' | 'client_secret_basic' | 'none';
async function createProvider(providerId: string, method: Method, usesPkce: boolean, secretOverride?: string) {
  const client = method === 'client_secret_post' ? oidc.clients.post : method === 'client_secret_basic' ? oidc.clients.basic : oidc.clients.public;
  const res = await server.client.POST('/v2/auth/providers', {
    body: {
      provider_id: providerId,
      name: `Tools (${method})`,
      client_id: client.id,
      ...('secret' in client ? { client_secret: secretOverride ?? (client as { secret: string }).secret } : {}),
      auth_url: oidc.authUrl,
      token_url: oidc.tokenUrl,
      uses_pkce: usesPkce,
      token_endpoint_auth_method: method,
      scopes: ['openid', 'offline_access'],
    },
  });
  expect(res.response.status).toBe(200);
  return res.data!;
}

/** Start a session as `client`, complete it in the "browser", and return the session id and callback page. */
async function authorize(providerId: string, client = server.client) {
  const started = await client.POST('/v1/deepagents/auth-sessions', { body: { provider_id: providerId, scopes: ['openid', 'tools:read'], strategy: 'CREATE' } });
  expect(started.response.status).toBe(201);
  const { id, verification_url } = started.data!;
  const page = await oidc.authorizeInBrowser(verification_url!, `${server.url}/oauth/callback`);
  return { id: id!, url: new URL(verification_url!), page, html: await page.text() };
}

describe('authorization-code flow', () => {
  const variants: { method: Method; pkce: boolean }[] = [
    { method: 'client_secret_post', pkce: false },
    { method: 'client_secret_post', pkce: true },
    { method: 'client_secret_basic', pkce: false },
    { method: 'client_secret_basic', pkce: true },
    { method: 'none', pkce: true },
  ];
  it.each(variants)('$method, PKCE $pkce: authorize, poll, get a bearer token the server accepts', async ({ method, pkce }) => {
    const providerId = `tools-${method}-${pkce}`;
    await createProvider(providerId, method, pkce);
    const seen = oidc.tokenRequests.length;
    const { id, url, page, html } = await authorize(providerId);

    expect(url.origin + url.pathname).toBe(oidc.authUrl);
    expect(url.searchParams.get('redirect_uri')).toBe(`${server.url}/oauth/callback`);
    expect(url.searchParams.get('state')!.length).toBeGreaterThanOrEqual(43);
    expect(url.searchParams.get('code_challenge_method')).toBe(pkce ? 'S256' : null);
    expect(url.searchParams.has('code_challenge')).toBe(pkce);
    expect(page.status).toBe(200);
    expect(html).toContain('is connected');

    const polled = await server.client.GET('/v1/deepagents/auth-sessions/{session_id}', { params: { path: { session_id: id }, query: { wait_seconds: 5 } } });
    expect(polled.data).toEqual({ id, provider_id: providerId, status: 'COMPLETED', error: null, agent_id: null });

    const token = await server.hangar.services.oauth.bearerFor({ workspaceId, principal: admin, providerId });
    const introspection = await oidc.introspect(token);
    expect(introspection).toMatchObject({ active: true, sub: oidc.accountId });
    expect(oidc.tokenRequests.slice(seen)).toEqual([
      { grantType: 'authorization_code', auth: method === 'client_secret_basic' ? 'basic' : method === 'client_secret_post' ? 'post' : 'none', codeVerifier: pkce },
    ]);
    // The tokens are sealed at rest.
    expect(await allRowsAsText(server.databaseUrl)).not.toContain(token);
  });

  it('REUSE answers 200 COMPLETED when the principal already has a token', async () => {
    const again = await server.client.POST('/v1/deepagents/auth-sessions', { body: { provider_id: 'tools-client_secret_post-false' } });
    expect(again.response.status).toBe(200);
    const principal = (again.data!.metadata as { principal: string }).principal;
    // `token` identifies the stored token; the token itself never leaves the server.
    expect(again.data).toEqual({
      provider_id: 'tools-client_secret_post-false',
      status: 'COMPLETED',
      token: `tools-client_secret_post-false:${principal}`,
      metadata: { principal, provider_id: 'tools-client_secret_post-false', is_default: true },
    });
  });

  it('refreshes an expired access token with the refresh token', async () => {
    const providerId = 'tools-client_secret_basic-true';
    const before = await server.hangar.services.oauth.bearerFor({ workspaceId, principal: admin, providerId });
    await sql("UPDATE oauth_tokens SET expires_at = now() - interval '1 second' WHERE principal = $2 AND provider_ref = (SELECT id FROM oauth_providers WHERE provider_id = $1)", [providerId, admin]);
    const seen = oidc.tokenRequests.length;
    const after = await server.hangar.services.oauth.bearerFor({ workspaceId, principal: admin, providerId });
    expect(after).not.toBe(before);
    expect(oidc.tokenRequests.slice(seen)).toEqual([{ grantType: 'refresh_token', auth: 'basic', codeVerifier: false }]);
    expect(await oidc.introspect(after)).toMatchObject({ active: true, sub: oidc.accountId });
    // Fresh now: the next call uses the stored token without asking the provider.
    expect(await server.hangar.services.oauth.bearerFor({ workspaceId, principal: admin, providerId })).toBe(after);
    expect(oidc.tokenRequests.length).toBe(seen + 1);
  });

  it('refreshes shortly BEFORE expiry, too', async () => {
    const providerId = 'tools-none-true';
    const before = await server.hangar.services.oauth.bearerFor({ workspaceId, principal: admin, providerId });
    await sql("UPDATE oauth_tokens SET expires_at = now() + interval '20 seconds' WHERE principal = $2 AND provider_ref = (SELECT id FROM oauth_providers WHERE provider_id = $1)", [providerId, admin]);
    const after = await server.hangar.services.oauth.bearerFor({ workspaceId, principal: admin, providerId });
    expect(after).not.toBe(before);
    expect(oidc.tokenRequests.at(-1)).toEqual({ grantType: 'refresh_token', auth: 'none', codeVerifier: false });
  });

  it('a principal without a token gets an authorization URL; completing it makes the token available', async () => {
    const providerId = 'tools-client_secret_post-true';
    let required: OAuthAuthorizationRequired | undefined;
    try {
      await server.hangar.services.oauth.bearerFor({ workspaceId, principal: 'bob', providerId });
    } catch (error) {
      required = error as OAuthAuthorizationRequired;
    }
    expect(required).toBeInstanceOf(OAuthAuthorizationRequired);
    expect(required!.code).toBe('oauth_authorization_required');
    expect(required!.authorizationUrl.startsWith(`${oidc.authUrl}?`)).toBe(true);
    expect(required!.message).toContain(required!.authorizationUrl);
    const page = await oidc.authorizeInBrowser(required!.authorizationUrl, `${server.url}/oauth/callback`);
    expect(await page.text()).toContain('is connected');
    const bobKey = await server.createKey({ role: 'member', principal: 'bob' });
    const polled = await server.clientFor(bobKey).GET('/v1/deepagents/auth-sessions/{session_id}', { params: { path: { session_id: required!.sessionId } } });
    expect(polled.data!.status).toBe('COMPLETED');
    const token = await server.hangar.services.oauth.bearerFor({ workspaceId, principal: 'bob', providerId });
    expect(await oidc.introspect(token)).toMatchObject({ active: true });
    // Sessions are per principal: the admin cannot read bob's.
    const foreign = await server.client.GET('/v1/deepagents/auth-sessions/{session_id}', { params: { path: { session_id: required!.sessionId } } });
    expect(foreign.response.status).toBe(404);
    expect(foreign.error).toMatchObject({ code: 'oauth_session_not_found' });
  });

  it('revocation forgets the principal’s token; the next use asks for authorization again', async () => {
    const providerId = 'tools-client_secret_post-false';
    const del = await server.client.DELETE('/v2/auth/providers/{provider_id}/token', { params: { path: { provider_id: providerId } } });
    expect(del.response.status).toBe(204);
    await expect(server.hangar.services.oauth.bearerFor({ workspaceId, principal: admin, providerId })).rejects.toBeInstanceOf(OAuthAuthorizationRequired);
    const start = await server.client.POST('/v1/deepagents/auth-sessions', { body: { provider_id: providerId } });
    expect(start.response.status).toBe(201);
    expect(start.data!.status).toBe('PENDING');
    const unknown = await server.client.DELETE('/v2/auth/providers/{provider_id}/token', { params: { path: { provider_id: 'nobody' } } });
    expect(unknown.response.status).toBe(404);
    expect(unknown.error).toEqual({ detail: 'no OAuth provider "nobody" in this workspace' });
  });

  it('a state works once; unknown states and provider refusals fail clearly', async () => {
    const { url, page } = await authorize('tools-client_secret_basic-false');
    expect(page.status).toBe(200);
    const replay = await fetch(`${server.url}/oauth/callback?state=${encodeURIComponent(url.searchParams.get('state')!)}&code=whatever`);
    expect(replay.status).toBe(400);
    expect(await replay.text()).toContain('unknown, already used or expired');
    const missing = await fetch(`${server.url}/oauth/callback`);
    expect(missing.status).toBe(400);
    expect(await missing.text()).toContain('no state parameter');

    const started = await server.client.POST('/v1/deepagents/auth-sessions', { body: { provider_id: 'tools-client_secret_basic-false', strategy: 'CREATE' } });
    const state = new URL(started.data!.verification_url!).searchParams.get('state')!;
    const denied = await fetch(`${server.url}/oauth/callback?state=${state}&error=access_denied&error_description=${encodeURIComponent('<script>x</script>')}`);
    expect(denied.status).toBe(400);
    const deniedHtml = await denied.text();
    expect(deniedHtml).toContain('access_denied');
    expect(deniedHtml).not.toContain('<script>');
    const polled = await server.client.GET('/v1/deepagents/auth-sessions/{session_id}', { params: { path: { session_id: started.data!.id! } } });
    expect(polled.data).toMatchObject({ status: 'CONNECTION_REQUIRED', error: 'the provider answered access_denied: <script>x</script>' });
  });

  it('a wrong client secret fails the exchange and the poller learns why', async () => {
    await createProvider('wrong-secret', 'client_secret_post', false, 'not-the-secret');
    const { id, page, html } = await authorize('wrong-secret');
    expect(page.status).toBe(400);
    expect(html).toContain('invalid_client');
    const polled = await server.client.GET('/v1/deepagents/auth-sessions/{session_id}', { params: { path: { session_id: id } } });
    expect(polled.data!.status).toBe('CONNECTION_REQUIRED');
    expect(polled.data!.error).toContain('refused the authorization_code grant (invalid_client');
    expect(server.logs()).not.toContain('not-the-secret');
  });

  it('sessions whose state expired over a day ago are dropped when a new one starts', async () => {
    const old = await server.client.POST('/v1/deepagents/auth-sessions', { body: { provider_id: 'tools-client_secret_post-true', strategy: 'CREATE' } });
    const id = old.data!.id!;
    await sql("UPDATE oauth_sessions SET expires_at = now() - interval '25 hours' WHERE id = $1", [id]);
    expect((await server.client.GET('/v1/deepagents/auth-sessions/{session_id}', { params: { path: { session_id: id } } })).data!.status).toBe('CONNECTION_REQUIRED');
    await server.client.POST('/v1/deepagents/auth-sessions', { body: { provider_id: 'tools-client_secret_post-true', strategy: 'CREATE' } });
    expect((await server.client.GET('/v1/deepagents/auth-sessions/{session_id}', { params: { path: { session_id: id } } })).response.status).toBe(404);
  });

  it('a session whose callback was claimed by a server that then stopped ends, instead of staying PENDING forever', async () => {
    const started = await server.client.POST('/v1/deepagents/auth-sessions', { body: { provider_id: 'tools-client_secret_post-true', strategy: 'CREATE' } });
    const id = started.data!.id!;
    // The state a callback leaves while it exchanges the code, as a server that stopped mid-exchange
    // left it long ago (the exchange itself lasts at most a token request's timeout).
    await sql("UPDATE oauth_sessions SET status = 'EXCHANGING', expires_at = now() - interval '1 hour' WHERE id = $1", [id]);
    const polled = await server.client.GET('/v1/deepagents/auth-sessions/{session_id}', { params: { path: { session_id: id }, query: { wait_seconds: 1 } } });
    expect(polled.data).toMatchObject({ status: 'CONNECTION_REQUIRED', error: expect.stringContaining('did not finish') });

    // An exchange in progress (its state still valid) is PENDING, as before.
    const current = await server.client.POST('/v1/deepagents/auth-sessions', { body: { provider_id: 'tools-client_secret_post-true', strategy: 'CREATE' } });
    await sql("UPDATE oauth_sessions SET status = 'EXCHANGING' WHERE id = $1", [current.data!.id!]);
    expect((await server.client.GET('/v1/deepagents/auth-sessions/{session_id}', { params: { path: { session_id: current.data!.id! } } })).data!.status).toBe('PENDING');
  });

  it('long polling returns as soon as the callback completes the session', async () => {
    await createProvider('long-poll', 'client_secret_post', true);
    const started = await server.client.POST('/v1/deepagents/auth-sessions', { body: { provider_id: 'long-poll', scopes: ['openid'] } });
    const poll = server.client.GET('/v1/deepagents/auth-sessions/{session_id}', { params: { path: { session_id: started.data!.id! }, query: { wait_seconds: 25 } } });
    await oidc.authorizeInBrowser(started.data!.verification_url!, `${server.url}/oauth/callback`);
    expect((await poll).data!.status).toBe('COMPLETED');
  });
});

describe('a provider that forgot the grant', () => {
  it('a refresh refused with invalid_grant drops the tokens and asks for authorization again', async () => {
    const providerId = 'tools-client_secret_post-true';
    expect(await server.hangar.services.oauth.bearerFor({ workspaceId, principal: admin, providerId })).toBeTruthy();
    // A restarted authorization server (in-memory storage) knows none of the tokens it issued.
    await oidc.close();
    oidc = await startOidcServer({ redirectUri: `${server.url}/oauth/callback` });
    const moved = await server.client.PATCH('/v2/auth/providers/{provider_id}', {
      params: { path: { provider_id: providerId } },
      body: { auth_url: oidc.authUrl, token_url: oidc.tokenUrl },
    });
    expect(moved.response.status).toBe(200);
    await sql("UPDATE oauth_tokens SET expires_at = now() - interval '1 second' WHERE principal = $2 AND provider_ref = (SELECT id FROM oauth_providers WHERE provider_id = $1)", [providerId, admin]);
    const error = await server.hangar.services.oauth.bearerFor({ workspaceId, principal: admin, providerId }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OAuthAuthorizationRequired);
    expect((error as OAuthAuthorizationRequired).authorizationUrl.startsWith(`${oidc.authUrl}?`)).toBe(true);
    const again = await server.client.POST('/v1/deepagents/auth-sessions', { body: { provider_id: providerId } });
    expect(again.response.status).toBe(201); // REUSE found nothing usable
    // Authorizing again at the new server works.
    await oidc.authorizeInBrowser((error as OAuthAuthorizationRequired).authorizationUrl, `${server.url}/oauth/callback`);
    const token = await server.hangar.services.oauth.bearerFor({ workspaceId, principal: admin, providerId });
    expect((await oidc.introspect(token)).active).toBe(true);
  });
});

describe('bad input on the flow routes', () => {
  const cases: { name: string; method: string; path: string; body?: string; status: number; code: string }[] = [
    { name: 'start without provider_id', method: 'POST', path: '/v1/deepagents/auth-sessions', body: '{}', status: 422, code: 'validation_failed' },
    { name: 'start with an unknown provider', method: 'POST', path: '/v1/deepagents/auth-sessions', body: '{"provider_id":"nobody"}', status: 404, code: 'oauth_provider_not_found' },
    { name: 'start with an unknown strategy', method: 'POST', path: '/v1/deepagents/auth-sessions', body: '{"provider_id":"long-poll","strategy":"MAYBE"}', status: 422, code: 'validation_failed' },
    { name: 'start with a scope containing a space', method: 'POST', path: '/v1/deepagents/auth-sessions', body: '{"provider_id":"long-poll","scopes":["a b"]}', status: 422, code: 'validation_failed' },
    { name: 'start with malformed JSON', method: 'POST', path: '/v1/deepagents/auth-sessions', body: '{', status: 400, code: 'invalid_json' },
    { name: 'poll a bad uuid', method: 'GET', path: '/v1/deepagents/auth-sessions/nope', status: 422, code: 'validation_failed' },
    { name: 'poll an unknown session', method: 'GET', path: '/v1/deepagents/auth-sessions/00000000-0000-4000-8000-000000000000', status: 404, code: 'oauth_session_not_found' },
    { name: 'poll with wait_seconds 26', method: 'GET', path: '/v1/deepagents/auth-sessions/00000000-0000-4000-8000-000000000000?wait_seconds=26', status: 422, code: 'validation_failed' },
    { name: 'poll with wait_seconds -1', method: 'GET', path: '/v1/deepagents/auth-sessions/00000000-0000-4000-8000-000000000000?wait_seconds=-1', status: 422, code: 'validation_failed' },
    { name: 'poll with wait_seconds 1.5', method: 'GET', path: '/v1/deepagents/auth-sessions/00000000-0000-4000-8000-000000000000?wait_seconds=1.5', status: 422, code: 'validation_failed' },
    { name: 'poll with wait_seconds abc', method: 'GET', path: '/v1/deepagents/auth-sessions/00000000-0000-4000-8000-000000000000?wait_seconds=abc', status: 422, code: 'validation_failed' },
  ];
  it.each(cases)('$name → $status $code', async ({ method, path, body, status, code }) => {
    const before = await allRowsAsText(server.databaseUrl);
    const res = await fetch(`${server.url}${path}`, { method, headers: { 'x-api-key': server.adminKey, 'content-type': 'application/json' }, ...(body ? { body } : {}) });
    expect(res.status).toBe(status);
    expect(await res.json()).toMatchObject({ code, status });
    expect(await allRowsAsText(server.databaseUrl)).toBe(before);
  });

  it('a poll without wait_seconds waits 1 second, as the reference says (0 still answers at once)', async () => {
    const spy = vi.spyOn(server.hangar.services.oauth, 'session');
    try {
      const started = await server.client.POST('/v1/deepagents/auth-sessions', { body: { provider_id: 'long-poll', strategy: 'CREATE' } });
      const id = started.data!.id!;
      await server.client.GET('/v1/deepagents/auth-sessions/{session_id}', { params: { path: { session_id: id } } });
      await server.client.GET('/v1/deepagents/auth-sessions/{session_id}', { params: { path: { session_id: id }, query: { wait_seconds: 0 } } });
      expect(spy.mock.calls.map((call) => call[2])).toEqual([1, 0]);
    } finally {
      spy.mockRestore();
    }
    const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: Record<string, { get: { parameters: { name: string; schema: unknown }[] } }> };
    const param = doc.paths['/v1/deepagents/auth-sessions/{session_id}']!.get.parameters.find((p) => p.name === 'wait_seconds');
    expect(param?.schema).toMatchObject({ default: 1, maximum: 25 });
  });

  it('a viewer cannot start an authorization', async () => {
    const viewer = server.clientFor(await server.createKey({ role: 'viewer' }));
    const res = await viewer.POST('/v1/deepagents/auth-sessions', { body: { provider_id: 'long-poll' } });
    expect(res.response.status).toBe(403);
  });
});
