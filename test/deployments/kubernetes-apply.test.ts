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
import { ensureConsoleBuilt, launchBrowser } from '../support/browser.js';
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

  it('a deployment that never served keeps its namespace once a revision went on to deploy; deleting it removes what that revision left there', async () => {
    // Revision 1 fails after its database and first objects were applied in namespace "before".
    k8s.rejectKinds.add('HorizontalPodAutoscaler');
    let d;
    try {
      d = await create('mover', 'before');
      await waitFor('revision 1 to fail', async () => ((await revision(d!.id, d!.latest_revision_id!)).data!.status === 'DEPLOY_FAILED' ? true : undefined));
    } finally {
      k8s.rejectKinds.clear();
    }
    const inBefore = () => [...k8s.objects.keys()].filter((k) => k.includes('/before/'));
    expect(inBefore()).toEqual(expect.arrayContaining(['statefulsets/before/mover-postgres', 'persistentvolumeclaims/before/data-mover-postgres-0', 'deployments/before/mover-api']));
    expect((await deployment(d.id)).data!.active_revision_id).toBeNull();
    // A move would leave those behind for good: refused, nothing changed.
    const move = await server.client.PATCH('/v2/deployments/{deployment_id}', { params: { path: { deployment_id: d.id } }, body: { source_config: { listener_config: { k8s_namespace: 'after' } } } });
    expect(move.response.status).toBe(422);
    expect((move.error as { detail: unknown[] }).detail).toEqual([
      { loc: ['body', 'source_config', 'listener_config', 'k8s_namespace'], msg: expect.stringMatching(/^cannot change once a revision has gone on to deploy \(revision 1, DEPLOY_FAILED\): what it applies in namespace "before"/), type: 'immutable' },
    ]);
    expect((await deployment(d.id)).data!.source_config.listener_config).toEqual({ k8s_namespace: 'before' });
    // Deleting it removes what revision 1 applied in "before".
    expect((await server.client.DELETE('/v2/deployments/{deployment_id}', { params: { path: { deployment_id: d.id } } })).response.status).toBe(204);
    await waitFor('the deployment to be gone', async () => ((await deployment(d!.id)).response.status === 404 ? true : undefined));
    expect(inBefore()).toEqual([]);
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

// A deployment's data lives in its database (a StatefulSet's volume claim in the cluster), which
// every revision shares: these follow it through rollouts, rollbacks and deletion, still against the
// STAND-IN API server (no cluster here), which refuses what a real one refuses on a StatefulSet and
// makes its claims as the StatefulSet controller would.
describe('kubernetes driver: data and secrets across rollouts (stand-in API server)', () => {
  const settle = async (id: string, rev: string) =>
    waitFor(`revision ${rev} to settle`, async () => {
      const r = (await revision(id, rev)).data!;
      return ['DEPLOYED', 'DEPLOY_FAILED', 'INTERRUPTED'].includes(r.status) ? r : undefined;
    });
  const applied = (path: string) => k8s.requests.filter((r) => r.method === 'PATCH' && r.path === path).map((r) => r.body as Record<string, unknown>);

  it('a rollback brings back the revision\'s image, not a secret value rotated out since; a deployment that served keeps its namespace', async () => {
    const d = (
      await server.client.POST('/v2/deployments', {
        body: {
          name: 'rotating',
          source: 'external_docker',
          source_config: { listener_config: { k8s_namespace: 'rot' } },
          source_revision_config: { image_uri: 'registry.example.com/acme/rotating:1.0' },
          secrets: [{ name: 'PROVIDER_KEY', value: 'old-value-revoked-1' }],
        },
      })
    ).data!;
    expect((await settle(d.id, d.latest_revision_id!)).status).toBe('DEPLOYED');
    // Revision 2: a new image and the key rotated.
    const rev2 = (
      await server.client.PATCH('/v2/deployments/{deployment_id}', {
        params: { path: { deployment_id: d.id } },
        body: { source_revision_config: { image_uri: 'registry.example.com/acme/rotating:2.0' }, secrets: [{ name: 'PROVIDER_KEY', value: 'new-value-current-2' }] },
      })
    ).data!.latest_revision_id!;
    expect((await settle(d.id, rev2)).status).toBe('DEPLOYED');
    // Roll back to revision 1's image.
    const back = await server.client.POST('/v2/deployments/{deployment_id}/revisions/{revision_id}/redeploy', { params: { path: { deployment_id: d.id, revision_id: d.latest_revision_id! } } });
    expect(back.response.status).toBe(201);
    expect((await settle(d.id, back.data!.id)).status).toBe('DEPLOYED');
    const api = k8s.objects.get('deployments/rot/rotating-api') as { spec: { template: { spec: { containers: { image: string }[] } } } };
    expect(api.spec.template.spec.containers[0]!.image).toBe('registry.example.com/acme/rotating:1.0');
    const secret = k8s.objects.get('secrets/rot/rotating-secrets') as { stringData: Record<string, string> };
    expect(secret.stringData).toEqual({ PROVIDER_KEY: 'new-value-current-2' });
    // Its data is in the database in namespace rot: once it has served, it cannot move namespaces.
    const move = await server.client.PATCH('/v2/deployments/{deployment_id}', { params: { path: { deployment_id: d.id } }, body: { source_config: { listener_config: { k8s_namespace: 'elsewhere' } } } });
    expect(move.response.status).toBe(422);
    expect((move.error as { detail: unknown[] }).detail).toEqual([
      { loc: ['body', 'source_config', 'listener_config', 'k8s_namespace'], msg: expect.stringMatching(/^cannot change once the deployment has served: its database and objects are in namespace "rot"/), type: 'immutable' },
    ]);
    expect((await deployment(d.id)).data!.source_config.listener_config).toEqual({ k8s_namespace: 'rot' });
    // The deployment's secrets stay the rotated ones too.
    const stored = await server.hangar.services.deployments.get({ workspaceId: d.tenant_id, keyId: 'x', role: 'admin', principal: 'x', previewAccess: true }, d.id);
    expect(stored.secrets).toEqual([{ name: 'PROVIDER_KEY', value: 'new-value-current-2' }]);
  });

  it('keeps the database and its volume claim across a new db_storage_gi: the revision deploys, the volume keeps its size, the log says so', async () => {
    const d = (
      await server.client.POST('/v2/deployments', {
        body: {
          name: 'growing',
          source: 'external_docker',
          source_config: { listener_config: { k8s_namespace: 'grow' }, resource_spec: { db_storage_gi: 1 } },
          source_revision_config: { image_uri: 'registry.example.com/acme/growing:1.0' },
          secrets: [],
        },
      })
    ).data!;
    expect((await settle(d.id, d.latest_revision_id!)).status).toBe('DEPLOYED');
    const claim = structuredClone(k8s.objects.get('persistentvolumeclaims/grow/data-growing-postgres-0')) as { metadata: { uid: string } };
    expect(claim.metadata.uid).toBeTruthy();
    const patched = await server.client.PATCH('/v2/deployments/{deployment_id}', {
      params: { path: { deployment_id: d.id } },
      body: { source_config: { resource_spec: { db_storage_gi: 5, db_max_connections: 200 } } },
    });
    const rev2 = patched.data!.latest_revision_id!;
    const done = await settle(d.id, rev2);
    expect(done.status_message).toBeNull();
    expect(done.status).toBe('DEPLOYED');
    // The same claim (not a new, empty database); the template change that may be made was made.
    expect((k8s.objects.get('persistentvolumeclaims/grow/data-growing-postgres-0') as typeof claim).metadata.uid).toBe(claim.metadata.uid);
    const sts = applied('/apis/apps/v1/namespaces/grow/statefulsets/growing-postgres').at(-1) as { spec: { volumeClaimTemplates: { spec: { resources: { requests: { storage: string } } } }[]; template: { spec: { containers: { args: string[] }[] } } } };
    expect(sts.spec.volumeClaimTemplates[0]!.spec.resources.requests.storage).toBe('1Gi');
    expect(sts.spec.template.spec.containers[0]!.args).toEqual(['-c', 'max_connections=200']);
    const logs = await server.client.GET('/v2/deployments/{deployment_id}/revisions/{revision_id}/deploy-logs', { params: { path: { deployment_id: d.id, revision_id: rev2 } } });
    expect((logs.data as { logs: string }).logs).toContain('db_storage_gi asks for 5Gi, but the database volume keeps its 1Gi');
  });

  it('deleting a deployment in the middle of applying a revision leaves nothing of it in the cluster', async () => {
    const hold = k8s.holdApply('HorizontalPodAutoscaler');
    const d = (
      await server.client.POST('/v2/deployments', {
        body: { name: 'leaving', source: 'external_docker', source_config: { listener_config: { k8s_namespace: 'leave' } }, source_revision_config: { image_uri: 'registry.example.com/acme/leaving:1.0' }, secrets: [] },
      })
    ).data!;
    await hold.arrived;
    // The API Deployment is applied, its autoscaler is on its way: delete now.
    expect((await server.client.DELETE('/v2/deployments/{deployment_id}', { params: { path: { deployment_id: d.id } } })).response.status).toBe(204);
    await waitFor('the deletion to begin', async () => {
      const r = await revision(d.id, d.latest_revision_id!);
      return r.response.status === 404 || r.data?.status === 'INTERRUPTED' ? true : undefined;
    });
    hold.release();
    await waitFor('the deployment to disappear', async () => ((await deployment(d.id)).response.status === 404 ? true : undefined));
    const left = [...k8s.objects.keys()].filter((k) => k.split('/')[1] === 'leave');
    expect(left).toEqual([]);
  });

  it('two revisions in a row: the newer waits for the older to finish applying, so the cluster runs the revision that is active', async () => {
    const hold = k8s.holdApply('Deployment');
    const d = (
      await server.client.POST('/v2/deployments', {
        body: { name: 'racer', source: 'external_docker', source_config: { listener_config: { k8s_namespace: 'race' } }, source_revision_config: { image_uri: 'registry.example.com/acme/racer:1.0' }, secrets: [] },
      })
    ).data!;
    // Revision 1 is applying its API Deployment (held) when revision 2 arrives.
    await hold.arrived;
    const rev2 = (
      await server.client.PATCH('/v2/deployments/{deployment_id}', { params: { path: { deployment_id: d.id } }, body: { source_revision_config: { image_uri: 'registry.example.com/acme/racer:2.0' } } })
    ).data!.latest_revision_id!;
    const deployLog = async (rev: string) => ((await server.client.GET('/v2/deployments/{deployment_id}/revisions/{revision_id}/deploy-logs', { params: { path: { deployment_id: d.id, revision_id: rev } } })).data as { logs: string }).logs;
    // Either revision 2 says it waits, or (as before) it went ahead and is already serving.
    await waitFor('revision 2 to wait or serve', async () => ((await deployLog(rev2)).includes('deploys after it') || (await revision(d.id, rev2)).data!.status === 'DEPLOYED' ? true : undefined));
    hold.release();
    const after = await waitFor('revision 2 to serve', async () => {
      const x = (await deployment(d.id)).data!;
      return x.active_revision_id === rev2 && (await revision(d.id, d.latest_revision_id!)).data!.status !== 'DEPLOYING' ? x : undefined;
    });
    expect(after.status).toBe('READY');
    // What runs in the cluster is revision 2, the active one.
    const api = k8s.objects.get('deployments/race/racer-api') as { metadata: { labels: Record<string, string> }; spec: { template: { spec: { containers: { image: string }[] } } } };
    expect(api.spec.template.spec.containers[0]!.image).toBe('registry.example.com/acme/racer:2.0');
    expect(api.metadata.labels['hangar.dev/revision']).toBe('2');
    expect(await deployLog(rev2)).toContain('[hangar] revision 1 of this deployment is deploying; this one deploys after it');
    expect((await revision(d.id, d.latest_revision_id!)).data!.status).toBe('INTERRUPTED');
  });

  it("refuses, at apply, another deployment's database claim: here one of another Hangar server sharing the namespace", async () => {
    const keeper = (
      await server.client.POST('/v2/deployments', {
        body: { name: 'keeper', source: 'external_docker', source_config: { listener_config: { k8s_namespace: 'claims' } }, source_revision_config: { image_uri: 'registry.example.com/acme/keeper:1.0' }, secrets: [] },
      })
    ).data!;
    expect((await settle(keeper.id, keeper.latest_revision_id!)).status).toBe('DEPLOYED');
    const other = await startTestServer({ env: { HANGAR_DEPLOY_POLL_MS: '300', HANGAR_DEPLOY_DRIVERS: 'external_docker=kubernetes', HANGAR_KUBECONFIG: join(dir, 'kubeconfig.json') } });
    try {
      const res = await other.client.POST('/v2/deployments', {
        body: {
          name: 'borrower',
          source: 'external_docker',
          source_config: {
            listener_config: { k8s_namespace: 'claims' },
            resource_spec: { volumes: [{ name: 'theirs', persistentVolumeClaim: { claimName: 'data-keeper-postgres-0' } }], volume_mounts: [{ name: 'theirs', mountPath: '/data' }] },
          },
          source_revision_config: { image_uri: 'registry.example.com/acme/borrower:1.0' },
          secrets: [],
        },
      });
      expect(res.response.status).toBe(201);
      const rev = await waitFor('the revision to settle', async () => {
        const r = await other.client.GET('/v2/deployments/{deployment_id}/revisions/{revision_id}', { params: { path: { deployment_id: res.data!.id, revision_id: res.data!.latest_revision_id! } } });
        return ['DEPLOYED', 'DEPLOY_FAILED'].includes(r.data!.status) ? r.data! : undefined;
      });
      expect(rev.status).toBe('DEPLOY_FAILED');
      expect(rev.status_message).toBe(`the volume claim claims/data-keeper-postgres-0 is the database volume Hangar manages for another deployment (${keeper.id}): this deployment may not read it`);
      expect(k8s.requests.some((r) => r.method === 'PATCH' && r.path.includes('/namespaces/claims/deployments/borrower-api'))).toBe(false);
    } finally {
      await other.close();
    }
  });
});

describe('HANGAR_DEPLOY_K8S_POD_POLICY=restricted (stand-in API server)', () => {
  const strictEnv = () => ({ HANGAR_DEPLOY_POLL_MS: '300', HANGAR_DEPLOY_DRIVERS: 'external_docker=kubernetes', HANGAR_KUBECONFIG: join(dir, 'kubeconfig.json'), HANGAR_DEPLOY_K8S_POD_POLICY: 'restricted' });

  it('runs the application containers non-root, without privilege escalation or capabilities, under RuntimeDefault seccomp', async () => {
    const strict = await startTestServer({ env: { ...strictEnv(), HANGAR_DEPLOY_K8S_RUN_AS_USER: '10001' } });
    try {
      const res = await strict.client.POST('/v2/deployments', {
        body: {
          name: 'tame',
          source: 'external_docker',
          source_config: { listener_config: { k8s_namespace: 'tame' }, resource_spec: { queue_min_scale: 1, sidecars: [{ name: 'shipper', image: 'fluent/fluent-bit:3' }] } },
          source_revision_config: { image_uri: 'registry.example.com/acme/tame:1.0' },
          secrets: [],
        },
      });
      expect(res.response.status).toBe(201);
      await waitFor('tame to serve', async () => ((await strict.client.GET('/v2/deployments/{deployment_id}', { params: { path: { deployment_id: res.data!.id } } })).data!.active_revision_id ? true : undefined));
      const expected = { runAsNonRoot: true, runAsUser: 10001, runAsGroup: 10001, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, seccompProfile: { type: 'RuntimeDefault' } };
      for (const [name, component] of [['tame-api', 'api'], ['tame-queue', 'queue']]) {
        const containers = (k8s.objects.get(`deployments/tame/${name}`) as { spec: { template: { spec: { containers: { name: string; securityContext?: unknown }[] } } } }).spec.template.spec.containers;
        expect(containers.find((c) => c.name === component)!.securityContext).toEqual(expected);
        // The sidecar is the deployment's own, as given (the policy refuses its risky fields instead).
        expect(containers.find((c) => c.name === 'shipper')!.securityContext).toBeUndefined();
      }
    } finally {
      await strict.close();
    }
  });

  it('a deployment made before the policy keeps running, is reported at start and in its policy_issues, and cannot be rolled back to what the policy forbids', { timeout: 180_000 }, async () => {
    // Made on the open server: a service account, which `restricted` refuses.
    const d = (
      await server.client.POST('/v2/deployments', {
        body: {
          name: 'legacy',
          source: 'external_docker',
          source_config: { listener_config: { k8s_namespace: 'legacy' }, resource_spec: { service_account_name: 'legacy-sa' } },
          source_revision_config: { image_uri: 'registry.example.com/acme/legacy:1.0' },
          secrets: [],
        },
      })
    ).data!;
    await waitFor('legacy to serve', async () => ((await deployment(d.id)).data!.active_revision_id ? true : undefined));
    // Its pod is made tame, then the operator restarts Hangar with the restricted policy.
    const tame = await server.client.PATCH('/v2/deployments/{deployment_id}', { params: { path: { deployment_id: d.id } }, body: { source_config: { resource_spec: { service_account_name: null } } } });
    expect(tame.response.status).toBe(200);
    await waitFor('revision 2 to serve', async () => ((await deployment(d.id)).data!.active_revision_id === tame.data!.latest_revision_id ? true : undefined));
    // Back to revision 1 (with the service account), still on the open server.
    const back = await server.client.POST('/v2/deployments/{deployment_id}/revisions/{revision_id}/redeploy', { params: { path: { deployment_id: d.id, revision_id: d.latest_revision_id! } } });
    expect(back.response.status).toBe(201);
    await waitFor('revision 3 to serve', async () => ((await deployment(d.id)).data!.active_revision_id === back.data!.id ? true : undefined));
    // The open server forbids nothing of it.
    expect((await deployment(d.id)).data!.policy_issues).toEqual([]);

    const strict = await startTestServer({ databaseUrl: server.databaseUrl, dataDir: server.dataDir, adminKey: server.adminKey, env: strictEnv() });
    try {
      const logs = async () => ((await strict.client.GET('/v2/deployments/{deployment_id}/revisions/{revision_id}/deploy-logs', { params: { path: { deployment_id: d.id, revision_id: back.data!.id } } })).data as { logs: string }).logs;
      const text = await waitFor('the report in the serving revision\'s deploy log', async () => ((await logs()).includes('no longer satisfies') ? logs() : undefined));
      expect(text).toMatch(/\[hangar\] this deployment no longer satisfies the server's Kubernetes policy; it keeps running as it is, but a change or a redeploy must satisfy it: source_config\.resource_spec\.service_account_name is not allowed on this server/);
      expect(strict.logs()).toContain('a deployment no longer satisfies the Kubernetes policy of this server');
      // The API says so too, on the deployment and in the list: the serving revision 3's service
      // account.
      const issues = [{ field: 'source_config.resource_spec.service_account_name', message: expect.stringMatching(/^is not allowed on this server/) }];
      expect((await strict.client.GET('/v2/deployments/{deployment_id}', { params: { path: { deployment_id: d.id } } })).data!.policy_issues).toEqual(issues);
      const listed = (await strict.client.GET('/v2/deployments', { params: { query: { deployment_ids: d.id } } })).data!.resources;
      expect(listed.map((x) => x.policy_issues)).toEqual([issues]);
      // And the Console, on the deployment's page (a real Chromium).
      ensureConsoleBuilt();
      const browser = await launchBrowser();
      try {
        const page = await browser.newPage();
        await page.goto(`${strict.url}/deployments/${d.id}`);
        await page.getByLabel('API key').fill(strict.adminKey);
        await page.getByRole('button', { name: 'Sign in' }).click();
        const alert = page.getByRole('alert').filter({ hasText: "Outside this server's Kubernetes policy" });
        await alert.getByText('source_config.resource_spec.service_account_name').waitFor({ timeout: 60_000 });
        expect(await alert.textContent()).toMatch(/is not allowed on this server/);
      } finally {
        await browser.close();
      }
      // Not stopped: still serving revision 3.
      expect((await strict.client.GET('/v2/deployments/{deployment_id}', { params: { path: { deployment_id: d.id } } })).data).toMatchObject({ status: 'READY', active_revision_id: back.data!.id });
      // A redeploy of revision 1 goes through today's policy, as a PATCH would, and makes nothing.
      const count = (await strict.client.GET('/v2/deployments/{deployment_id}/revisions', { params: { path: { deployment_id: d.id } } })).data!.resources.length;
      const refused = await strict.client.POST('/v2/deployments/{deployment_id}/revisions/{revision_id}/redeploy', { params: { path: { deployment_id: d.id, revision_id: d.latest_revision_id! } } });
      expect(refused.response.status).toBe(422);
      expect((refused.error as { detail: { loc: unknown[]; msg: string; type: string }[] }).detail).toEqual([
        { loc: ['body', 'source_config', 'resource_spec', 'service_account_name'], msg: expect.stringMatching(/^revision 1: is not allowed on this server/), type: 'policy_forbidden' },
      ]);
      expect((await strict.client.GET('/v2/deployments/{deployment_id}/revisions', { params: { path: { deployment_id: d.id } } })).data!.resources).toHaveLength(count);
      // The tame revision 2 may be redeployed.
      const ok = await strict.client.POST('/v2/deployments/{deployment_id}/revisions/{revision_id}/redeploy', { params: { path: { deployment_id: d.id, revision_id: tame.data!.latest_revision_id! } } });
      expect(ok.response.status).toBe(201);
      // Once it serves, nothing of the deployment is out of the policy any more.
      const inside = await waitFor('revision 4 to serve', async () => {
        const x = (await strict.client.GET('/v2/deployments/{deployment_id}', { params: { path: { deployment_id: d.id } } })).data!;
        return x.active_revision_id === ok.data!.id ? x : undefined;
      });
      expect(inside.policy_issues).toEqual([]);
    } finally {
      await strict.close();
    }
  });
});
