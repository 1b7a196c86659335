// The operator's bounds on kubernetes-driven deployments, through the API: a deployment may not name
// the Secrets Hangar manages for another deployment (always), HANGAR_DEPLOY_K8S_NAMESPACES limits
// the namespaces, and HANGAR_DEPLOY_K8S_POD_POLICY=restricted limits the pod. Everything here is
// decided at create/patch, before anything is applied, so no cluster (nor the stand-in API) is needed:
// the kubeconfig points nowhere and revisions that get that far fail, which these tests do not look at.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

let open: TestServer;
let bounded: TestServer;
const driverEnv = { HANGAR_DEPLOY_POLL_MS: '60000', HANGAR_DEPLOY_DRIVERS: 'external_docker=kubernetes', HANGAR_KUBECONFIG: '/nonexistent/kubeconfig' };

beforeAll(async () => {
  [open, bounded] = await Promise.all([
    startTestServer({ env: driverEnv }),
    startTestServer({ env: { ...driverEnv, HANGAR_DEPLOY_K8S_NAMESPACES: 'agents, tools', HANGAR_DEPLOY_K8S_POD_POLICY: 'restricted' } }),
  ]);
});
afterAll(async () => {
  await Promise.all([open?.close(), bounded?.close()]);
});

type Body = Record<string, unknown> & { source_config: Record<string, unknown> };
const docker = (name: string, namespace: string, extra: Partial<Body> = {}): Body => ({
  name,
  source: 'external_docker',
  source_config: { listener_config: { k8s_namespace: namespace }, ...(extra.source_config ?? {}) },
  source_revision_config: { image_uri: `registry.example.com/acme/${name}:1.0` },
  secrets: [],
  ...Object.fromEntries(Object.entries(extra).filter(([k]) => k !== 'source_config')),
});

async function post(server: TestServer, body: Body, client = server.client) {
  const res = await client.POST('/v2/deployments', { body: body as never });
  return { status: res.response.status, data: res.data, error: res.error as { detail?: { loc: (string | number)[]; msg: string }[]; error?: { code: string } } | undefined };
}

