// Code-host integrations end to end: `git` over real bare repositories made with the real git binary,
// `github` against a local stand-in of the GitHub REST API (several pages, token and app credentials,
// Enterprise path prefix), distinct errors, secrets at rest, workspace isolation.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PAGE_BYTES } from '../../src/core/integrations/github.js';
import { startGithubStandIn, type FakeRepo, type GithubStandIn } from '../fixtures/github-api.js';
import { allRowsAsText } from '../support/db-count.js';
import { startTestServer, type TestServer } from '../support/server.js';

const git = promisify(execFile);
let server: TestServer;
let root: string;
let github: GithubStandIn;
const fakeRepos: FakeRepo[] = Array.from({ length: 7 }, (_, i) => ({ id: 1000 + i, name: `repo-${i}`, owner: i % 2 ? 'acme' : 'octo', default_branch: i === 3 ? 'trunk' : 'main' }));

/** A real bare repository with one commit on `branch`. */
async function bareRepo(dir: string, branch: string): Promise<void> {
  const work = await mkdtemp(path.join(os.tmpdir(), 'hangar-work-'));
  const env = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com' };
  await git('git', ['init', '-q', '-b', branch, work], { env });
  await git('git', ['-C', work, 'commit', '-q', '--allow-empty', '-m', 'first'], { env });
  await git('git', ['clone', '-q', '--bare', work, dir], { env });
  await rm(work, { recursive: true, force: true });
}

