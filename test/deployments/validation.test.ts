// Every validation rule of /v2/deployments with its error, that nothing is written on a refusal,
// and PATCH semantics (what makes a revision, immutable fields), redeploy and DELETE without a reconciler.
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ env: { HANGAR_DEPLOY_ALLOW_LOCAL_REPOS: 'true', HANGAR_LOCAL_REPO_ROOTS: os.tmpdir(), HANGAR_ROLE: 'api', HANGAR_DEPLOY_DRIVERS: 'vcshost=local,internal_source=local,internal_template=local,external_docker=kubernetes' } });
});
afterAll(async () => {
  await server?.close();
});

async function count(table: string): Promise<number> {
  const client = new pg.Client({ connectionString: server.databaseUrl });
  await client.connect();
  try {
    return Number((await client.query(`SELECT count(*) FROM ${table}`)).rows[0].count);
  } finally {
    await client.end();
  }
}

async function raw(method: string, path: string, body?: unknown) {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { 'X-Api-Key': server.adminKey, 'Content-Type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: res.status === 204 ? null : ((await res.json()) as { detail: unknown } & Record<string, unknown>) };
}

const base = () => ({
  name: 'app',
  source: 'vcshost',
  source_config: { repo_url: 'https://git.example.com/acme/app.git' } as Record<string, unknown>,
  source_revision_config: { repo_ref: 'main' } as Record<string, unknown>,
  secrets: [] as unknown[],
});
const docker = () => ({ name: 'img', source: 'external_docker', source_config: {} as Record<string, unknown>, source_revision_config: { image_uri: 'registry.example.com/acme/app:1.2' } as Record<string, unknown>, secrets: [] as unknown[] });
const with_ = <T extends object>(b: T, patch: (b: T) => void): T => {
  patch(b);
  return b;
};

type Case = [string, unknown, (string | number)[], RegExp];
const cases: Case[] = [
  ['missing name', with_(base(), (b) => delete (b as Partial<typeof b>).name), ['body', 'name'], /required/],
  ['bad name', with_(base(), (b) => (b.name = 'My App')), ['body', 'name'], /lowercase letters/],
  ['name too long', with_(base(), (b) => (b.name = 'a'.repeat(64))), ['body', 'name'], /1-63/],
  ['unknown source', with_(base(), (b) => (b.source = 'ftp')), ['body', 'source'], /vcshost/],
  ['source without driver', with_(base(), (b) => (b.source = 'internal_docker')), ['body', 'source'], /no configured driver serves source "internal_docker"/],
  ['missing secrets', with_(base(), (b) => delete (b as Partial<typeof b>).secrets), ['body', 'secrets'], /required/],
  ['vcshost without repo_url', with_(base(), (b) => (b.source_config = {})), ['body', 'source_config', 'repo_url'], /required when source is "vcshost"/],
  ['vcshost without repo_ref', with_(base(), (b) => (b.source_revision_config = {})), ['body', 'source_revision_config', 'repo_ref'], /required when source is "vcshost"/],
  ['vcshost with image_uri', with_(base(), (b) => (b.source_revision_config.image_uri = 'x:1')), ['body', 'source_revision_config', 'image_uri'], /not allowed when source is "vcshost"/],
  ['vcshost with listener_config', with_(base(), (b) => (b.source_config.listener_config = { k8s_namespace: 'a' })), ['body', 'source_config', 'listener_config'], /not allowed/],
  ['repo_commit_sha in the body', with_(base(), (b) => (b.source_revision_config.repo_commit_sha = 'abc')), ['body', 'source_revision_config', 'repo_commit_sha'], /read-only/],
  ['bad repo_url', with_(base(), (b) => (b.source_config.repo_url = 'not a url')), ['body', 'source_config', 'repo_url'], /repository URL/],
  ['repo_url with user:password@', with_(base(), (b) => (b.source_config.repo_url = 'https://bob:hunter2-secret@git.example.com/acme/app.git')), ['body', 'source_config', 'repo_url'], /^(?!.*hunter2).*must not carry a credential/],
  ['repo_url with a token as user name', with_(base(), (b) => (b.source_config.repo_url = 'https://ghp_token123@git.example.com/acme/app.git')), ['body', 'source_config', 'repo_url'], /integration_id/],
  ['ssh repo_url with a password', with_(base(), (b) => (b.source_config.repo_url = 'ssh://git:pw@git.example.com/acme/app.git')), ['body', 'source_config', 'repo_url'], /must not carry a credential/],
  ['bad repo_ref', with_(base(), (b) => (b.source_revision_config.repo_ref = '../x')), ['body', 'source_revision_config', 'repo_ref'], /branch, tag or commit/],
  ['absolute agentgraph_config_path', with_(base(), (b) => (b.source_revision_config.agentgraph_config_path = '/etc/passwd')), ['body', 'source_revision_config', 'agentgraph_config_path'], /relative path/],
  ['bad custom_url', with_(base(), (b) => (b.source_config.custom_url = 'ftp://x')), ['body', 'source_config', 'custom_url'], /http/],
  ['integration_id not a uuid', with_(base(), (b) => (b.source_config.integration_id = '12')), ['body', 'source_config', 'integration_id'], /UUID/i],
  ['integration unknown', with_(base(), (b) => (b.source_config.integration_id = '6f1c3b5e-8a8e-4c5e-9a77-0d7f1f1b2c3d')), ['body', 'source_config', 'integration_id'], /no code-host integration/],
  ['build_on_push not boolean', with_(base(), (b) => (b.source_config.build_on_push = 'yes')), ['body', 'source_config', 'build_on_push'], /boolean/],
  ['secret name', with_(base(), (b) => (b.secrets = [{ name: '1BAD', value: 'x' }])), ['body', 'secrets', 0, 'name'], /environment variable name/],
  ['reserved secret', with_(base(), (b) => (b.secrets = [{ name: 'PORT', value: '1' }])), ['body', 'secrets', 0, 'name'], /reserved/],
  ['reserved prefix', with_(base(), (b) => (b.secrets = [{ name: 'LANGGRAPH_X', value: '1' }])), ['body', 'secrets', 0, 'name'], /reserved/],
  ['duplicate secret', with_(base(), (b) => (b.secrets = [{ name: 'A', value: '1' }, { name: 'A', value: '2' }])), ['body', 'secrets', 1, 'name'], /twice/],
  ['secret_references outside external_docker', with_(base(), (b) => ((b as Record<string, unknown>).secret_references = [{ name: 'A', secret_name: 's', secret_key: 'k' }])), ['body', 'secret_references'], /only allowed when source is "external_docker"/],
  ['docker without image_uri', with_(docker(), (b) => (b.source_revision_config = {})), ['body', 'source_revision_config', 'image_uri'], /required when source is "external_docker"/],
  ['docker with install_command', with_(docker(), (b) => (b.source_config.install_command = 'npm ci')), ['body', 'source_config', 'install_command'], /not allowed when source is "external_docker"/],
  ['docker with repo_url', with_(docker(), (b) => (b.source_config.repo_url = 'https://x.example.com/r.git')), ['body', 'source_config', 'repo_url'], /not allowed/],
  ['bad image_uri', with_(docker(), (b) => (b.source_revision_config.image_uri = 'Bad Image')), ['body', 'source_revision_config', 'image_uri'], /image reference/],
  ['bad namespace', with_(docker(), (b) => (b.source_config.listener_config = { k8s_namespace: 'Prod_NS' })), ['body', 'source_config', 'listener_config', 'k8s_namespace'], /namespace/],
  ['bad secret_reference', with_(docker(), (b) => ((b as Record<string, unknown>).secret_references = [{ name: 'A', secret_name: 'Bad_Name', secret_key: 'k' }])), ['body', 'secret_references', 0, 'secret_name'], /Kubernetes object name/],
  ['internal_source without tarball', { name: 'up', source: 'internal_source', source_config: {}, source_revision_config: {}, secrets: [] }, ['body', 'source_revision_config', 'source_tarball_path'], /required when source is "internal_source"/],
  ['internal_source with unknown upload', { name: 'up', source: 'internal_source', source_config: {}, source_revision_config: { source_tarball_path: 'uploads/6f1c3b5e-8a8e-4c5e-9a77-0d7f1f1b2c3d.tar.gz' }, secrets: [] }, ['body', 'source_revision_config', 'source_tarball_path'], /no completed upload/],
  ['internal_template with repo_url', { name: 't', source: 'internal_template', source_config: { repo_url: 'https://x.example.com/r.git' }, source_revision_config: {}, secrets: [] }, ['body', 'source_config', 'repo_url'], /not allowed when source is "internal_template"/],
  ['negative cpu', with_(base(), (b) => (b.source_config.resource_spec = { cpu: -1 })), ['body', 'source_config', 'resource_spec', 'cpu'], /0|greater/],
  ['fractional scale', with_(base(), (b) => (b.source_config.resource_spec = { min_scale: 1.5 })), ['body', 'source_config', 'resource_spec', 'min_scale'], /integer|int/],
  ['min above max', with_(base(), (b) => (b.source_config.resource_spec = { min_scale: 3, max_scale: 2 })), ['body', 'source_config', 'resource_spec', 'max_scale'], /at least min_scale/],
  ['request above limit', with_(base(), (b) => (b.source_config.resource_spec = { db_memory_mb: 512, db_memory_limit_mb: 256 })), ['body', 'source_config', 'resource_spec', 'db_memory_limit_mb'], /at least db_memory_mb/],
  ['volume with two sources', with_(base(), (b) => (b.source_config.resource_spec = { volumes: [{ name: 'v', emptyDir: {}, secret: { secretName: 's' } }] })), ['body', 'source_config', 'resource_spec', 'volumes', 0], /exactly one/],
  ['mount of unknown volume', with_(base(), (b) => (b.source_config.resource_spec = { volume_mounts: [{ name: 'nope', mountPath: '/x' }] })), ['body', 'source_config', 'resource_spec', 'volume_mounts', 0, 'name'], /names no volume/],
  ['sidecar without image', with_(base(), (b) => (b.source_config.resource_spec = { sidecars: [{ name: 'proxy' }] })), ['body', 'source_config', 'resource_spec', 'sidecars', 0, 'image'], /required/],
  ['container without name', with_(base(), (b) => (b.source_config.resource_spec = { init_containers: [{ image: 'busybox' }] })), ['body', 'source_config', 'resource_spec', 'init_containers', 0, 'name'], /required/],
];

describe('create validation', () => {
  it.each(cases)('%s → 422 naming the field', async (_what, body, loc, msg) => {
    const before = await count('deployments');
    const res = await raw('POST', '/v2/deployments', body);
    expect(res.status).toBe(422);
    const detail = res.body!.detail as { loc: unknown[]; msg: string; type: string }[];
    const issue = detail.find((d) => JSON.stringify(d.loc) === JSON.stringify(loc));
    expect(issue, JSON.stringify(detail)).toBeDefined();
    expect(issue!.msg).toMatch(msg);
    expect(typeof issue!.type).toBe('string');
    expect(await count('deployments')).toBe(before);
  });

  it('takes an account name that is no secret (ssh://git@host/…) in repo_url', async () => {
    // A bad name keeps the request from creating anything; only repo_url's verdict matters here.
    const body = with_(base(), (b) => {
      b.name = 'Bad Name';
      b.source_config.repo_url = 'ssh://git@git.example.com/acme/app.git';
    });
    const res = await raw('POST', '/v2/deployments', body);
    expect(res.status).toBe(422);
    const locs = (res.body!.detail as { loc: unknown[] }[]).map((d) => d.loc.join('.'));
    expect(locs).toContain('body.name');
    expect(locs).not.toContain('body.source_config.repo_url');
  });

  it('refuses a repo_url outside the directory of the git integration it names', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'hangar-gitdir-'));
    const integration = await raw('POST', '/v1/integrations/forge/vcshost', { kind: 'git', name: 'local', base_url: `file://${dir}` });
    expect(integration.status).toBe(201);
    const res = await raw('POST', '/v2/deployments', {
      ...base(),
      name: 'outside',
      source_config: { integration_id: integration.body!.id, repo_url: 'file:///etc/secret-repo.git' },
    });
    expect(res.status).toBe(422);
    expect(res.body!.detail).toEqual([
      { loc: ['body', 'source_config', 'integration_id'], msg: `file:///etc/secret-repo.git is not inside the directory of git integration local`, type: 'value_error' },
    ]);
  });

  it('reports every problem of a request together', async () => {
    const res = await raw('POST', '/v2/deployments', { name: 'Bad Name', source: 'vcshost', source_config: {}, source_revision_config: {}, secrets: [{ name: 'PORT', value: '1' }] });
    expect(res.status).toBe(422);
    expect((res.body!.detail as { loc: unknown[] }[]).map((d) => d.loc.join('.')).sort()).toEqual(
      ['body.name', 'body.secrets.0.name', 'body.source_config.repo_url', 'body.source_revision_config.repo_ref'].sort(),
    );
  });

  it('accepts secret_references and a full pod composition for external_docker', async () => {
    const res = await raw('POST', '/v2/deployments', {
      ...docker(),
      source_config: {
        listener_config: { k8s_namespace: 'agents' },
        resource_spec: { volumes: [{ name: 'cfg', configMap: { name: 'app-config' } }], volume_mounts: [{ name: 'cfg', mountPath: '/etc/app', readOnly: true }], sidecars: [{ name: 'proxy', image: 'envoyproxy/envoy:v1.30', ports: [{ containerPort: 9901 }] }] },
      },
      secret_references: [{ name: 'DB_PASSWORD', secret_name: 'shared-db', secret_key: 'password' }],
    });
    expect(res.status).toBe(201);
    expect(res.body!.secret_references).toEqual([{ name: 'DB_PASSWORD', secret_name: 'shared-db', secret_key: 'password' }]);
    // Kubernetes fields beyond the listed ones are kept as given.
    expect((res.body!.source_config as { resource_spec: { sidecars: unknown[] } }).resource_spec.sidecars[0]).toMatchObject({ ports: [{ containerPort: 9901 }] });
  });
});

