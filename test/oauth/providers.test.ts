// OAuth providers end to end: create (200, no secret back), list, get, patch, delete, 409 on a taken
// provider_id, tool servers that must name an existing provider, workspace isolation, bad input.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allRowsAsText, countRows } from '../support/db-count.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

const SECRET = 'cs-4b1d-7e9a-super-secret-value';
const base = {
  provider_id: 'tools',
  name: 'Tools login',
  client_id: 'hangar-client',
  auth_url: 'https://auth.example.com/authorize',
  token_url: 'https://auth.example.com/token',
};

describe('OAuth providers', () => {
  it('creates with defaults, never returns the secret, and keeps it encrypted', async () => {
    const created = await server.client.POST('/v2/auth/providers', { body: { ...base, client_secret: SECRET } });
    expect(created.response.status).toBe(200);
    const p = created.data!;
    expect(p).toMatchObject({
      provider_id: 'tools',
      name: 'Tools login',
      client_id: 'hangar-client',
      auth_url: base.auth_url,
      token_url: base.token_url,
      uses_pkce: false,
      code_challenge_method: 'S256',
      provider_type: null,
      mcp_server_url: null,
      token_endpoint_auth_method: 'client_secret_post',
      is_dynamic_client: false,
    });
    expect(Object.keys(p).sort()).toEqual(
      ['auth_url', 'client_id', 'code_challenge_method', 'created_at', 'id', 'is_dynamic_client', 'mcp_server_url', 'name', 'organization_id', 'provider_id', 'provider_type', 'scopes', 'token_endpoint_auth_method', 'token_url', 'updated_at', 'uses_pkce'],
    );
    const raw = await fetch(`${server.url}/v2/auth/providers/tools`, { headers: { 'x-api-key': server.adminKey } });
    expect(await raw.text()).not.toContain(SECRET);
    expect(await allRowsAsText(server.databaseUrl)).not.toContain(SECRET);
    expect(server.logs()).not.toContain(SECRET);
  });

  it('rejects a taken provider_id with 409 and writes nothing', async () => {
    const before = await countRows(server.databaseUrl, 'oauth_providers');
    const again = await server.client.POST('/v2/auth/providers', { body: { ...base, name: 'Other' } });
    expect(again.response.status).toBe(409);
    expect(again.error).toEqual({ detail: 'an OAuth provider with provider_id "tools" already exists in this workspace' });
    expect(await countRows(server.databaseUrl, 'oauth_providers')).toBe(before);
  });

  it('lists with offset paging, gets, patches and deletes', async () => {
    for (const id of ['p-a', 'p-b', 'p-c']) {
      const r = await server.client.POST('/v2/auth/providers', { body: { ...base, provider_id: id, provider_type: 'vcshost', uses_pkce: true, token_endpoint_auth_method: 'none' } });
      expect(r.response.status).toBe(200);
    }
    const first = await server.client.GET('/v2/auth/providers', { params: { query: { limit: 2 } } });
    expect(first.data!.resources.map((p) => p.provider_id)).toEqual(['tools', 'p-a']);
    expect(first.data!.offset).toBe(2);
    const second = await server.client.GET('/v2/auth/providers', { params: { query: { limit: 2, offset: 2 } } });
    expect(second.data!.resources.map((p) => p.provider_id)).toEqual(['p-b', 'p-c']);
    const third = await server.client.GET('/v2/auth/providers', { params: { query: { limit: 2, offset: 4 } } });
    expect(third.data).toEqual({ resources: [], offset: 4 });

    const patched = await server.client.PATCH('/v2/auth/providers/{provider_id}', {
      params: { path: { provider_id: 'p-a' } },
      body: { name: 'Renamed', token_endpoint_auth_method: 'client_secret_basic', client_secret: 'new-secret' },
    });
    expect(patched.response.status).toBe(200);
    expect(patched.data).toMatchObject({ provider_id: 'p-a', name: 'Renamed', token_endpoint_auth_method: 'client_secret_basic', uses_pkce: true, provider_type: 'vcshost' });
    expect(JSON.stringify(patched.data)).not.toContain('new-secret');

    const renamed = await server.client.PATCH('/v2/auth/providers/{provider_id}', { params: { path: { provider_id: 'p-b' } }, body: { provider_id: 'p-c' } });
    expect(renamed.response.status).toBe(409);

    const del = await server.client.DELETE('/v2/auth/providers/{provider_id}', { params: { path: { provider_id: 'p-c' } } });
    expect(del.response.status).toBe(204);
    const gone = await server.client.GET('/v2/auth/providers/{provider_id}', { params: { path: { provider_id: 'p-c' } } });
    expect(gone.response.status).toBe(404);
    expect(gone.error).toEqual({ detail: 'no OAuth provider "p-c" in this workspace' });
    const delAgain = await server.client.DELETE('/v2/auth/providers/{provider_id}', { params: { path: { provider_id: 'p-c' } } });
    expect(delAgain.response.status).toBe(404);
  });

  it('tool servers with auth_type oauth must name an existing provider of the workspace', async () => {
    const provider = await server.client.GET('/v2/auth/providers/{provider_id}', { params: { path: { provider_id: 'tools' } } });
    const id = provider.data!.id;
    const ok = await server.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'OAuth tools', url: 'https://oauth-tools.example.com/mcp', auth_type: 'oauth', oauth_provider_id: id } });
    expect(ok.response.status).toBe(201);
    expect(ok.data).toMatchObject({ auth_type: 'oauth', oauth_provider_id: id });
    const linked = await server.client.GET('/v2/auth/providers/{provider_id}', { params: { path: { provider_id: 'tools' } } });
    expect(linked.data!.mcp_server_url).toBe('https://oauth-tools.example.com/mcp');

    const before = await countRows(server.databaseUrl, 'mcp_servers');
    const missing = await server.client.POST('/v1/deepagents/mcp-servers', {
      body: { name: 'Nope', url: 'https://nope.example.com/mcp', auth_type: 'oauth', oauth_provider_id: '00000000-0000-4000-8000-000000000000' },
    });
    expect(missing.response.status).toBe(422);
    expect(missing.error).toMatchObject({ code: 'validation_failed', errors: [{ loc: ['body', 'oauth_provider_id'] }] });

    const other = await server.createWorkspace('elsewhere');
    const foreign = await other.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'Theirs', url: 'https://theirs.example.com/mcp', auth_type: 'oauth', oauth_provider_id: id } });
    expect(foreign.response.status).toBe(422);
    expect(await countRows(server.databaseUrl, 'mcp_servers')).toBe(before);

    // Another workspace sees none of our providers and may reuse the provider_id.
    expect((await other.client.GET('/v2/auth/providers/{provider_id}', { params: { path: { provider_id: 'tools' } } })).response.status).toBe(404);
    expect((await other.client.GET('/v2/auth/providers')).data!.resources).toEqual([]);
    expect((await other.client.PATCH('/v2/auth/providers/{provider_id}', { params: { path: { provider_id: 'tools' } }, body: { name: 'x' } })).response.status).toBe(404);
    expect((await other.client.DELETE('/v2/auth/providers/{provider_id}', { params: { path: { provider_id: 'tools' } } })).response.status).toBe(404);
    expect((await other.client.POST('/v2/auth/providers', { body: base })).response.status).toBe(200);
  });

  it('a PATCH of a tool server checks auth_type and oauth_provider_id as they will be stored', async () => {
    const id = (await server.client.GET('/v2/auth/providers/{provider_id}', { params: { path: { provider_id: 'tools' } } })).data!.id;
    const created = await server.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'Switching', url: 'https://switching.example.com/mcp', auth_type: 'oauth', oauth_provider_id: id } });
    expect(created.response.status).toBe(201);
    const path = { mcp_server_id: created.data!.id };

    // Removing the provider of an OAuth server would leave a server that create refuses: 422, nothing changed.
    const orphaned = await server.client.PATCH('/v1/deepagents/mcp-servers/{mcp_server_id}', { params: { path }, body: { oauth_provider_id: null } });
    expect(orphaned.response.status).toBe(422);
    expect(orphaned.error).toMatchObject({ code: 'validation_failed', errors: [{ loc: ['body', 'oauth_provider_id'] }] });
    expect((await server.client.GET('/v1/deepagents/mcp-servers/{mcp_server_id}', { params: { path } })).data).toMatchObject({ auth_type: 'oauth', oauth_provider_id: id });

    // Back to headers, then to OAuth again with the provider it still names.
    const headers = await server.client.PATCH('/v1/deepagents/mcp-servers/{mcp_server_id}', { params: { path }, body: { auth_type: 'headers' } });
    expect(headers.data).toMatchObject({ auth_type: 'headers', oauth_provider_id: id });
    expect(headers.data).not.toHaveProperty('oauth_mode');
    const oauth = await server.client.PATCH('/v1/deepagents/mcp-servers/{mcp_server_id}', { params: { path }, body: { auth_type: 'oauth' } });
    expect(oauth.response.status).toBe(200);
    expect(oauth.data).toMatchObject({ auth_type: 'oauth', oauth_provider_id: id, oauth_mode: 'legacy_shared_provider' });

    // Both halves at once still work, and so does clearing the provider of a headers server.
    expect((await server.client.PATCH('/v1/deepagents/mcp-servers/{mcp_server_id}', { params: { path }, body: { auth_type: 'headers', oauth_provider_id: null } })).data).toMatchObject({
      auth_type: 'headers',
      oauth_provider_id: null,
    });
    const noProvider = await server.client.PATCH('/v1/deepagents/mcp-servers/{mcp_server_id}', { params: { path }, body: { auth_type: 'oauth' } });
    expect(noProvider.response.status).toBe(422);
  });

  it('a provider an OAuth tool server uses cannot be deleted from under it; a headers server only loses the link', async () => {
    const created = await server.client.POST('/v2/auth/providers', { body: { ...base, provider_id: 'in-use' } });
    const id = created.data!.id;
    const oauthServer = await server.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'Uses it', url: 'https://uses-it.example.com/mcp', auth_type: 'oauth', oauth_provider_id: id } });
    const headersServer = await server.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'Named it', url: 'https://named-it.example.com/mcp', auth_type: 'headers', oauth_provider_id: id } });
    expect(headersServer.data).toMatchObject({ auth_type: 'headers', oauth_provider_id: id });

    const refused = await server.client.DELETE('/v2/auth/providers/{provider_id}', { params: { path: { provider_id: 'in-use' } } });
    expect(refused.response.status).toBe(409);
    expect(JSON.stringify(refused.error)).toContain(oauthServer.data!.id);
    // Nothing changed: the provider and both links are still there.
    expect((await server.client.GET('/v2/auth/providers/{provider_id}', { params: { path: { provider_id: 'in-use' } } })).response.status).toBe(200);
    const still = await server.client.GET('/v1/deepagents/mcp-servers/{mcp_server_id}', { params: { path: { mcp_server_id: headersServer.data!.id } } });
    expect(still.data!.oauth_provider_id).toBe(id);

    // Once no OAuth server uses it, it goes, and the headers server no longer names it.
    await server.client.PATCH('/v1/deepagents/mcp-servers/{mcp_server_id}', { params: { path: { mcp_server_id: oauthServer.data!.id } }, body: { auth_type: 'headers' } });
    const deleted = await server.client.DELETE('/v2/auth/providers/{provider_id}', { params: { path: { provider_id: 'in-use' } } });
    expect(deleted.response.status).toBe(204);
    for (const s of [oauthServer.data!, headersServer.data!]) {
      const after = await server.client.GET('/v1/deepagents/mcp-servers/{mcp_server_id}', { params: { path: { mcp_server_id: s.id } } });
      expect(after.data).toMatchObject({ auth_type: 'headers', oauth_provider_id: null });
    }
  });

  it('a viewer may read but not write', async () => {
    const viewer = server.clientFor(await server.createKey({ role: 'viewer' }));
    expect((await viewer.GET('/v2/auth/providers')).response.status).toBe(200);
    const denied = await viewer.POST('/v2/auth/providers', { body: { ...base, provider_id: 'viewer-made' } });
    expect(denied.response.status).toBe(403);
    expect(denied.error).toEqual({ detail: 'a viewer key cannot change resources' });
  });

  it('a viewer sees a linked tool server URL with its query values redacted, as on the tool server itself', async () => {
    const created = await server.client.POST('/v2/auth/providers', { body: { ...base, provider_id: 'keyed-url' } });
    const url = 'https://keyed.example.com/mcp?tenant_key=tk-5e2a9c71d0';
    expect((await server.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'Keyed', url, auth_type: 'oauth', oauth_provider_id: created.data!.id } })).response.status).toBe(201);
    const viewer = server.clientFor(await server.createKey({ role: 'viewer' }));
    const params = { params: { path: { provider_id: 'keyed-url' } } };
    expect((await server.client.GET('/v2/auth/providers/{provider_id}', params)).data!.mcp_server_url).toBe(url);
    expect((await viewer.GET('/v2/auth/providers/{provider_id}', params)).data!.mcp_server_url).toBe('https://keyed.example.com/mcp?tenant_key=[redacted]');
    expect(JSON.stringify((await viewer.GET('/v2/auth/providers')).data)).not.toContain('tk-5e2a9c71d0');
  });
});

