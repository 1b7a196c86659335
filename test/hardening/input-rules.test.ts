// The findings of issue 14 about bad input, re-tried: each is now a clear 4xx naming the field,
// nothing is written, and the server logs no internal error.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let agentId: string;
let viewerKey: string;

beforeAll(async () => {
  server = await startTestServer();
  viewerKey = await server.createKey({ role: 'viewer' });
  const created = await call('POST', '/v1/deepagents/agents', { name: 'ok', runtime: { model: { model_id: 'scripted:echo' } } });
  expect(created.status).toBe(201);
  agentId = ((await created.json()) as { id: string }).id;
});
afterAll(async () => {
  await server?.close();
});

/** A request as any HTTP client would send it (the typed client cannot send most of these). */
function call(method: string, path: string, body?: unknown, key = server.adminKey): Promise<Response> {
  const text = typeof body === 'string' ? body : body === undefined ? undefined : JSON.stringify(body);
  return fetch(`${server.url}${path}`, {
    method,
    headers: { 'x-api-key': key, ...(text === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(text === undefined ? {} : { body: text }),
  });
}

/** JSON text of `{"a":{"a":…"leaf"…}}`, `depth` levels deep (built as text: JSON.stringify would overflow). */
function nested(depth: number): string {
  return `${'{"a":'.repeat(depth)}"leaf"${'}'.repeat(depth)}`;
}

/** A JSON body with `raw` JSON text inserted at `field`. */
function withRaw(field: string, raw: string): string {
  return `{"${field}":${raw}}`;
}

const NUL = 'a\u0000b';
const LONE = 'a\ud800b';

describe('strings and depth in bodies', () => {
  const cases: [string, string, string, unknown, RegExp][] = [
    ['NUL in an agent name', 'POST', '/v1/deepagents/agents', { name: NUL, runtime: { model: { model_id: 'scripted:echo' } } }, /body\.name: must not contain NUL/],
    ['lone surrogate in instructions', 'POST', '/v1/deepagents/agents', { name: 'x', instructions: LONE, runtime: { model: { model_id: 'scripted:echo' } } }, /body\.instructions: must be valid Unicode/],
    ['NUL in thread metadata', 'POST', '/v1/deepagents/threads', { metadata: { k: NUL } }, /body\.metadata\.k: must not contain NUL/],
    ['NUL in a metadata key', 'POST', '/v1/deepagents/threads', { metadata: { [NUL]: 1 } }, /field name must not contain NUL/],
    ['NUL in a tracing project name', 'POST', '/v1/tracing/projects', { name: NUL }, /body\.name: must not contain NUL/],
    ['NUL in an auth-session provider_id', 'POST', '/v1/deepagents/auth-sessions', { provider_id: NUL }, /body\.provider_id: must not contain NUL/],
    ['lone surrogate in OAuth scopes', 'POST', '/v2/auth/providers', { provider_id: 'p', name: 'p', client_id: 'c', authorization_url: 'https://idp.example.com/a', token_url: 'https://idp.example.com/t', scopes: [LONE] }, /scopes/],
    ['5,000 levels of metadata', 'POST', '/v1/deepagents/threads', withRaw('metadata', nested(5000)), /nested deeper than 64 levels/],
    ['5,000 levels of extras', 'PATCH', '/v1/deepagents/agents/{agent}', withRaw('extras', nested(5000)), /nested deeper than 64 levels/],
    ['100,000 levels of arrays', 'POST', '/v1/deepagents/threads', `{"metadata":{"k":${'['.repeat(100_000)}${']'.repeat(100_000)}}}`, /nested deeper/],
  ];
  it.each(cases)('%s → 422', async (_name, method, path, body, message) => {
    const res = await call(method, path.replace('{agent}', () => agentId), body);
    const text = await res.text();
    expect(res.status, text).toBe(422);
    expect(text).toMatch(message);
  });
});

describe('path and query parameters', () => {
  it('?name=%00 → 422 naming the query parameter', async () => {
    const res = await call('GET', '/v1/deepagents/agents?name=%00');
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({ code: 'validation_failed', errors: [{ loc: ['query', 'name'] }] });
  });
  it('a query parameter given twice where one value is expected → 422 saying so, not "received NaN"', async () => {
    for (const path of ['/v2/deployments?limit=1&limit=2', '/v1/deepagents/agents?name=a&name=b']) {
      const res = await call('GET', path);
      // Each surface in its own shape: `detail` on /v2, `errors` on /v1.
      const body = (await res.json()) as { errors?: { loc: string[]; msg: string }[]; detail?: { loc: string[]; msg: string }[] };
      const issue = (body.errors ?? body.detail)![0]!;
      expect(res.status, path).toBe(422);
      expect(issue.msg, path).toBe('was given 2 times; give it once');
      expect(issue.loc).toEqual(['query', path.includes('limit') ? 'limit' : 'name']);
    }
  });

  it('%00 in a path parameter → 422 naming it, on each surface in its own shape', async () => {
    const a = await call('GET', '/v2/auth/providers/a%00b');
    expect(a.status).toBe(422);
    expect(await a.json()).toEqual({ detail: [expect.objectContaining({ loc: ['path', 'provider_id'] })] });
    const b = await call('GET', '/v1/deepagents/agents/%00');
    expect(b.status).toBe(422);
    expect(await b.json()).toMatchObject({ errors: [{ loc: ['path', 'agent_id'] }] });
  });
});

describe('file names', () => {
  it.each([
    ['a newline', 'notes\nmore.md', /U\+000A/],
    ['a right-to-left override', 'invoice\u202Egpj.md', /U\+202E/],
    ['a lone space', ' ', /leading or trailing spaces/],
  ])('a file name with %s → 422', async (_what, name, message) => {
    const res = await call('PATCH', `/v1/deepagents/agents/${agentId}`, { files: { [name]: { content: 'x' } } });
    expect(res.status).toBe(422);
    expect(await res.text()).toMatch(message);
  });
});

describe('authorization before validation', () => {
  it("a viewer's invalid body gets 403, not 422", async () => {
    const res = await call('POST', '/v1/deepagents/agents', { name: 42 }, viewerKey);
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ error: 'Forbidden' });
    const deep = await call('PATCH', `/v1/deepagents/agents/${agentId}`, withRaw('extras', nested(5000)), viewerKey);
    expect(deep.status).toBe(403);
  });
  it("a member's request to an admin-only route gets 403 before its body or parameters are validated", async () => {
    const memberKey = await server.createKey({ role: 'member' });
    for (const body of [{ role: 'owner' }, '{"bogus": [', withRaw('role', nested(5000))]) {
      const res = await call('POST', '/v1/api-keys', body, memberKey);
      expect(res.status).toBe(403);
      expect(await res.json()).toMatchObject({ error: 'Forbidden' });
    }
    expect((await call('DELETE', '/v1/api-keys/not-a-uuid', undefined, memberKey)).status).toBe(403);
    expect((await call('POST', '/v1/deepagents/webhooks/secret/rotate', '{"bogus": [', memberKey)).status).toBe(403);
    // An admin still learns what is wrong with the body.
    expect((await call('POST', '/v1/api-keys', { role: 'owner' })).status).toBe(422);
  });
  it("a viewer's request to a member-only read gets 403 before its query is validated", async () => {
    const res = await call('GET', '/v1/deepagents/mcp-servers/not-a-uuid/tools?force_refresh=maybe', undefined, viewerKey);
    expect(res.status).toBe(403);
  });
  it('a viewer may still search threads', async () => {
    const res = await call('POST', '/v1/deepagents/threads/search', {}, viewerKey);
    expect(res.status).toBe(200);
  });
  it('a viewer may search memories and list their namespaces (reads sent as POST), and may not write one', async () => {
    expect((await call('POST', '/v1/deepagents/store/items/search', { namespace_prefix: ['x', 'memories'] }, viewerKey)).status).toBe(200);
    expect((await call('POST', '/v1/deepagents/store/namespaces', { prefix: ['x', 'memories'] }, viewerKey)).status).toBe(200);
    expect((await call('PUT', '/v1/deepagents/store/items', { namespace: ['x', 'memories'], key: '/a.md', value: { content: ['a'] } }, viewerKey)).status).toBe(403);
  });
});

