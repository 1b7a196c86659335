// The /v2/deployments control plane without a reconciler (role `api`): create, list with every
// filter and pagination, get, patch (revisions or not), delete, revisions, and every validation rule.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ env: { HANGAR_ROLE: 'api', HANGAR_DEPLOY_DRIVERS: 'vcshost=local,internal_source=local,internal_template=local,external_docker=kubernetes' } });
});
afterAll(async () => {
  await server?.close();
});

async function query<T = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: server.databaseUrl });
  await client.connect();
  try {
    return (await client.query(text, params)).rows as T[];
  } finally {
    await client.end();
  }
}

const vcs = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  source: 'vcshost' as const,
  source_config: { repo_url: 'https://git.example.com/acme/app.git', build_on_push: true },
  source_revision_config: { repo_ref: 'main', agentgraph_config_path: 'langgraph.json' },
  secrets: [{ name: 'OPENAI_API_KEY', value: 'sk-very-secret-value' }],
  ...extra,
});

// Raw requests, for bodies the typed client would not let us send.
async function raw(method: string, path: string, body?: unknown) {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { 'X-Api-Key': server.adminKey, 'Content-Type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: res.status === 204 ? null : ((await res.json()) as Record<string, unknown>) };
}

describe('create and read', () => {
  it('creates with every field, answers 201 with every read-only field, masks secrets, encrypts them at rest', async () => {
    const body = vcs('full-app', {
      source_config: {
        repo_url: 'https://git.example.com/acme/full.git',
        build_on_push: false,
        custom_url: 'https://full.example.com',
        install_command: 'npm ci',
        build_command: 'npm run build',
        resource_spec: { min_scale: 1, max_scale: 3, cpu: 0.5, cpu_limit: 1, memory_mb: 512, memory_limit_mb: 1024, labels: { team: 'a' } },
      },
      deployment_type: 'prod',
    });
    const created = await server.client.POST('/v2/deployments', { body });
    expect(created.response.status).toBe(201);
    const d = created.data!;
    for (const key of ['id', 'tenant_id', 'created_at', 'updated_at', 'status', 'latest_revision_id', 'active_revision_id', 'image_version']) {
      expect(d).toHaveProperty(key);
    }
    expect(d.status).toBe('UNUSED');
    expect(d.active_revision_id).toBeNull();
    expect(d.image_version).toBeNull();
    expect(d.latest_revision_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(d.source_config).toMatchObject(body.source_config);
    expect(d.source_revision_config).toEqual({ repo_ref: 'main', agentgraph_config_path: 'langgraph.json', image_uri: null, source_tarball_path: null, repo_commit_sha: null });
    expect(d.secrets).toEqual([{ name: 'OPENAI_API_KEY', value: '********' }]);
    expect(d.deployment_type).toBe('prod');
    expect(JSON.stringify(d)).not.toContain('sk-very-secret-value');

    const rows = await query<{ secrets_encrypted: string }>('SELECT secrets_encrypted FROM deployment_revisions WHERE deployment_id = $1', [d.id]);
    expect(rows[0]!.secrets_encrypted).toMatch(/^v1:/);
    expect(rows[0]!.secrets_encrypted).not.toContain('sk-very-secret');

    const got = await server.client.GET('/v2/deployments/{deployment_id}', { params: { path: { deployment_id: d.id } } });
    expect(got.data).toEqual(d);
    const revs = await server.client.GET('/v2/deployments/{deployment_id}/revisions', { params: { path: { deployment_id: d.id } } });
    expect(revs.data!.resources.map((r) => [r.id, r.status])).toEqual([[d.latest_revision_id, 'CREATING']]);
  });

  it('fills defaults for the template source and keeps the name unique (409)', async () => {
    const t = await raw('POST', '/v2/deployments', { name: 'tmpl', source: 'internal_template', source_config: {}, source_revision_config: {}, secrets: [] });
    expect(t.status).toBe(201);
    expect(t.body!.source_revision_config).toMatchObject({ repo_ref: 'deep-agent', agentgraph_config_path: 'langgraph.json' });
    const again = await raw('POST', '/v2/deployments', { name: 'tmpl', source: 'internal_template', source_config: {}, source_revision_config: {}, secrets: [] });
    expect(again).toEqual({ status: 409, body: { detail: 'a deployment named "tmpl" already exists in this workspace' } });
  });

  it('another workspace sees none of it (404)', async () => {
    const created = await raw('POST', '/v2/deployments', vcs('private-app'));
    const other = await server.createWorkspace('other-ws');
    const got = await other.client.GET('/v2/deployments/{deployment_id}', { params: { path: { deployment_id: created.body!.id as string } } });
    expect(got.response.status).toBe(404);
    expect(got.error).toEqual({ detail: `no deployment with id ${created.body!.id} in this workspace` });
    const list = await other.client.GET('/v2/deployments');
    expect(list.data).toEqual({ resources: [], offset: 0 });
  });
});

describe('list', () => {
  const ids: string[] = [];
  beforeAll(async () => {
    const ws = await server.createWorkspace('list-ws');
    for (let i = 0; i < 7; i++) {
      const r = await ws.client.POST('/v2/deployments', {
        body: { ...vcs(i % 2 === 0 ? `alpha-${i}` : `beta-${i}`), deployment_type: i < 3 ? 'dev' : 'prod' },
      });
      ids.push(r.data!.id);
    }
    await ws.client.DELETE('/v2/deployments/{deployment_id}', { params: { path: { deployment_id: ids[6]! } } });
    listClient = ws.client;
  });
  let listClient: TestServer['client'];

  it('pages newest first; offset is the next page; a short page is the last', async () => {
    const seen: string[] = [];
    let offset = 0;
    for (;;) {
      const page = await listClient.GET('/v2/deployments', { params: { query: { limit: 3, offset } } });
      expect(page.response.status).toBe(200);
      seen.push(...page.data!.resources.map((d) => d.id));
      expect(page.data!.offset).toBe(offset + page.data!.resources.length);
      offset = page.data!.offset;
      if (page.data!.resources.length < 3) break;
    }
    expect(seen).toEqual([...ids].reverse());
    const dflt = await listClient.GET('/v2/deployments');
    expect(dflt.data!.resources).toHaveLength(7);
    expect(dflt.data!.offset).toBe(7);
  });

  it('filters by every parameter', async () => {
    const names = async (q: Record<string, unknown>) => (await listClient.GET('/v2/deployments', { params: { query: q } })).data!.resources.map((d) => d.name).sort();
    expect(await names({ name_contains: 'ALPHA' })).toEqual(['alpha-0', 'alpha-2', 'alpha-4', 'alpha-6']);
    expect(await names({ name_contains: '%' })).toEqual([]);
    expect(await names({ status: 'AWAITING_DELETE' })).toEqual(['alpha-6']);
    expect(await names({ status: 'UNUSED', name_contains: 'beta' })).toEqual(['beta-1', 'beta-3', 'beta-5']);
    expect(await names({ deployment_type: 'dev' })).toEqual(['alpha-0', 'alpha-2', 'beta-1']);
    expect(await names({ deployment_ids: `${ids[0]},${ids[3]}` })).toEqual(['alpha-0', 'beta-3']);
    expect(await names({ remote_reconciled: false })).toHaveLength(7);
    expect(await names({ remote_reconciled: true })).toEqual([]);
    expect(await names({ image_version: '1.5.1' })).toEqual([]);
    // Hangar deployments carry no tags (the hosted product's tags are not mirrored): the filter matches none.
    expect(await names({ tag_value_ids: ids[0] })).toEqual([]);
  });

  it.each([
    ['limit=0', ['query', 'limit']],
    ['limit=101', ['query', 'limit']],
    ['limit=abc', ['query', 'limit']],
    ['limit=2.5', ['query', 'limit']],
    ['offset=-1', ['query', 'offset']],
    ['status=RUNNING', ['query', 'status']],
    ['deployment_type=staging', ['query', 'deployment_type']],
    ['remote_reconciled=maybe', ['query', 'remote_reconciled']],
    ['deployment_ids=not-a-uuid', ['query', 'deployment_ids']],
    ['tag_value_ids=1,2', ['query', 'tag_value_ids']],
  ])('rejects %s with 422 naming the parameter', async (qs, loc) => {
    const res = await raw('GET', `/v2/deployments?${qs}`);
    expect(res.status).toBe(422);
    const detail = res.body!.detail as { loc: unknown[]; msg: string; type: string }[];
    expect(detail[0]!.loc).toEqual(loc);
    expect(typeof detail[0]!.msg).toBe('string');
  });
});

describe('OpenAPI document', () => {
  it('writes down the meaning of every deployment and revision status', async () => {
    const doc = JSON.stringify(await (await fetch(`${server.url}/openapi.json`)).json());
    const { DEPLOYMENT_STATUS_MEANING, REVISION_STATUS_MEANING } = await import('../../src/core/deployments/status.js');
    for (const [status, meaning] of [...Object.entries(DEPLOYMENT_STATUS_MEANING), ...Object.entries(REVISION_STATUS_MEANING)]) {
      expect(doc).toContain(`\`${status}\`: ${meaning}`);
    }
  });
});