describe('bad input gets a clear 4xx in the control-plane format and writes nothing', () => {
  const json = JSON.stringify;
  const cases: { name: string; method?: string; path?: string; body?: string; contentType?: string; status: number; loc?: (string | number)[]; detail?: string }[] = [
    { name: 'malformed JSON', body: '{"provider_id":', status: 400, detail: 'the request body is not valid JSON' },
    { name: 'not JSON', body: 'a=b', contentType: 'text/plain', status: 415 },
    { name: 'missing provider_id', body: json({ ...base, provider_id: undefined }), status: 422, loc: ['body', 'provider_id'] },
    { name: 'missing name', body: json({ ...base, name: undefined }), status: 422, loc: ['body', 'name'] },
    { name: 'missing client_id', body: json({ ...base, client_id: undefined }), status: 422, loc: ['body', 'client_id'] },
    { name: 'missing auth_url', body: json({ ...base, auth_url: undefined }), status: 422, loc: ['body', 'auth_url'] },
    { name: 'missing token_url', body: json({ ...base, token_url: undefined }), status: 422, loc: ['body', 'token_url'] },
    { name: 'blank provider_id', body: json({ ...base, provider_id: ' ' }), status: 422, loc: ['body', 'provider_id'] },
    { name: 'provider_id with a slash', body: json({ ...base, provider_id: 'a/b' }), status: 422, loc: ['body', 'provider_id'] },
    { name: 'ftp auth_url', body: json({ ...base, auth_url: 'ftp://auth.example.com' }), status: 422, loc: ['body', 'auth_url'] },
    { name: 'relative token_url', body: json({ ...base, token_url: '/token' }), status: 422, loc: ['body', 'token_url'] },
    { name: 'javascript auth_url', body: json({ ...base, auth_url: 'javascript:alert(1)' }), status: 422, loc: ['body', 'auth_url'] },
    { name: 'uses_pkce not boolean', body: json({ ...base, uses_pkce: 'yes' }), status: 422, loc: ['body', 'uses_pkce'] },
    { name: 'unknown provider_type', body: json({ ...base, provider_type: 'acme' }), status: 422, loc: ['body', 'provider_type'] },
    { name: 'unknown token_endpoint_auth_method', body: json({ ...base, token_endpoint_auth_method: 'private_key_jwt' }), status: 422, loc: ['body', 'token_endpoint_auth_method'] },
    { name: 'unknown code_challenge_method', body: json({ ...base, code_challenge_method: 'S512' }), status: 422, loc: ['body', 'code_challenge_method'] },
    { name: 'client_secret a number', body: json({ ...base, client_secret: 5 }), status: 422, loc: ['body', 'client_secret'] },
    { name: 'body is an array', body: '[]', status: 422 },
    { name: 'PATCH with ftp token_url', method: 'PATCH', path: '/v2/auth/providers/tools', body: json({ token_url: 'ftp://x.example.com' }), status: 422, loc: ['body', 'token_url'] },
    { name: 'PATCH of an unknown provider', method: 'PATCH', path: '/v2/auth/providers/nobody', body: json({ name: 'x' }), status: 404, detail: 'no OAuth provider "nobody" in this workspace' },
    { name: 'list with limit 0', method: 'GET', path: '/v2/auth/providers?limit=0', status: 422, loc: ['query', 'limit'] },
    { name: 'list with negative offset', method: 'GET', path: '/v2/auth/providers?offset=-1', status: 422, loc: ['query', 'offset'] },
  ];
  it.each(cases)('$name → $status', async ({ method = 'POST', path = '/v2/auth/providers', body, contentType = 'application/json', status, loc, detail }) => {
    const before = await allRowsAsText(server.databaseUrl);
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: { 'x-api-key': server.adminKey, ...(body === undefined ? {} : { 'content-type': contentType }) },
      ...(body === undefined ? {} : { body }),
    });
    expect(res.status).toBe(status);
    const error = (await res.json()) as { detail: string | { loc: unknown[]; msg: string; type: string }[] };
    expect(Object.keys(error)).toEqual(['detail']);
    if (status === 422) {
      expect(Array.isArray(error.detail)).toBe(true);
      if (loc) expect((error.detail as { loc: unknown[] }[]).map((d) => d.loc)).toContainEqual(loc);
    } else {
      expect(typeof error.detail).toBe('string');
      if (detail) expect(error.detail).toBe(detail);
    }
    expect(await allRowsAsText(server.databaseUrl)).toBe(before);
  });

  it('without an API key: 401 {detail}', async () => {
    const res = await fetch(`${server.url}/v2/auth/providers`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(base) });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ detail: 'send an API key in the X-Api-Key header' });
  });
});