describe("another deployment's Secrets", () => {
  it("refuses secret_references, Secret volumes and container env naming another workspace's deployment's managed Secrets", async () => {
    const other = (await open.createWorkspace('other-team')).client;
    const victim = await post(open, docker('payments', 'agents', { secrets: [{ name: 'STRIPE_KEY', value: 'sk_live_x' }] }), other);
    expect(victim.status).toBe(201);

    const refs = await post(open, docker('thief', 'agents', { secret_references: [{ name: 'STOLEN', secret_name: 'payments-secrets', secret_key: 'STRIPE_KEY' }] }));
    expect(refs.status).toBe(422);
    expect(refs.error!.detail).toEqual([{ loc: ['body', 'secret_references', 0, 'secret_name'], msg: expect.stringMatching(/"payments-secrets".*another deployment \("payments"\)/), type: 'value_error' }]);

    const spec = {
      volumes: [
        { name: 'db', secret: { secretName: 'payments-postgres' } },
        { name: 'p', projected: { sources: [{ secret: { name: 'payments-secrets' } }] } },
        { name: 'data', persistentVolumeClaim: { claimName: 'data-payments-postgres-0' } },
      ],
      init_containers: [{ name: 'grab', image: 'busybox', env: [{ name: 'K', valueFrom: { secretKeyRef: { name: 'payments-secrets', key: 'STRIPE_KEY' } } }], envFrom: [{ secretRef: { name: 'payments-postgres' } }] }],
    };
    const vols = await post(open, docker('thief', 'agents', { source_config: { resource_spec: spec } }));
    expect(vols.status).toBe(422);
    expect(vols.error!.detail!.map((d) => d.loc)).toEqual([
      ['body', 'source_config', 'resource_spec', 'volumes', 0, 'secret', 'secretName'],
      ['body', 'source_config', 'resource_spec', 'volumes', 1, 'projected', 'sources', 0, 'secret', 'name'],
      ['body', 'source_config', 'resource_spec', 'volumes', 2, 'persistentVolumeClaim', 'claimName'],
      ['body', 'source_config', 'resource_spec', 'init_containers', 0, 'env', 0, 'valueFrom', 'secretKeyRef', 'name'],
      ['body', 'source_config', 'resource_spec', 'init_containers', 0, 'envFrom', 0, 'secretRef', 'name'],
    ]);

    // The same names in another namespace are someone else's Secrets, and a deployment's own are its own.
    expect((await post(open, docker('elsewhere', 'tools', { secret_references: [{ name: 'X', secret_name: 'payments-secrets', secret_key: 'k' }] }))).status).toBe(201);
    expect((await post(open, docker('selfish', 'agents', { secret_references: [{ name: 'X', secret_name: 'selfish-secrets', secret_key: 'k' }] }))).status).toBe(201);

    // A PATCH cannot add one either, nor move a deployment next to the Secrets it names.
    const ok = (await post(open, docker('mover', 'tools', { secret_references: [{ name: 'X', secret_name: 'payments-secrets', secret_key: 'k' }] }))).data!;
    const patched = await open.client.PATCH('/v2/deployments/{deployment_id}', {
      params: { path: { deployment_id: ok.id } },
      body: { source_config: { listener_config: { k8s_namespace: 'agents' } } },
    });
    expect(patched.response.status).toBe(422);
    expect((patched.error as { detail: { loc: unknown[] }[] }).detail.map((d) => d.loc)).toEqual([['body', 'secret_references', 0, 'secret_name']]);
    const after = await open.client.GET('/v2/deployments/{deployment_id}', { params: { path: { deployment_id: ok.id } } });
    expect(after.data!.source_config.listener_config?.k8s_namespace).toBe('tools');
  });

  it('refuses a deployment whose managed Secrets another deployment in the namespace already names', async () => {
    const reader = await post(open, docker('early', 'prod', { secret_references: [{ name: 'X', secret_name: 'billing-secrets', secret_key: 'k' }] }));
    expect(reader.status).toBe(201);
    const other = (await open.createWorkspace('billing-team')).client;
    const billing = await post(open, docker('billing', 'prod', { secrets: [{ name: 'K', value: 'v' }] }), other);
    expect(billing.status).toBe(409);
    expect(billing.error).toMatchObject({ detail: expect.stringMatching(/another deployment in namespace "prod" names the Secret "billing-secrets"/) });
    // In another namespace it is free.
    expect((await post(open, docker('billing', 'billing-ns'), other)).status).toBe(201);
    // Likewise for the claim a deployment's database would use.
    const claim = { resource_spec: { volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'data-ledger-postgres-0' } }] } };
    expect((await post(open, docker('early-claim', 'prod', { source_config: claim }))).status).toBe(201);
    const ledger = await post(open, docker('ledger', 'prod'), other);
    expect(ledger.status).toBe(409);
    expect(ledger.error).toMatchObject({ detail: expect.stringMatching(/names the volume claim "data-ledger-postgres-0"/) });
  });
});

describe('HANGAR_DEPLOY_K8S_NAMESPACES', () => {
  it('refuses a namespace outside the list, on create and on patch', async () => {
    const bad = await post(bounded, docker('ns-app', 'kube-system'));
    expect(bad.status).toBe(422);
    expect(bad.error!.detail).toEqual([{ loc: ['body', 'source_config', 'listener_config', 'k8s_namespace'], msg: expect.stringMatching(/"kube-system".*HANGAR_DEPLOY_K8S_NAMESPACES: agents, tools/), type: 'value_error' }]);
    // No namespace given means "default", which is not listed either.
    const implicit = await post(bounded, { ...docker('ns-app', 'agents'), source_config: {} });
    expect(implicit.status).toBe(422);
    expect(implicit.error!.detail![0]!.loc).toEqual(['body', 'source_config', 'listener_config', 'k8s_namespace']);

    const ok = await post(bounded, docker('ns-app', 'tools'));
    expect(ok.status).toBe(201);
    const moved = await bounded.client.PATCH('/v2/deployments/{deployment_id}', {
      params: { path: { deployment_id: ok.data!.id } },
      body: { source_config: { listener_config: { k8s_namespace: 'default' } } },
    });
    expect(moved.response.status).toBe(422);
    expect((moved.error as { detail: { loc: unknown[] }[] }).detail.map((d) => d.loc)).toEqual([['body', 'source_config', 'listener_config', 'k8s_namespace']]);
    const listed = await bounded.client.GET('/v2/deployments');
    expect(listed.data!.resources.map((d) => d.name)).toEqual(['ns-app']);
  });
});