beforeAll(async () => {
  server = await startTestServer({ env: { HANGAR_DEPLOY_ALLOW_LOCAL_REPOS: 'true', HANGAR_LOCAL_REPO_ROOTS: os.tmpdir() } });
  root = await mkdtemp(path.join(os.tmpdir(), 'hangar-git-root-'));
  await bareRepo(path.join(root, 'tools.git'), 'main');
  await mkdir(path.join(root, 'team'));
  await bareRepo(path.join(root, 'team', 'agent.git'), 'develop');
  await mkdir(path.join(root, 'not-a-repo'));
  github = await startGithubStandIn({ repos: fakeRepos, perPage: 3 });
});
afterAll(async () => {
  await server?.close();
  await github?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

const expectedGithub = (integrationId: string) =>
  fakeRepos.map((r) => ({ host_integration_id: integrationId, id: r.id, name: r.name, owner: r.owner, url: `https://github.example/${r.owner}/${r.name}`, default_branch: r.default_branch }));

describe('git integrations', () => {
  it('lists the bare repositories of a directory, with their default branches', async () => {
    const created = await server.client.POST('/v1/integrations/forge/vcshost', { body: { kind: 'git', name: 'local', base_url: root } });
    expect(created.response.status).toBe(201);
    expect(created.data).toMatchObject({ kind: 'git', name: 'local', auth_type: null, base_url: `file://${root}` });
    const id = created.data!.id;
    const repos = await server.client.GET('/v1/integrations/forge/vcshost/{integration_id}/repos', { params: { path: { integration_id: id } } });
    expect(repos.response.status).toBe(200);
    expect(repos.data!.map(({ id: _id, ...r }) => r)).toEqual([
      { host_integration_id: id, name: 'tools', owner: 'local', url: `file://${root}/tools.git`, default_branch: 'main' },
      { host_integration_id: id, name: 'agent', owner: 'team', url: `file://${root}/team/agent.git`, default_branch: 'develop' },
    ]);
    for (const r of repos.data!) expect(Number.isSafeInteger(r.id)).toBe(true);
    // Ids are stable across listings.
    const again = await server.client.GET('/v1/integrations/forge/vcshost/{integration_id}/repos', { params: { path: { integration_id: id } } });
    expect(again.data!.map((r) => r.id)).toEqual(repos.data!.map((r) => r.id));
    // The URL is clonable with the real git binary.
    const clone = await mkdtemp(path.join(os.tmpdir(), 'hangar-clone-'));
    try {
      await git('git', ['clone', '-q', repos.data![1]!.url, clone]);
      const { stdout } = await git('git', ['-C', clone, 'rev-parse', '--abbrev-ref', 'HEAD']);
      expect(stdout.trim()).toBe('develop');
    } finally {
      await rm(clone, { recursive: true, force: true });
    }
  });

  it('a directory that is gone is reported as unreachable (502)', async () => {
    const created = await server.client.POST('/v1/integrations/forge/vcshost', { body: { kind: 'git', base_url: path.join(root, 'missing') } });
    const repos = await server.client.GET('/v1/integrations/forge/vcshost/{integration_id}/repos', { params: { path: { integration_id: created.data!.id } } });
    expect(repos.response.status).toBe(502);
    expect(repos.error).toEqual({ detail: `the directory ${path.join(root, 'missing')} of this git integration does not exist or cannot be read by the server` });
  });
});

describe('github integrations (against the GitHub API stand-in)', () => {
  it('lists every page of a token’s repositories, and never returns or stores the token in clear', async () => {
    const created = await server.client.POST('/v1/integrations/forge/vcshost', { body: { kind: 'github', base_url: github.baseUrl, token: github.userToken } });
    expect(created.response.status).toBe(201);
    expect(created.data).toMatchObject({ kind: 'github', name: '127.0.0.1', auth_type: 'token', base_url: github.baseUrl });
    expect(JSON.stringify(created.data)).not.toContain(github.userToken);
    const id = created.data!.id;
    github.requests.length = 0;
    const repos = await server.client.GET('/v1/integrations/forge/vcshost/{integration_id}/repos', { params: { path: { integration_id: id } } });
    expect(repos.response.status).toBe(200);
    expect(repos.data).toEqual(expectedGithub(id));
    expect(github.requests.filter((r) => r.startsWith('GET /user/repos'))).toHaveLength(3);
    expect(await allRowsAsText(server.databaseUrl)).not.toContain(github.userToken);
    expect(server.logs()).not.toContain(github.userToken);

    // The deployments helper reads the decrypted credentials through the service.
    const resolved = await server.hangar.services.integrations.get(created.data!.tenant_id, id);
    expect(resolved).toMatchObject({ kind: 'github', baseUrl: github.baseUrl, credentials: { type: 'token', token: github.userToken } });
    expect(await server.hangar.services.integrations.gitCredentials(created.data!.tenant_id, id)).toEqual({ username: 'x-access-token', password: github.userToken });
  });

  it('uses GitHub App installation credentials, under an Enterprise /api/v3 prefix', async () => {
    const enterprise = await startGithubStandIn({ repos: fakeRepos, perPage: 2, prefix: '/api/v3' });
    try {
      const created = await server.client.POST('/v1/integrations/forge/vcshost', {
        body: { kind: 'github', name: 'ghe', base_url: enterprise.baseUrl, app: { app_id: Number(enterprise.app.appId), installation_id: enterprise.app.installationId, private_key: enterprise.app.privateKey } },
      });
      expect(created.response.status).toBe(201);
      expect(created.data).toMatchObject({ auth_type: 'app', app_id: enterprise.app.appId, installation_id: enterprise.app.installationId });
      expect(JSON.stringify(created.data)).not.toContain('PRIVATE KEY');
      const repos = await server.client.GET('/v1/integrations/forge/vcshost/{integration_id}/repos', { params: { path: { integration_id: created.data!.id } } });
      expect(repos.response.status).toBe(200);
      expect(repos.data).toEqual(expectedGithub(created.data!.id));
      expect(enterprise.requests.filter((r) => r.startsWith('GET /api/v3/installation/repositories'))).toHaveLength(4);
      expect(enterprise.requests[0]).toBe(`POST /api/v3/app/installations/${enterprise.app.installationId}/access_tokens`);
      expect(await allRowsAsText(server.databaseUrl)).not.toContain('PRIVATE KEY');
    } finally {
      await enterprise.close();
    }
  });

  it('distinct errors: rejected credential (400), unreachable host (502), unknown integration (404)', async () => {
    const bad = await server.client.POST('/v1/integrations/forge/vcshost', { body: { kind: 'github', base_url: github.baseUrl, token: 'ghp_expired' } });
    const rejected = await server.client.GET('/v1/integrations/forge/vcshost/{integration_id}/repos', { params: { path: { integration_id: bad.data!.id } } });
    expect(rejected.response.status).toBe(400);
    expect(rejected.error).toEqual({ detail: 'the code host rejected the integration’s credentials (HTTP 401): the token is wrong, expired or revoked' });

    const wrongInstallation = await server.client.POST('/v1/integrations/forge/vcshost', {
      body: { kind: 'github', base_url: github.baseUrl, app: { app_id: github.app.appId, installation_id: '1', private_key: github.app.privateKey } },
    });
    const noInstallation = await server.client.GET('/v1/integrations/forge/vcshost/{integration_id}/repos', { params: { path: { integration_id: wrongInstallation.data!.id } } });
    expect(noInstallation.response.status).toBe(400);
    expect(noInstallation.error).toEqual({ detail: `the code host knows no installation 1 of app ${github.app.appId}` });

    // A port that was listening a moment ago and is now closed.
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const gone = await server.client.POST('/v1/integrations/forge/vcshost', { body: { kind: 'github', base_url: `http://127.0.0.1:${port}`, token: 'x' } });
    const unreachable = await server.client.GET('/v1/integrations/forge/vcshost/{integration_id}/repos', { params: { path: { integration_id: gone.data!.id } } });
    expect(unreachable.response.status).toBe(502);
    expect((unreachable.error as { detail: string }).detail).toMatch(new RegExp(`^could not reach the code host at http://127.0.0.1:${port}: .*ECONNREFUSED`));

    const unknown = await server.client.GET('/v1/integrations/forge/vcshost/{integration_id}/repos', { params: { path: { integration_id: '00000000-0000-4000-8000-000000000000' } } });
    expect(unknown.response.status).toBe(404);
    expect(unknown.error).toEqual({ detail: 'no code-host integration 00000000-0000-4000-8000-000000000000 in this workspace' });
  });
});

describe('a code host that does not stop answering', () => {
  it('a page larger than any page of repositories is a 502, not read whole into memory', async () => {
    // A stand-in host whose /user/repos is valid JSON of 100 repositories padded past the page limit.
    const huge = http.createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' });
      const padding = 'x'.repeat(MAX_PAGE_BYTES / 50);
      res.write('[');
      for (let i = 0; i < 100; i++) res.write(`${i ? ',' : ''}${JSON.stringify({ id: i, name: `r${i}`, owner: { login: 'o' }, html_url: 'https://x', default_branch: 'main', description: padding })}`);
      res.end(']');
    });
    await new Promise<void>((resolve) => huge.listen(0, '127.0.0.1', resolve));
    try {
      const created = await server.client.POST('/v1/integrations/forge/vcshost', { body: { kind: 'github', base_url: `http://127.0.0.1:${(huge.address() as AddressInfo).port}`, token: 'ghp_x' } });
      const listed = await server.client.GET('/v1/integrations/forge/vcshost/{integration_id}/repos', { params: { path: { integration_id: created.data!.id } } });
      expect(listed.response.status).toBe(502);
      expect((listed.error as { detail: string }).detail).toBe(`the code host answered with more than ${MAX_PAGE_BYTES} bytes for one page`);
    } finally {
      huge.closeAllConnections();
      await new Promise((resolve) => huge.close(resolve));
    }
  });
});

