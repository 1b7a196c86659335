// Tool servers end to end: CRUD, header visibility per role, bad input, workspace isolation, secrets at rest.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

const SECRET = 'Bearer sk-live-4f8a1c2e9b7d-very-secret';

async function countServers(): Promise<number> {
  const client = new pg.Client({ connectionString: server.databaseUrl });
  await client.connect();
  try {
    return Number((await client.query('SELECT count(*) FROM mcp_servers')).rows[0].count);
  } finally {
    await client.end();
  }
}

describe('tool servers', () => {
  it('create, get, list, patch headers wholesale, delete idempotently', async () => {
    const created = await server.client.POST('/v1/deepagents/mcp-servers', {
      body: { name: 'Docs', url: 'https://docs.example.com/mcp///', headers: [{ key: 'Authorization', value: SECRET }, { key: 'X-Team', value: 'a' }] },
    });
    expect(created.response.status).toBe(201);
    const s = created.data!;
    expect(s.url).toBe('https://docs.example.com/mcp');
    expect(s.headers).toEqual([{ key: 'Authorization', value: SECRET }, { key: 'X-Team', value: 'a' }]);
    expect(s.auth_type).toBe('headers');
    expect(s.can_invoke).toBe(true);

    const got = await server.client.GET('/v1/deepagents/mcp-servers/{mcp_server_id}', { params: { path: { mcp_server_id: s.id } } });
    expect(got.data).toEqual(s);

    const listed = await server.client.GET('/v1/deepagents/mcp-servers');
    expect(Array.isArray(listed.data)).toBe(true);
    expect(listed.data!.map((x) => x.id)).toContain(s.id);

    const patched = await server.client.PATCH('/v1/deepagents/mcp-servers/{mcp_server_id}', {
      params: { path: { mcp_server_id: s.id } },
      body: { headers: [{ key: 'X-Api-Key', value: 'k2' }] },
    });
    expect(patched.response.status).toBe(200);
    expect(patched.data!.headers).toEqual([{ key: 'X-Api-Key', value: 'k2' }]);
    expect(patched.data!.name).toBe('Docs');

    const del = await server.client.DELETE('/v1/deepagents/mcp-servers/{mcp_server_id}', { params: { path: { mcp_server_id: s.id } } });
    expect(del.response.status).toBe(204);
    // Idempotent, as the reference's operation describes it: deleting it again is a 204 too.
    const again = await server.client.DELETE('/v1/deepagents/mcp-servers/{mcp_server_id}', { params: { path: { mcp_server_id: s.id } } });
    expect(again.response.status).toBe(204);
    const gone = await server.client.GET('/v1/deepagents/mcp-servers/{mcp_server_id}', { params: { path: { mcp_server_id: s.id } } });
    expect(gone.response.status).toBe(404);
    expect(gone.error).toMatchObject({ code: 'mcp_server_not_found', status: 404, type: 'not_found' });
  });

  it('registers a URL once per workspace (409), trailing slashes ignored', async () => {
    const first = await server.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'A', url: 'http://once.example.com/mcp' } });
    expect(first.response.status).toBe(201);
    const again = await server.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'B', url: 'http://once.example.com/mcp/' } });
    expect(again.response.status).toBe(409);
    expect(again.error).toMatchObject({ code: 'mcp_server_url_taken' });
  });

  it('hides headers from a viewer, who also cannot write', async () => {
    const created = await server.client.POST('/v1/deepagents/mcp-servers', {
      body: { name: 'Hidden', url: 'https://hidden.example.com/mcp', headers: [{ key: 'Authorization', value: SECRET }] },
    });
    const viewer = server.clientFor(await server.createKey({ role: 'viewer' }));
    const got = await viewer.GET('/v1/deepagents/mcp-servers/{mcp_server_id}', { params: { path: { mcp_server_id: created.data!.id } } });
    expect(got.response.status).toBe(200);
    expect(got.data).not.toHaveProperty('headers');
    expect(got.data!.can_invoke).toBe(false);
    const list = await viewer.GET('/v1/deepagents/mcp-servers');
    expect(JSON.stringify(list.data)).not.toContain(SECRET);
    expect(list.data!.every((x) => x.headers === undefined)).toBe(true);

    const write = await viewer.POST('/v1/deepagents/mcp-servers', { body: { name: 'x', url: 'https://viewer.example.com' } });
    expect(write.response.status).toBe(403);
    expect(write.error).toMatchObject({ error: 'Forbidden' });
    const del = await viewer.DELETE('/v1/deepagents/mcp-servers/{mcp_server_id}', { params: { path: { mcp_server_id: created.data!.id } } });
    expect(del.response.status).toBe(403);

    const member = server.clientFor(await server.createKey({ role: 'member' }));
    const asMember = await member.GET('/v1/deepagents/mcp-servers/{mcp_server_id}', { params: { path: { mcp_server_id: created.data!.id } } });
    expect(asMember.data!.headers).toEqual([{ key: 'Authorization', value: SECRET }]);
  });

  describe('bad input gets a clear 4xx and writes nothing', () => {
    const post = (body: string, contentType = 'application/json') =>
      fetch(`${server.url}/v1/deepagents/mcp-servers`, {
        method: 'POST',
        headers: { 'x-api-key': server.adminKey, 'content-type': contentType },
        body,
      });
    const cases: { name: string; body: string; contentType?: string; status: number; code: string; loc?: (string | number)[] }[] = [
      { name: 'malformed JSON', body: '{"name": "x",', status: 400, code: 'invalid_json' },
      { name: 'not JSON', body: 'name=x', contentType: 'text/plain', status: 415, code: 'unsupported_media_type' },
      { name: 'missing url', body: '{"name":"x"}', status: 422, code: 'validation_failed', loc: ['body', 'url'] },
      { name: 'missing name', body: '{"url":"https://a.example.com"}', status: 422, code: 'validation_failed', loc: ['body', 'name'] },
      { name: 'blank name', body: '{"name":"  ","url":"https://a.example.com"}', status: 422, code: 'validation_failed', loc: ['body', 'name'] },
      { name: 'url of wrong type', body: '{"name":"x","url":42}', status: 422, code: 'validation_failed', loc: ['body', 'url'] },
      { name: 'ftp url', body: '{"name":"x","url":"ftp://a.example.com"}', status: 422, code: 'validation_failed', loc: ['body', 'url'] },
      { name: 'relative url', body: '{"name":"x","url":"/mcp"}', status: 422, code: 'validation_failed', loc: ['body', 'url'] },
      { name: 'headers not an array', body: '{"name":"x","url":"https://a.example.com","headers":{"a":"b"}}', status: 422, code: 'validation_failed', loc: ['body', 'headers'] },
      { name: 'header without value', body: '{"name":"x","url":"https://a.example.com","headers":[{"key":"A"}]}', status: 422, code: 'validation_failed', loc: ['body', 'headers', 0, 'value'] },
      { name: 'invalid header name', body: '{"name":"x","url":"https://a.example.com","headers":[{"key":"Bad Name","value":"v"}]}', status: 422, code: 'validation_failed', loc: ['body', 'headers', 0, 'key'] },
      { name: 'header value with newline', body: '{"name":"x","url":"https://a.example.com","headers":[{"key":"A","value":"v\\r\\nX: y"}]}', status: 422, code: 'validation_failed', loc: ['body', 'headers', 0, 'value'] },
      { name: 'duplicate header', body: '{"name":"x","url":"https://a.example.com","headers":[{"key":"A","value":"1"},{"key":"a","value":"2"}]}', status: 422, code: 'validation_failed', loc: ['body', 'headers', 1, 'key'] },
      { name: 'unknown auth_type', body: '{"name":"x","url":"https://a.example.com","auth_type":"magic"}', status: 422, code: 'validation_failed', loc: ['body', 'auth_type'] },
      { name: 'oauth without provider', body: '{"name":"x","url":"https://a.example.com","auth_type":"oauth"}', status: 422, code: 'validation_failed', loc: ['body', 'oauth_provider_id'] },
      { name: 'body is an array', body: '[]', status: 422, code: 'validation_failed' },
    ];
    it.each(cases)('$name → $status $code', async ({ body, contentType, status, code, loc }) => {
      const before = await countServers();
      const res = await post(body, contentType);
      expect(res.status).toBe(status);
      const error = (await res.json()) as { code: string; detail: string; status: number; errors?: { loc: unknown[] }[] };
      expect(error.code).toBe(code);
      expect(error.status).toBe(status);
      expect(error.detail.length).toBeGreaterThan(5);
      expect(JSON.stringify(error)).not.toMatch(/at .*\.ts:\d+/); // no stack traces
      if (loc) expect(error.errors?.map((e) => e.loc)).toContainEqual(loc);
      expect(await countServers()).toBe(before);
    });

    it('a body over the configured limit is 413', async () => {
      const small = await startTestServer({ env: { HANGAR_BODY_LIMIT_BYTES: '1024' } });
      try {
        const res = await fetch(`${small.url}/v1/deepagents/mcp-servers`, {
          method: 'POST',
          headers: { 'x-api-key': small.adminKey, 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'x', url: 'https://a.example.com', headers: [{ key: 'A', value: 'v'.repeat(5000) }] }),
        });
        expect(res.status).toBe(413);
        expect(await res.json()).toMatchObject({ code: 'payload_too_large', status: 413 });
        const list = await small.client.GET('/v1/deepagents/mcp-servers');
        expect(list.data).toEqual([]);
      } finally {
        await small.close();
      }
    });

    it('a PATCH with bad headers leaves the stored headers as they were', async () => {
      const created = await server.client.POST('/v1/deepagents/mcp-servers', {
        body: { name: 'Keep', url: 'https://keep.example.com', headers: [{ key: 'A', value: '1' }] },
      });
      const id = created.data!.id;
      const res = await fetch(`${server.url}/v1/deepagents/mcp-servers/${id}`, {
        method: 'PATCH',
        headers: { 'x-api-key': server.adminKey, 'content-type': 'application/json' },
        body: JSON.stringify({ headers: [{ key: 'B', value: '2' }, { key: 'b', value: '3' }] }),
      });
      expect(res.status).toBe(422);
      const got = await server.client.GET('/v1/deepagents/mcp-servers/{mcp_server_id}', { params: { path: { mcp_server_id: id } } });
      expect(got.data!.headers).toEqual([{ key: 'A', value: '1' }]);
    });

    it('a bad UUID in the path is 422 naming the parameter', async () => {
      const res = await fetch(`${server.url}/v1/deepagents/mcp-servers/not-a-uuid`, { headers: { 'x-api-key': server.adminKey } });
      expect(res.status).toBe(422);
      expect(await res.json()).toMatchObject({ code: 'validation_failed', errors: [{ loc: ['path', 'mcp_server_id'] }] });
    });
  });

  it('isolates workspaces: another workspace’s tool server is a 404 for read, update and delete', async () => {
    const mine = await server.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'Mine', url: 'https://mine.example.com' } });
    const other = await server.createWorkspace('other');
    const id = mine.data!.id;
    const read = await other.client.GET('/v1/deepagents/mcp-servers/{mcp_server_id}', { params: { path: { mcp_server_id: id } } });
    expect(read.response.status).toBe(404);
    const update = await other.client.PATCH('/v1/deepagents/mcp-servers/{mcp_server_id}', {
      params: { path: { mcp_server_id: id } },
      body: { headers: [{ key: 'A', value: 'stolen' }] },
    });
    expect(update.response.status).toBe(404);
    const del = await other.client.DELETE('/v1/deepagents/mcp-servers/{mcp_server_id}', { params: { path: { mcp_server_id: id } } });
    expect(del.response.status).toBe(204); // not theirs: as if it did not exist (deletes are idempotent), and nothing is deleted
    const list = await other.client.GET('/v1/deepagents/mcp-servers');
    expect(list.data).toEqual([]);
    // The same URL may be registered in the other workspace.
    const sameUrl = await other.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'Theirs', url: 'https://mine.example.com' } });
    expect(sameUrl.response.status).toBe(201);
    const stillMine = await server.client.GET('/v1/deepagents/mcp-servers/{mcp_server_id}', { params: { path: { mcp_server_id: id } } });
    expect(stillMine.data!.name).toBe('Mine');
    expect(stillMine.data!.headers).toEqual([]);
  });

  it('never stores or logs a header value in clear', async () => {
    const marker = `Bearer marker-${Date.now()}-d41d8cd98f00b204`;
    const created = await server.client.POST('/v1/deepagents/mcp-servers', {
      body: { name: 'Secretive', url: 'https://secret.example.com', headers: [{ key: 'Authorization', value: marker }] },
    });
    expect(created.response.status).toBe(201);
    // Read every table raw, as text.
    const client = new pg.Client({ connectionString: server.databaseUrl });
    await client.connect();
    try {
      const tables = await client.query<{ table_name: string }>(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'",
      );
      expect(tables.rows.length).toBeGreaterThan(2);
      for (const { table_name } of tables.rows) {
        const rows = await client.query(`SELECT t::text AS row FROM "${table_name}" t`);
        for (const { row } of rows.rows as { row: string }[]) expect(row).not.toContain('marker-');
      }
    } finally {
      await client.end();
    }
    expect(server.logs().length).toBeGreaterThan(0);
    expect(server.logs()).not.toContain('marker-');
  });
});