describe('git protocol errors', () => {
  it('a garbage upload-pack body → 400 with a text message git shows', async () => {
    for (const body of ['garbage!', '0032want nothex\n0000', '00ff']) {
      const res = await fetch(`${server.url}/v1/deepagents/agents/${agentId}.git/git-upload-pack`, {
        method: 'POST',
        headers: { 'x-api-key': server.adminKey, 'content-type': 'application/x-git-upload-pack-request' },
        body,
      });
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(await res.text()).toMatch(/^error: bad upload-pack request: /);
    }
  });
});

describe('afterwards', () => {
  it('nothing was logged as an internal error and the agent is unchanged', async () => {
    expect(server.logs()).not.toMatch(/unhandled error/);
    const res = await call('GET', `/v1/deepagents/agents/${agentId}`);
    expect(((await res.json()) as { name: string }).name).toBe('ok');
  });
});

describe('an empty body sent as application/json', () => {
  // Clients that set `Content-Type: application/json` on every request (a shared header, a curl alias)
  // send it with an empty body where no body is needed: that is no body, not malformed JSON.
  it('is no body: operations whose body is optional run, and a required one names its missing fields', async () => {
    const clone = await call('POST', `/v1/deepagents/agents/${agentId}/clone`, '');
    expect(clone.status).toBe(201);
    const count = await call('POST', '/v1/deepagents/threads/count', '');
    expect(count.status).toBe(200);
    const search = await call('POST', '/v1/deepagents/threads/search', '');
    expect(search.status).toBe(200);
    const create = await call('POST', '/v1/deepagents/agents', '');
    expect(create.status).toBe(422);
    expect(await create.json()).toMatchObject({ code: 'validation_failed', errors: [{ loc: ['body', 'name'] }] });
    // Malformed JSON is still malformed.
    const broken = await call('POST', '/v1/deepagents/threads/count', '{');
    expect(broken.status).toBe(400);
  });
});