describe('integration CRUD', () => {
  it('lists with paging, gets, deletes (then 404), and isolates workspaces', async () => {
    const created = await server.client.POST('/v1/integrations/forge/vcshost', { body: { kind: 'git', name: 'crud', base_url: root } });
    const id = created.data!.id;
    const all: string[] = [];
    for (let offset = 0; ; ) {
      const page = await server.client.GET('/v1/integrations/forge/vcshost', { params: { query: { limit: 2, offset } } });
      all.push(...page.data!.resources.map((r) => r.id));
      if (page.data!.resources.length < 2) break;
      offset = page.data!.offset;
    }
    expect(all).toContain(id);
    expect(new Set(all).size).toBe(all.length);
    expect((await server.client.GET('/v1/integrations/forge/vcshost/{integration_id}', { params: { path: { integration_id: id } } })).data).toEqual(created.data);

    const other = await server.createWorkspace('vcs-other');
    expect((await other.client.GET('/v1/integrations/forge/vcshost/{integration_id}', { params: { path: { integration_id: id } } })).response.status).toBe(404);
    expect((await other.client.GET('/v1/integrations/forge/vcshost/{integration_id}/repos', { params: { path: { integration_id: id } } })).response.status).toBe(404);
    expect((await other.client.DELETE('/v1/integrations/forge/vcshost/{integration_id}', { params: { path: { integration_id: id } } })).response.status).toBe(404);
    expect((await other.client.GET('/v1/integrations/forge/vcshost')).data!.resources).toEqual([]);

    expect((await server.client.DELETE('/v1/integrations/forge/vcshost/{integration_id}', { params: { path: { integration_id: id } } })).response.status).toBe(204);
    expect((await server.client.GET('/v1/integrations/forge/vcshost/{integration_id}', { params: { path: { integration_id: id } } })).response.status).toBe(404);
    expect((await server.client.DELETE('/v1/integrations/forge/vcshost/{integration_id}', { params: { path: { integration_id: id } } })).response.status).toBe(404);
  });
});