describe('update, redeploy and delete', () => {
  it('makes a revision only for source_revision_config, secrets or resource_spec; name and source are immutable', async () => {
    const d = (await raw('POST', '/v2/deployments', { ...base(), name: 'patchme', secrets: [{ name: 'TOKEN', value: 'first-secret' }] })).body!;
    const id = d.id as string;
    const path = `/v2/deployments/${id}`;
    const revisions = async () => ((await raw('GET', `${path}/revisions`)).body!.resources as { id: string; status: string }[]);

    const noRev = await raw('PATCH', path, { source_config: { build_on_push: true, install_command: 'npm ci' } });
    expect(noRev.status).toBe(200);
    expect(noRev.body!.latest_revision_id).toBe(d.latest_revision_id);
    expect(noRev.body!.source_config).toMatchObject({ repo_url: 'https://git.example.com/acme/app.git', build_on_push: true, install_command: 'npm ci' });

    const ref = await raw('PATCH', path, { source_revision_config: { repo_ref: 'release' } });
    expect(ref.body!.latest_revision_id).not.toBe(d.latest_revision_id);
    expect(ref.body!.source_revision_config).toMatchObject({ repo_ref: 'release', agentgraph_config_path: 'langgraph.json' });
    let revs = await revisions();
    expect(revs.map((r) => r.status)).toEqual(['CREATING', 'SKIPPED']);

    // A masked value keeps the stored secret; a new value replaces it.
    const keep = await raw('PATCH', path, { secrets: [{ name: 'TOKEN', value: '********' }, { name: 'OTHER', value: 'new' }] });
    expect(keep.body!.secrets).toEqual([{ name: 'TOKEN', value: '********' }, { name: 'OTHER', value: '********' }]);
    const spec = await raw('PATCH', path, { source_config: { resource_spec: { min_scale: 2, max_scale: 4 } } });
    revs = await revisions();
    expect(revs).toHaveLength(4);
    expect(revs[0]!.id).toBe(spec.body!.latest_revision_id);
    const stored = await server.hangar.services.deployments.get({ workspaceId: d.tenant_id as string, keyId: 'x', role: 'admin', principal: 'x', previewAccess: true }, id);
    expect(stored.secrets).toEqual([{ name: 'TOKEN', value: 'first-secret' }, { name: 'OTHER', value: 'new' }]);

    for (const [field, value] of [['name', 'renamed'], ['source', 'internal_source']] as const) {
      const res = await raw('PATCH', path, { [field]: value });
      expect(res.status).toBe(422);
      expect(res.body!.detail).toEqual([{ loc: ['body', field], msg: expect.stringMatching(/immutable/), type: 'immutable' }]);
    }
    const bad = await raw('PATCH', path, { source_revision_config: { repo_commit_sha: 'abc' } });
    expect(bad.status).toBe(422);

    const first = revs[revs.length - 1]!;
    const re = await raw('POST', `${path}/revisions/${first.id}/redeploy`);
    expect(re.status).toBe(201);
    expect(re.body!.source_revision_config).toMatchObject({ repo_ref: 'main' });
    const logs = await raw('GET', `${path}/revisions/${first.id}/build-logs`);
    expect(logs).toEqual({ status: 200, body: { revision_id: first.id, kind: 'build', status: 'SKIPPED', logs: '' } });

    const del = await raw('DELETE', path);
    expect(del.status).toBe(204);
    const after = await raw('GET', path);
    expect(after.body!.status).toBe('AWAITING_DELETE');
    const late = await raw('PATCH', path, { source_revision_config: { repo_ref: 'x' } });
    expect(late).toEqual({ status: 409, body: { detail: `deployment ${id} is being deleted` } });
  });

  it('a rollback takes the deployment back to the revision\'s resource_spec, so a later PATCH does not undo it', async () => {
    const d = (await raw('POST', '/v2/deployments', { ...base(), name: 'rollspec', source_config: { ...base().source_config, resource_spec: { min_scale: 1 } }, secrets: [{ name: 'TOKEN', value: 'first' }] })).body!;
    const path = `/v2/deployments/${d.id as string}`;
    // Revision 2 grows it; revision 3 rolls back to revision 1.
    expect((await raw('PATCH', path, { source_config: { resource_spec: { min_scale: 3 } } })).status).toBe(200);
    const back = await raw('POST', `${path}/revisions/${d.latest_revision_id as string}/redeploy`);
    expect(back.status).toBe(201);
    expect(back.body!.resource_spec).toEqual({ min_scale: 1 });
    // The deployment shows what its latest revision runs with.
    expect((await raw('GET', path)).body!.source_config).toMatchObject({ resource_spec: { min_scale: 1 } });
    // Rotating a secret afterwards keeps the rolled-back resources.
    const rotated = await raw('PATCH', path, { secrets: [{ name: 'TOKEN', value: 'second' }] });
    expect(rotated.status).toBe(200);
    const latest = await raw('GET', `${path}/revisions/${rotated.body!.latest_revision_id as string}`);
    expect(latest.body!.resource_spec).toEqual({ min_scale: 1 });
  });

  it('refuses the mask as a value when no stored secret of that name exists, and stores nothing', async () => {
    const created = await raw('POST', '/v2/deployments', { ...base(), name: 'maskless', secrets: [{ name: 'TOKEN', value: 'kept' }] });
    expect(created.status).toBe(201);
    const id = created.body!.id as string;
    const res = await raw('PATCH', `/v2/deployments/${id}`, { secrets: [{ name: 'TOKEN', value: '********' }, { name: 'NEW', value: '********' }] });
    expect(res.status).toBe(422);
    expect(res.body!.detail).toEqual([{ loc: ['body', 'secrets', 1, 'value'], msg: expect.stringMatching(/"NEW"/), type: 'value_error' }]);
    const fresh = await raw('POST', '/v2/deployments', { ...base(), name: 'maskfirst', secrets: [{ name: 'NEW', value: '********' }] });
    expect(fresh.status).toBe(422);
    expect(fresh.body!.detail).toEqual([{ loc: ['body', 'secrets', 0, 'value'], msg: expect.stringMatching(/"NEW"/), type: 'value_error' }]);
    const stored = await server.hangar.services.deployments.get({ workspaceId: created.body!.tenant_id as string, keyId: 'x', role: 'admin', principal: 'x', previewAccess: true }, id);
    expect(stored.secrets).toEqual([{ name: 'TOKEN', value: 'kept' }]);
  });

  it('answers 404 for unknown deployments and revisions, 422 for non-UUID ids', async () => {
    const missing = '6f1c3b5e-8a8e-4c5e-9a77-0d7f1f1b2c3d';
    expect((await raw('GET', `/v2/deployments/${missing}`)).status).toBe(404);
    expect((await raw('DELETE', `/v2/deployments/${missing}`)).status).toBe(404);
    const d = (await raw('POST', '/v2/deployments', { ...base(), name: 'revs404' })).body!;
    expect(await raw('GET', `/v2/deployments/${d.id}/revisions/${missing}`)).toEqual({ status: 404, body: { detail: `no revision ${missing} of deployment ${d.id}` } });
    const bad = await raw('GET', '/v2/deployments/nope');
    expect(bad.status).toBe(422);
    expect(bad.body!.detail).toEqual([{ loc: ['path', 'deployment_id'], msg: 'must be a UUID', type: expect.any(String) }]);
  });

  it('a viewer reads but cannot write (403)', async () => {
    const viewer = server.clientFor(await server.createKey({ role: 'viewer' }));
    const res = await viewer.POST('/v2/deployments', { body: { ...base(), name: 'viewer-app' } as never });
    expect(res.response.status).toBe(403);
    expect((await viewer.GET('/v2/deployments')).response.status).toBe(200);
  });
});
