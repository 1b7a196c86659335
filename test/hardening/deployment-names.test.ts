// The kubernetes driver names a deployment's objects after it (`<name>-api`, `<name>-secrets`,
// `<name>-postgres`) in its namespace, while deployment names are unique per workspace only. Another
// workspace's deployment of the same name in the same namespace would take over those objects (its
// secrets and database included) and remove them on delete: refused with 409.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let other: Awaited<ReturnType<TestServer['createWorkspace']>>;

beforeAll(async () => {
  // Records only (role api): nothing applies them to a cluster.
  server = await startTestServer({ env: { HANGAR_ROLE: 'api', LOG_LEVEL: 'warn', HANGAR_DEPLOY_DRIVERS: 'external_docker=kubernetes,internal_source=local' } });
  other = await server.createWorkspace('tenant-b', { previewAccess: true });
});
afterAll(async () => {
  await server?.close();
});

const image = (name: string, namespace?: string) => ({
  name,
  source: 'external_docker' as const,
  source_config: namespace ? { listener_config: { k8s_namespace: namespace } } : {},
  source_revision_config: { image_uri: 'registry.example/app:1' },
  secrets: [{ name: 'API_KEY', value: `${name}-secret` }],
});

describe('kubernetes deployments of two workspaces', () => {
  it('cannot share a name in one namespace; other namespaces and names are free', async () => {
    expect((await server.client.POST('/v2/deployments', { body: image('shop', 'agents') })).response.status).toBe(201);
    const clash = await other.client.POST('/v2/deployments', { body: image('shop', 'agents') });
    expect(clash.response.status).toBe(409);
    expect(clash.error).toMatchObject({ detail: expect.stringContaining('namespace "agents" belong to another workspace') });
    expect(JSON.stringify(clash.error)).not.toContain('shop-secret');
    // The default namespace is a namespace too.
    expect((await server.client.POST('/v2/deployments', { body: image('cart') })).response.status).toBe(201);
    expect((await other.client.POST('/v2/deployments', { body: image('cart', 'default') })).response.status).toBe(409);

    const elsewhere = await other.client.POST('/v2/deployments', { body: image('shop', 'tenant-b') });
    expect(elsewhere.response.status).toBe(201);
    // Moving it into the first one's namespace is the same clash, and changes nothing.
    const moved = await other.client.PATCH('/v2/deployments/{deployment_id}', {
      params: { path: { deployment_id: elsewhere.data!.id } },
      body: { source_config: { listener_config: { k8s_namespace: 'agents' } } },
    });
    expect(moved.response.status).toBe(409);
    const after = await other.client.GET('/v2/deployments/{deployment_id}', { params: { path: { deployment_id: elsewhere.data!.id } } });
    expect(after.data!.source_config.listener_config).toEqual({ k8s_namespace: 'tenant-b' });
    // Its own other changes still go through.
    const patched = await other.client.PATCH('/v2/deployments/{deployment_id}', { params: { path: { deployment_id: elsewhere.data!.id } }, body: { secrets: [{ name: 'API_KEY', value: 'rotated' }] } });
    expect(patched.response.status).toBe(200);
  });
});