describe('bad input gets a clear 4xx in the control-plane format and writes nothing', () => {
  const json = JSON.stringify;
  const cases: { name: string; method?: string; path?: string; body?: string; contentType?: string; status: number; loc?: (string | number)[] }[] = [
    { name: 'malformed JSON', body: '{"kind":', status: 400 },
    { name: 'not JSON', body: 'kind=git', contentType: 'text/plain', status: 415 },
    { name: 'missing kind', body: json({ base_url: '/srv/git' }), status: 422 },
    { name: 'unknown kind', body: json({ kind: 'svn', base_url: '/srv/svn' }), status: 422 },
    { name: 'git without base_url', body: json({ kind: 'git' }), status: 422, loc: ['body', 'base_url'] },
    { name: 'git with a relative path', body: json({ kind: 'git', base_url: 'srv/git' }), status: 422, loc: ['body', 'base_url'] },
    { name: 'git with an http URL', body: json({ kind: 'git', base_url: 'https://git.example.com/' }), status: 422, loc: ['body', 'base_url'] },
    { name: 'github without credentials', body: json({ kind: 'github' }), status: 422, loc: ['body', 'token'] },
    { name: 'github with token and app', body: json({ kind: 'github', token: 't', app: { app_id: 1, installation_id: 2, private_key: 'k' } }), status: 422, loc: ['body', 'app'] },
    { name: 'github with empty token', body: json({ kind: 'github', token: '' }), status: 422, loc: ['body', 'token'] },
    { name: 'github with an ftp base_url', body: json({ kind: 'github', token: 't', base_url: 'ftp://ghe.example.com' }), status: 422, loc: ['body', 'base_url'] },
    { name: 'github app with a key that is not PEM', body: json({ kind: 'github', app: { app_id: 1, installation_id: 2, private_key: 'not a key' } }), status: 422, loc: ['body', 'app', 'private_key'] },
    { name: 'github app without installation_id', body: json({ kind: 'github', app: { app_id: 1, private_key: 'k' } }), status: 422, loc: ['body', 'app', 'installation_id'] },
    { name: 'blank name', body: json({ kind: 'git', name: ' ', base_url: '/srv/git' }), status: 422, loc: ['body', 'name'] },
    { name: 'get with a bad uuid', method: 'GET', path: '/v1/integrations/forge/vcshost/nope', status: 422, loc: ['path', 'integration_id'] },
    { name: 'repos with a bad uuid', method: 'GET', path: '/v1/integrations/forge/vcshost/nope/repos', status: 422, loc: ['path', 'integration_id'] },
    { name: 'delete with a bad uuid', method: 'DELETE', path: '/v1/integrations/forge/vcshost/nope', status: 422, loc: ['path', 'integration_id'] },
    { name: 'list with limit 101', method: 'GET', path: '/v1/integrations/forge/vcshost?limit=101', status: 422, loc: ['query', 'limit'] },
  ];
  it.each(cases)('$name → $status', async ({ method = 'POST', path: p = '/v1/integrations/forge/vcshost', body, contentType = 'application/json', status, loc }) => {
    const before = await allRowsAsText(server.databaseUrl);
    const res = await fetch(`${server.url}${p}`, {
      method,
      headers: { 'x-api-key': server.adminKey, ...(body === undefined ? {} : { 'content-type': contentType }) },
      ...(body === undefined ? {} : { body }),
    });
    expect(res.status).toBe(status);
    const error = (await res.json()) as { detail: string | { loc: unknown[] }[] };
    expect(Object.keys(error)).toEqual(['detail']);
    if (status === 422) {
      expect(Array.isArray(error.detail)).toBe(true);
      if (loc) expect((error.detail as { loc: unknown[] }[]).map((d) => d.loc)).toContainEqual(loc);
    } else expect(typeof error.detail).toBe('string');
    expect(await allRowsAsText(server.databaseUrl)).toBe(before);
  });

  it('a viewer cannot create or delete', async () => {
    const viewer = server.clientFor(await server.createKey({ role: 'viewer' }));
    const res = await viewer.POST('/v1/integrations/forge/vcshost', { body: { kind: 'git', base_url: root } });
    expect(res.response.status).toBe(403);
    expect(res.error).toEqual({ detail: 'a viewer key cannot change resources' });
  });
});
