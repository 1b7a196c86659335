// The hosted auth-session fields `agent_id`, `token_id` and `is_default` (the reference OpenAPI's
// CreateAuthSessionRequest), against a REAL authorization server (oidc-provider): each does what the
// docs say, or is refused with a 4xx naming it, and a refused start leaves no session behind.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOidcServer, type OidcServer } from '../fixtures/oidc-server.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent } from '../runtime/support.js';

let server: TestServer;
let oidc: OidcServer;
let workspaceId: string;
let admin: string;
const providerId = 'fields-tools';

beforeAll(async () => {
  server = await startTestServer();
  oidc = await startOidcServer({ redirectUri: `${server.url}/oauth/callback` });
  const caller = (await server.hangar.services.workspaces.authenticate(server.adminKey))!;
  workspaceId = caller.workspaceId;
  admin = caller.principal;
  const res = await server.client.POST('/v2/auth/providers', {
    body: {
      provider_id: providerId,
      name: 'Tools',
      client_id: oidc.clients.post.id,
      client_secret: oidc.clients.post.secret,
      auth_url: oidc.authUrl,
      token_url: oidc.tokenUrl,
      uses_pkce: true,
      token_endpoint_auth_method: 'client_secret_post',
      scopes: ['openid', 'offline_access'],
    },
  });
  expect(res.response.status).toBe(200);
});
afterAll(async () => {
  await server?.close();
  await oidc?.close();
});

async function sessionCount(): Promise<number> {
  const client = new pg.Client({ connectionString: server.databaseUrl });
  await client.connect();
  try {
    return Number((await client.query('SELECT count(*) AS n FROM oauth_sessions')).rows[0].n);
  } finally {
    await client.end();
  }
}

type StartBody = { provider_id: string; scopes?: string[]; strategy?: 'REUSE' | 'CREATE'; agent_id?: string; token_id?: string; is_default?: boolean };
const start = (body: StartBody) => server.client.POST('/v1/deepagents/auth-sessions', { body: body as never });

/** Open the verification URL in the "browser" and wait for the session to complete. */
async function complete(started: Awaited<ReturnType<typeof start>>): Promise<void> {
  expect(started.response.status, JSON.stringify(started.error)).toBe(201);
  const page = await oidc.authorizeInBrowser(started.data!.verification_url!, `${server.url}/oauth/callback`);
  expect(page.status).toBe(200);
  const polled = await server.client.GET('/v1/deepagents/auth-sessions/{session_id}', { params: { path: { session_id: started.data!.id! }, query: { wait_seconds: 5 } } });
  expect(polled.data!.status).toBe('COMPLETED');
}

describe('auth-session fields of the hosted contract', () => {
  it('refused fields (is_default false, an unknown agent, a token_id not the caller’s) are 4xx naming them, and start nothing', async () => {
    const before = await sessionCount();
    const notDefault = await start({ provider_id: providerId, scopes: [], strategy: 'CREATE', is_default: false });
    expect(notDefault.response.status).toBe(422);
    expect(JSON.stringify(notDefault.error)).toContain('is_default');

    const unknownAgent = await start({ provider_id: providerId, scopes: [], strategy: 'CREATE', agent_id: crypto.randomUUID() });
    expect(unknownAgent.response.status).toBe(404);
    expect(unknownAgent.error).toMatchObject({ code: 'agent_not_found' });

    for (const tokenId of [`${providerId}:someone-else`, `other-provider:${admin}`, 'nonsense']) {
      const foreign = await start({ provider_id: providerId, scopes: [], strategy: 'CREATE', token_id: tokenId });
      expect({ tokenId, status: foreign.response.status }).toEqual({ tokenId, status: 404 });
      expect(foreign.error).toMatchObject({ code: 'oauth_token_not_found' });
      expect(JSON.stringify(foreign.error)).toContain('token_id');
    }
    expect(await sessionCount()).toBe(before);
  });

  it('agent_id names an agent of the workspace and comes back in metadata; with is_default true the token is the default one', async () => {
    const agentId = await createAgent(server);
    const started = await start({ provider_id: providerId, scopes: ['openid'], strategy: 'CREATE', agent_id: agentId, is_default: true });
    expect(started.data!.metadata).toEqual({ principal: admin, provider_id: providerId, is_default: true, agent_id: agentId });
    await complete(started);
    const reused = await start({ provider_id: providerId, scopes: ['openid'], strategy: 'REUSE', agent_id: agentId, is_default: true });
    expect(reused.response.status).toBe(200);
    expect(reused.data).toEqual({ provider_id: providerId, status: 'COMPLETED', token: `${providerId}:${admin}`, metadata: { principal: admin, provider_id: providerId, is_default: true, agent_id: agentId } });
  });

  it('token_id names the caller’s token: REUSE answers it COMPLETED, CREATE re-authorizes and replaces it', async () => {
    const first = await start({ provider_id: providerId, scopes: ['openid'], strategy: 'REUSE' });
    const token = first.response.status === 200 ? first.data!.token! : (await complete(first), `${providerId}:${admin}`);
    const reused = await start({ provider_id: providerId, scopes: ['openid'], strategy: 'REUSE', token_id: token });
    expect(reused.response.status).toBe(200);
    expect(reused.data!.token).toBe(token);

    const before = await server.hangar.services.oauth.bearerFor({ workspaceId, principal: admin, providerId });
    const again = await start({ provider_id: providerId, scopes: ['openid'], strategy: 'CREATE', token_id: token });
    await complete(again);
    const after = await server.hangar.services.oauth.bearerFor({ workspaceId, principal: admin, providerId });
    expect(after).not.toBe(before);
    expect(await oidc.introspect(after)).toMatchObject({ active: true });
  });
});