describe('HANGAR_DEPLOY_K8S_POD_POLICY', () => {
  const risky = {
    service_account_name: 'cluster-admin-sa',
    volumes: [
      { name: 'cfg', configMap: { name: 'app-config' } },
      { name: 'tmp', emptyDir: {} },
      { name: 'info', downwardAPI: { items: [] } },
      { name: 'creds', secret: { secretName: 'db-creds' } },
      { name: 'share', nfs: { server: '10.0.0.5', path: '/' } },
      { name: 'disk', csi: { driver: 'secrets-store.csi.k8s.io' } },
      { name: 'claim', persistentVolumeClaim: { claimName: 'data-other-postgres-0' } },
      { name: 'token', projected: { sources: [{ serviceAccountToken: { path: 't' } }] } },
    ],
    volume_mounts: [{ name: 'cfg', mountPath: '/etc/app' }],
    init_containers: [{ name: 'root', image: 'busybox', securityContext: { runAsUser: 0, capabilities: { add: ['NET_ADMIN'] } } }],
    sidecars: [
      { name: 'priv', image: 'busybox', restartPolicy: 'Always', securityContext: { privileged: true, allowPrivilegeEscalation: true } },
      { name: 'tame', image: 'busybox', securityContext: { runAsUser: 1000, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } },
    ],
  };

  it('restricted: refuses each risky field by name, and accepts a tame pod', async () => {
    const res = await post(bounded, docker('pod-app', 'agents', { source_config: { resource_spec: risky } }));
    expect(res.status).toBe(422);
    const spec = ['body', 'source_config', 'resource_spec'];
    expect(res.error!.detail!.map((d) => d.loc)).toEqual([
      [...spec, 'service_account_name'],
      [...spec, 'volumes', 3, 'secret'],
      [...spec, 'volumes', 4, 'nfs'],
      [...spec, 'volumes', 5, 'csi'],
      [...spec, 'volumes', 6, 'persistentVolumeClaim'],
      [...spec, 'volumes', 7, 'projected'],
      [...spec, 'init_containers', 0, 'securityContext', 'capabilities', 'add'],
      [...spec, 'init_containers', 0, 'securityContext', 'runAsUser'],
      [...spec, 'sidecars', 0, 'securityContext', 'privileged'],
      [...spec, 'sidecars', 0, 'securityContext', 'allowPrivilegeEscalation'],
    ]);
    expect(res.error!.detail![0]!.msg).toMatch(/HANGAR_DEPLOY_K8S_POD_POLICY=restricted/);

    const tame: Record<string, unknown> = { volumes: risky.volumes.slice(0, 3), volume_mounts: risky.volume_mounts, sidecars: [risky.sidecars[1]] };
    const ok = await post(bounded, docker('pod-app', 'agents', { source_config: { resource_spec: tame } }));
    expect(ok.status).toBe(201);
    // A patch is held to the same policy.
    const patched = await bounded.client.PATCH('/v2/deployments/{deployment_id}', {
      params: { path: { deployment_id: ok.data!.id } },
      body: { source_config: { resource_spec: { ...tame, service_account_name: 'cluster-admin-sa' } } } as never,
    });
    expect(patched.response.status).toBe(422);
    expect((patched.error as { detail: { loc: unknown[] }[] }).detail.map((d) => d.loc)).toEqual([[...spec, 'service_account_name']]);
  });

  it('open (the default): the pod is applied as given', async () => {
    const res = await post(open, docker('pod-app', 'agents', { source_config: { resource_spec: risky } }));
    expect(res.status).toBe(201);
  });
});
