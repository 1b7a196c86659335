// The outbound findings of issue 14, re-tried through the API: every user-supplied URL that would make
// Hangar call metadata, link-local, loopback or private addresses (or a non-http scheme) is a 422
// naming the field and its reason, in each surface's shape. The connect-time half is in
// src/net/egress.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

let laptop: TestServer; // bound to 127.0.0.1, HANGAR_EGRESS_ALLOW unset: loopback and private allowed
let strict: TestServer; // HANGAR_EGRESS_ALLOW=none: public destinations only

beforeAll(async () => {
  [laptop, strict] = await Promise.all([startTestServer(), startTestServer({ env: { HANGAR_EGRESS_ALLOW: 'none' } })]);
});
afterAll(async () => {
  await Promise.all([laptop?.close(), strict?.close()]);
});

function post(server: TestServer, path: string, body: unknown): Promise<Response> {
  return fetch(`${server.url}${path}`, { method: 'POST', headers: { 'x-api-key': server.adminKey, 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

const oauth = (token_url: string) => ({ provider_id: `p${Math.random().toString(36).slice(2, 8)}`, name: 'p', client_id: 'c', auth_url: 'https://idp.example.com/authorize', token_url });
const targets: [string, string, (url: string) => unknown, (string | number)[]][] = [
  ['a tool server', '/v1/deepagents/mcp-servers', (url) => ({ name: 't', url }), ['body', 'url']],
  ['an OAuth token endpoint', '/v2/auth/providers', oauth, ['body', 'token_url']],
  ['a code host', '/v1/integrations/forge/vcshost', (url) => ({ kind: 'github', base_url: url, token: 't' }), ['body', 'base_url']],
  ['a deployment repository', '/v2/deployments', (url) => ({ name: `d${Math.random().toString(36).slice(2, 8)}`, source: 'vcshost', source_config: { repo_url: `${url}/app.git` }, source_revision_config: { repo_ref: 'main' }, secrets: [] }), ['body', 'source_config', 'repo_url']],
];

function locOf(body: Record<string, unknown>): unknown {
  const issues = (Array.isArray(body.detail) ? body.detail : body.errors) as { loc: unknown; msg: string }[];
  return issues[0];
}

describe('always refused, even on a laptop', () => {
  for (const [what, path, body, loc] of targets) {
    it.each(['http://169.254.169.254', 'http://[::ffff:169.254.169.254]', 'http://metadata.google.internal', 'http://[fd00:ec2::254]'])(`${what} at %s → 422`, async (url) => {
      const res = await post(laptop, path, body(url));
      expect(res.status).toBe(422);
      expect(locOf((await res.json()) as Record<string, unknown>)).toMatchObject({ loc, msg: expect.stringMatching(/never allowed/) });
    });
  }
  it.each(['file:///etc/passwd', 'gopher://example.com/', 'javascript:alert(1)'])('a model base_url %s → 422', async (url) => {
    const res = await post(laptop, '/v1/deepagents/model-configs', { name: `m${Math.random().toString(36).slice(2, 8)}`, model_id: 'openai:gpt-4o', parameters: { base_url: url } });
    expect(res.status).toBe(422);
    expect(await res.text()).toMatch(/base_url/);
  });
});

describe('loopback and private: refused with HANGAR_EGRESS_ALLOW=none, allowed on a loopback-bound laptop', () => {
  for (const [what, path, body, loc] of targets) {
    it.each(['http://127.0.0.1:9', 'http://2130706433', 'http://localhost:9', 'http://10.0.0.1', 'http://[::1]:9', 'http://[::127.0.0.1]:9', 'http://[::10.0.0.1]', 'http://[fec0::1]'])(`${what} at %s`, async (url) => {
      const refused = await post(strict, path, body(url));
      expect(refused.status).toBe(422);
      expect(locOf((await refused.json()) as Record<string, unknown>)).toMatchObject({ loc, msg: expect.stringMatching(/HANGAR_EGRESS_ALLOW/) });
    });
  }
  it('the laptop accepts a local tool server', async () => {
    expect((await post(laptop, '/v1/deepagents/mcp-servers', { name: 'local', url: 'http://127.0.0.1:9/mcp' })).status).toBe(201);
  });
  it('public destinations pass', async () => {
    expect((await post(strict, '/v1/deepagents/mcp-servers', { name: 'public', url: 'https://tools.example.com/mcp' })).status).toBe(201);
  });
});

describe('local repositories', () => {
  it('a git integration at file:/// is refused unless HANGAR_DEPLOY_ALLOW_LOCAL_REPOS and a root allow it', async () => {
    const res = await post(laptop, '/v1/integrations/forge/vcshost', { kind: 'git', base_url: 'file:///' });
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({ detail: [expect.objectContaining({ loc: ['body', 'base_url'], msg: expect.stringMatching(/HANGAR_DEPLOY_ALLOW_LOCAL_REPOS/) })] });
    const dep = await post(laptop, '/v2/deployments', { name: 'localrepo', source: 'vcshost', source_config: { repo_url: 'file:///srv/app.git' }, source_revision_config: { repo_ref: 'main' }, secrets: [] });
    expect(dep.status).toBe(422);
  });
  it('with local repositories on, only under HANGAR_LOCAL_REPO_ROOTS', async () => {
    const open = await startTestServer({ env: { HANGAR_DEPLOY_ALLOW_LOCAL_REPOS: 'true', HANGAR_LOCAL_REPO_ROOTS: '/srv/repos' } });
    try {
      const res = await post(open, '/v1/integrations/forge/vcshost', { kind: 'git', base_url: 'file:///' });
      expect(res.status).toBe(422);
      expect(await res.text()).toMatch(/not under a directory listed in HANGAR_LOCAL_REPO_ROOTS/);
      const escape = await post(open, '/v1/integrations/forge/vcshost', { kind: 'git', base_url: '/srv/repos/../../etc' });
      expect(escape.status).toBe(422);
    } finally {
      await open.close();
    }
  });
});
