// The Kubernetes driver's apply path end to end: the real server (real PostgreSQL, the real
// reconciler, the real @kubernetes/client-node) deploys external_docker revisions to a STAND-IN
// Kubernetes API server (test/deployments/k8s-api-standin.ts), because no real cluster can run on
// this machine (no container runtime). What a real cluster would do beyond answering apply and
// reporting readiness (scheduling pods, pulling images) is not exercised here.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubernetesDriver } from '../../src/deploy/kubernetes/index.js';
import { createLogger } from '../../src/logging.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { waitFor } from './git-fixture.js';
import { startK8sApiStandIn, type K8sApiStandIn } from './k8s-api-standin.js';

let server: TestServer;
let k8s: K8sApiStandIn;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hangar-k8s-'));
  k8s = await startK8sApiStandIn();
  server = await startTestServer({
    env: {
      HANGAR_DEPLOY_POLL_MS: '300',
      HANGAR_DEPLOY_DRIVERS: 'external_docker=kubernetes',
      HANGAR_KUBECONFIG: await k8s.writeKubeconfig(dir),
    },
  });
});
afterAll(async () => {
  await server?.close();
  await k8s?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const resourceSpec = {
  min_scale: 2, max_scale: 5, cpu: 0.5, memory_mb: 512,
  queue_min_scale: 1, queue_max_scale: 3,
  redis_cpu: 0.1, db_cpu: 0.5, db_storage_gi: 5,
  labels: { team: 'agents' },
  volumes: [{ name: 'scratch', emptyDir: { sizeLimit: '1Gi' } }],
  volume_mounts: [{ name: 'scratch', mountPath: '/scratch' }],
  sidecars: [{ name: 'log-shipper', image: 'fluent/fluent-bit:3', restartPolicy: 'Always' }],
};

async function create(name: string, namespace: string) {
  const res = await server.client.POST('/v2/deployments', {
    body: {
      name,
      source: 'external_docker',
      source_config: { listener_config: { k8s_namespace: namespace }, resource_spec: resourceSpec },
      source_revision_config: { image_uri: `registry.example.com/acme/${name}:1.4.2` },
      secrets: [{ name: 'OPENAI_API_KEY', value: 'sk-test' }],
    },
  });
  expect(res.response.status).toBe(201);
  return res.data!;
}

const revision = (deploymentId: string, revisionId: string) =>
  server.client.GET('/v2/deployments/{deployment_id}/revisions/{revision_id}', { params: { path: { deployment_id: deploymentId, revision_id: revisionId } } });
const deployment = (deploymentId: string) => server.client.GET('/v2/deployments/{deployment_id}', { params: { path: { deployment_id: deploymentId } } });

describe('kubernetes driver against a stand-in Kubernetes API server', () => {
  it('applies every rendered object with server-side apply into the namespace, reads readiness back and activates the revision', async () => {
    const d = await create('support-bot', 'agents');
    const rev = await waitFor('the revision to be DEPLOYED', async () => {
      const r = await revision(d.id, d.latest_revision_id!);
      return ['DEPLOYED', 'DEPLOY_FAILED'].includes(r.data!.status) ? r.data! : undefined;
    });
    expect(rev.status_message).toBeNull();
    expect(rev.status).toBe('DEPLOYED');
    // The revision is marked DEPLOYED, then made active: wait for the second step.
    const after = await waitFor('the revision to become active', async () => {
      const x = (await deployment(d.id)).data!;
      return x.active_revision_id ? x : undefined;
    });
    expect(after.status).toBe('READY');
    expect(after.active_revision_id).toBe(rev.id);
    expect(after.image_version).toBe('1.4.2');

    // What the driver rendered for this revision (same derived password: rendering is deterministic per server).
    const applies = k8s.requests.filter((r) => r.method === 'PATCH' && r.path.includes('/namespaces/agents/'));
    const expectedKinds = ['Deployment', 'HorizontalPodAutoscaler', 'Secret', 'Service', 'StatefulSet'];
    expect([...new Set(applies.map((a) => (a.body as { kind: string }).kind))].sort()).toEqual(expectedKinds);
    for (const a of applies) {
      expect(a.contentType).toBe('application/apply-patch+yaml');
      expect(a.query).toEqual({ fieldManager: 'hangar', force: 'true' });
      expect((a.body as { metadata: { namespace: string } }).metadata.namespace).toBe('agents');
    }
    // Every object the driver renders for the revision was applied, exactly as rendered (nothing
    // lost by the client's serializer), except the derived database password.
    const driver = new KubernetesDriver({ logger: createLogger({ level: 'silent' }) });
    const t = {
      deployment: { id: d.id, workspaceId: '', name: 'support-bot', source: 'external_docker' as const, sourceConfig: { listener_config: { k8s_namespace: 'agents' } }, secretReferences: [] },
      revision: { id: rev.id, seq: 1, sourceRevisionConfig: { image_uri: 'registry.example.com/acme/support-bot:1.4.2' }, resourceSpec: resourceSpec as never, secrets: [{ name: 'OPENAI_API_KEY', value: 'sk-test' }] },
    };
    // The deployment's database first, then the revision's objects.
    const rendered = [...driver.renderDatabase(t), ...driver.render(t)];
    expect(applies.map((a) => `${(a.body as { kind: string }).kind}/${(a.body as { metadata: { name: string } }).metadata.name}`)).toEqual(
      rendered.map((o) => `${o.kind}/${o.metadata.name}`),
    );
    const withoutPassword = (o: unknown) => {
      const c = structuredClone(o) as { kind: string; stringData?: Record<string, string> };
      if (c.kind === 'Secret' && c.stringData?.password) c.stringData = Object.fromEntries(Object.keys(c.stringData).map((k) => [k, 'PW']));
      return c;
    };
    expect(applies.map((a) => withoutPassword(a.body))).toEqual(rendered.map((o) => withoutPassword(o)));
    const api = applies.find((a) => a.path === '/apis/apps/v1/namespaces/agents/deployments/support-bot-api')!.body as { spec: { template: { spec: { containers: { image: string }[] } } } };
    expect(api.spec.template.spec.containers[0]!.image).toBe('registry.example.com/acme/support-bot:1.4.2');
    const secret = applies.find((a) => a.path === '/api/v1/namespaces/agents/secrets/support-bot-secrets')!.body as { stringData: Record<string, string> };
    expect(secret.stringData).toEqual({ OPENAI_API_KEY: 'sk-test' });
    // Readiness was read back from the API Deployment's status.
    expect(k8s.requests.some((r) => r.method === 'GET' && r.path === '/apis/apps/v1/namespaces/agents/deployments/support-bot-api')).toBe(true);
  });

  it('keeps one database per deployment: created before the first revision, kept across revisions, removed with the deployment', async () => {
    k8s.databaseReadiness = 'not-ready';
    const d = await create('memory-bot', 'memory');
    const dbPath = '/apis/apps/v1/namespaces/memory/statefulsets/memory-bot-postgres';
    const apiPath = '/apis/apps/v1/namespaces/memory/deployments/memory-bot-api';
    await waitFor('the database to be polled', async () => (k8s.requests.some((r) => r.method === 'GET' && r.path === dbPath) ? true : undefined));
    // Waiting for its database: nothing of the revision applied yet, nothing serves.
    expect((await deployment(d.id)).data!).toMatchObject({ status: 'AWAITING_DATABASE', active_revision_id: null });
    expect(k8s.requests.some((r) => r.path === apiPath)).toBe(false);
    k8s.databaseReadiness = 'ready';
    await waitFor('revision 1 to serve', async () => ((await deployment(d.id)).data!.active_revision_id === d.latest_revision_id ? true : undefined));
    const db1 = structuredClone(k8s.objects.get('statefulsets/memory/memory-bot-postgres')) as { metadata: { uid: string; labels: Record<string, string> }; spec: unknown };
    expect(db1.metadata.labels).not.toHaveProperty('hangar.dev/revision');

    // Revision 2 (a new image): the same database object, applied unchanged; the API moves on.
    const patched = await server.client.PATCH('/v2/deployments/{deployment_id}', {
      params: { path: { deployment_id: d.id } },
      body: { source_revision_config: { image_uri: 'registry.example.com/acme/memory-bot:1.5.0' } },
    });
    const rev2 = patched.data!.latest_revision_id!;
    const after = await waitFor('revision 2 to serve', async () => {
      const x = (await deployment(d.id)).data!;
      return x.active_revision_id === rev2 ? x : undefined;
    });
    expect(after.status).toBe('READY');
    expect((await revision(d.id, d.latest_revision_id!)).data!).toMatchObject({ status: 'INTERRUPTED', status_message: 'replaced by revision 2; no longer serving' });
    const db2 = k8s.objects.get('statefulsets/memory/memory-bot-postgres') as typeof db1;
    expect(db2.metadata.uid).toBe(db1.metadata.uid);
    expect(db2.spec).toEqual(db1.spec);
    const dbApplies = k8s.requests.filter((r) => r.method === 'PATCH' && r.path === dbPath).map((r) => r.body);
    expect(dbApplies).toHaveLength(2);
    expect(dbApplies[1]).toEqual(dbApplies[0]);
    expect((k8s.objects.get('deployments/memory/memory-bot-api') as { metadata: { labels: Record<string, string> } }).metadata.labels['hangar.dev/revision']).toBe('2');
    expect(k8s.requests.some((r) => r.method === 'DELETE' && r.path.includes('/namespaces/memory/'))).toBe(false);

    // Deleting the deployment removes the database, its Secret and Service, and the volume it claimed.
    await server.client.DELETE('/v2/deployments/{deployment_id}', { params: { path: { deployment_id: d.id } } });
    await waitFor('the deployment to disappear', async () => ((await deployment(d.id)).response.status === 404 ? true : undefined));
    const deleted = k8s.requests.filter((r) => r.method === 'DELETE' && r.path.includes('/namespaces/memory/')).map((r) => r.path);
    expect(deleted).toEqual(
      expect.arrayContaining([
        dbPath,
        '/api/v1/namespaces/memory/secrets/memory-bot-postgres',
        '/api/v1/namespaces/memory/services/memory-bot-postgres',
        '/api/v1/namespaces/memory/persistentvolumeclaims/data-memory-bot-postgres-0',
        apiPath,
      ]),
    );
  });

  it('keeps a revision whose Deployment is not available from becoming active until it is', async () => {
    k8s.readiness = 'not-ready';
    const polled = k8s.polledNotReady('slow-bot-api');
    const d = await create('slow-bot', 'slow');
    await polled;
    // The driver has applied and is now reading a not-available Deployment back.
    expect((await revision(d.id, d.latest_revision_id!)).data!.status).toBe('DEPLOYING');
    const waiting = (await deployment(d.id)).data!;
    expect(waiting.active_revision_id).toBeNull();
    expect(waiting.status).not.toBe('READY');

    k8s.readiness = 'ready';
    const done = await waitFor('the revision to leave DEPLOYING', async () => {
      const r = (await revision(d.id, d.latest_revision_id!)).data!;
      return r.status === 'DEPLOYING' ? undefined : r;
    });
    expect(done.status).toBe('DEPLOYED');
    const ready = await waitFor('the revision to become active', async () => {
      const x = (await deployment(d.id)).data!;
      return x.active_revision_id ? x : undefined;
    });
    expect(ready.status).toBe('READY');
    expect(ready.active_revision_id).toBe(d.latest_revision_id);
  });

  it('fails the revision with the API server message when an apply is refused, and nothing becomes active', async () => {
    k8s.rejectKinds.add('HorizontalPodAutoscaler');
    const d = await create('bad-bot', 'bad');
    const rev = await waitFor('the revision to fail', async () => {
      const r = await revision(d.id, d.latest_revision_id!);
      return r.data!.status === 'DEPLOY_FAILED' ? r.data! : undefined;
    });
    k8s.rejectKinds.clear();
    expect(rev.status_message).toBe('applying HorizontalPodAutoscaler bad-bot-api failed: HTTP 422 Invalid: HorizontalPodAutoscaler.horizontalpodautoscalers "bad-bot-api" is invalid: spec: Invalid value: rejected by the stand-in');
    // Apply stops at the first refused object: nothing after it was sent.
    const bad = k8s.requests.filter((r) => r.method === 'PATCH' && r.path.includes('/namespaces/bad/')).map((r) => (r.body as { kind: string }).kind);
    expect(bad.at(-1)).toBe('HorizontalPodAutoscaler');
    const after = (await deployment(d.id)).data!;
    expect(after.active_revision_id).toBeNull();
    expect(after.status).toBe('UNUSED');
  });

  it("refuses, at apply, a Secret Hangar manages for another deployment: here one of another Hangar server sharing the namespace", async () => {
    // This server deploys "vault"; its vault-secrets is then in the cluster, labelled as its own.
    const vault = await create('vault', 'shared');
    await waitFor('vault to serve', async () => ((await deployment(vault.id)).data!.active_revision_id ? true : undefined));
    // A second Hangar server on the same cluster knows nothing of "vault": its API lets the name pass.
    const other = await startTestServer({ env: { HANGAR_DEPLOY_POLL_MS: '300', HANGAR_DEPLOY_DRIVERS: 'external_docker=kubernetes', HANGAR_KUBECONFIG: join(dir, 'kubeconfig.json') } });
    try {
      const res = await other.client.POST('/v2/deployments', {
        body: {
          name: 'reader',
          source: 'external_docker',
          source_config: { listener_config: { k8s_namespace: 'shared' } },
          source_revision_config: { image_uri: 'registry.example.com/acme/reader:1.0' },
          secrets: [],
          secret_references: [{ name: 'OWN', secret_name: 'reader-secrets', secret_key: 'X' }, { name: 'STOLEN', secret_name: 'vault-secrets', secret_key: 'OPENAI_API_KEY' }],
        },
      });
      expect(res.response.status).toBe(201);
      const rev = await waitFor('the revision to fail', async () => {
        const r = await other.client.GET('/v2/deployments/{deployment_id}/revisions/{revision_id}', { params: { path: { deployment_id: res.data!.id, revision_id: res.data!.latest_revision_id! } } });
        return ['DEPLOYED', 'DEPLOY_FAILED'].includes(r.data!.status) ? r.data! : undefined;
      });
      expect(rev.status).toBe('DEPLOY_FAILED');
      expect(rev.status_message).toBe(`the Secret shared/vault-secrets is one Hangar manages for another deployment (${vault.id}): this deployment may not read it`);
      // Nothing of the revision was applied.
      expect(k8s.requests.some((r) => r.method === 'PATCH' && r.path.includes('/namespaces/shared/deployments/reader-api'))).toBe(false);
    } finally {
      await other.close();
    }
  });
});
