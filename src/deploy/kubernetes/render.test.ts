// The rendered Kubernetes objects for a resource_spec that uses every field, validated against the
// Kubernetes schemas (kubernetes-models), and checked for what each field must turn into.
import { Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Secret, Service } from 'kubernetes-models/v1';
import { describe, expect, it } from 'vitest';
import type { DriverTarget } from '../driver.js';
import { renderDatabase, renderObjects, type K8sObject } from './render.js';

const spec = {
  min_scale: 2, max_scale: 6, cpu: 0.5, cpu_limit: 1, memory_mb: 512, memory_limit_mb: 1024,
  queue_min_scale: 1, queue_max_scale: 4, queue_cpu: 0.25, queue_cpu_limit: 0.5, queue_memory_mb: 256, queue_memory_limit_mb: 512,
  orchestrator_cpu: 0.1, orchestrator_cpu_limit: 0.2, orchestrator_memory_mb: 128, orchestrator_memory_limit_mb: 256, orchestrator_min_scale: 1, orchestrator_max_scale: 2,
  executor_cpu: 0.1, executor_cpu_limit: 0.2, executor_memory_mb: 128, executor_memory_limit_mb: 256,
  redis_cpu: 0.1, redis_cpu_limit: 0.5, redis_memory_mb: 128, redis_memory_limit_mb: 256,
  db_cpu: 0.5, db_cpu_limit: 1, db_memory_mb: 1024, db_memory_limit_mb: 2048, db_storage_gi: 20, db_max_connections: 200,
  labels: { team: 'agents', 'example.com/tier': 'gold' },
  annotations: { 'prometheus.io/scrape': 'true' },
  service_account_name: 'agent-runner',
  image_pull_secrets: [{ name: 'registry-creds' }],
  volumes: [
    { name: 'cfg', configMap: { name: 'app-config' } },
    { name: 'creds', secret: { secretName: 'app-creds' } },
    { name: 'scratch', emptyDir: { sizeLimit: '1Gi' } },
    { name: 'data', persistentVolumeClaim: { claimName: 'app-data' } },
    { name: 'shared', nfs: { server: 'nfs.example.com', path: '/exports' } },
    { name: 'bundle', projected: { sources: [{ configMap: { name: 'app-config' } }] } },
    { name: 'podinfo', downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] } },
    { name: 'vault', csi: { driver: 'secrets-store.csi.k8s.io', readOnly: true } },
  ],
  volume_mounts: [
    { name: 'cfg', mountPath: '/etc/app', readOnly: true },
    { name: 'scratch', mountPath: '/scratch', subPath: 'work', mountPropagation: 'None' },
    { name: 'podinfo', mountPath: '/etc/podinfo', subPathExpr: '$(POD_NAME)' },
  ],
  init_containers: [
    { name: 'migrate', image: 'busybox:1.36', command: ['sh', '-c'], args: ['echo migrate'], env: [{ name: 'MODE', value: 'init' }], workingDir: '/work', imagePullPolicy: 'IfNotPresent' },
  ],
  sidecars: [
    {
      name: 'proxy', image: 'envoyproxy/envoy:v1.30', env: [{ name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } }],
      envFrom: [{ configMapRef: { name: 'proxy-env' } }], resources: { limits: { cpu: '200m' }, requests: { cpu: '100m' } },
      volumeMounts: [{ name: 'cfg', mountPath: '/etc/envoy' }], securityContext: { runAsNonRoot: true },
    },
    { name: 'log-shipper', image: 'fluent/fluent-bit:3', restartPolicy: 'Always' },
  ],
};

const target: DriverTarget = {
  deployment: {
    id: '6f1c3b5e-8a8e-4c5e-9a77-0d7f1f1b2c3d',
    workspaceId: '00000000-0000-4000-8000-000000000001',
    name: 'support-bot',
    source: 'external_docker',
    sourceConfig: { listener_config: { k8s_namespace: 'agents' } },
    secretReferences: [{ name: 'DB_PASSWORD', secret_name: 'shared-db', secret_key: 'password' }],
  },
  revision: {
    id: 'r1',
    seq: 3,
    sourceRevisionConfig: { image_uri: 'registry.example.com/acme/support-bot:1.4.2' },
    resourceSpec: spec,
    secrets: [{ name: 'OPENAI_API_KEY', value: 'sk-test' }],
  },
};

const MODELS: Record<string, new (o: never) => { validate(): void }> = {
  'apps/v1/Deployment': Deployment as never,
  'apps/v1/StatefulSet': StatefulSet as never,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler as never,
  'v1/Secret': Secret as never,
  'v1/Service': Service as never,
};

const find = (objs: K8sObject[], kind: string, name: string) => objs.find((o) => o.kind === kind && o.metadata.name === name) as any;

describe('Kubernetes rendering', () => {
  const objects = [...renderDatabase(target, { dbPassword: 'pw' }), ...renderObjects(target, { dbPassword: 'pw' })];

  it('renders only objects that validate against the Kubernetes schemas', () => {
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      'Secret/support-bot-postgres',
      'StatefulSet/support-bot-postgres',
      'Service/support-bot-postgres',
      'Secret/support-bot-secrets',
      'Deployment/support-bot-redis',
      'Service/support-bot-redis',
      'Deployment/support-bot-api',
      'HorizontalPodAutoscaler/support-bot-api',
      'Deployment/support-bot-queue',
      'HorizontalPodAutoscaler/support-bot-queue',
      'Service/support-bot',
    ]);
    for (const o of objects) {
      const Model = MODELS[`${o.apiVersion}/${o.kind}`];
      expect(Model, `${o.apiVersion}/${o.kind}`).toBeDefined();
      expect(() => new Model!(o as never).validate(), `${o.kind}/${o.metadata.name}`).not.toThrow();
      expect(o.metadata.namespace).toBe('agents');
      expect(o.metadata.labels).toMatchObject({ team: 'agents', 'example.com/tier': 'gold', 'app.kubernetes.io/managed-by': 'hangar' });
      expect(o.metadata.annotations).toEqual({ 'prometheus.io/scrape': 'true' });
    }
  });

  it('a schema violation is caught by the validation used above', () => {
    const broken = structuredClone(find(objects, 'Deployment', 'support-bot-api'));
    broken.spec.replicas = 'two';
    expect(() => new Deployment(broken).validate()).toThrow();
  });

  it('maps scale, resources, secrets, references and pod composition exactly', () => {
    const api = find(objects, 'Deployment', 'support-bot-api');
    const pod = api.spec.template.spec;
    expect(api.spec.replicas).toBe(2);
    expect(pod.serviceAccountName).toBe('agent-runner');
    expect(pod.imagePullSecrets).toEqual([{ name: 'registry-creds' }]);
    expect(pod.volumes).toEqual(spec.volumes);
    expect(pod.initContainers.map((c: { name: string }) => c.name)).toEqual(['migrate', 'log-shipper']);
    expect(pod.initContainers[0]).toEqual(spec.init_containers[0]);
    expect(pod.containers.map((c: { name: string }) => c.name)).toEqual(['api', 'proxy']);
    expect(pod.containers[1]).toEqual(spec.sidecars[0]);
    const app = pod.containers[0];
    expect(app.image).toBe('registry.example.com/acme/support-bot:1.4.2');
    expect(app.resources).toEqual({ requests: { cpu: '500m', memory: '512Mi' }, limits: { cpu: '1000m', memory: '1024Mi' } });
    expect(app.volumeMounts).toEqual(spec.volume_mounts);
    expect(app.env).toEqual(
      expect.arrayContaining([
        { name: 'OPENAI_API_KEY', valueFrom: { secretKeyRef: { name: 'support-bot-secrets', key: 'OPENAI_API_KEY' } } },
        { name: 'DB_PASSWORD', valueFrom: { secretKeyRef: { name: 'shared-db', key: 'password' } } },
        { name: 'DATABASE_URI', valueFrom: { secretKeyRef: { name: 'support-bot-postgres', key: 'uri' } } },
        { name: 'REDIS_URI', value: 'redis://support-bot-redis.agents.svc:6379' },
      ]),
    );
    expect(find(objects, 'Secret', 'support-bot-secrets').stringData).toEqual({ OPENAI_API_KEY: 'sk-test' });
    expect(find(objects, 'HorizontalPodAutoscaler', 'support-bot-api').spec).toMatchObject({ minReplicas: 2, maxReplicas: 6, scaleTargetRef: { name: 'support-bot-api' } });
    expect(find(objects, 'HorizontalPodAutoscaler', 'support-bot-queue').spec).toMatchObject({ minReplicas: 1, maxReplicas: 4 });
    expect(find(objects, 'Deployment', 'support-bot-queue').spec.template.spec.containers[0].resources).toEqual({ requests: { cpu: '250m', memory: '256Mi' }, limits: { cpu: '500m', memory: '512Mi' } });
    const db = find(objects, 'StatefulSet', 'support-bot-postgres').spec;
    expect(db.volumeClaimTemplates[0].spec.resources.requests.storage).toBe('20Gi');
    expect(db.template.spec.containers[0].args).toEqual(['-c', 'max_connections=200']);
    expect(db.template.spec.containers[0].resources).toEqual({ requests: { cpu: '500m', memory: '1024Mi' }, limits: { cpu: '1000m', memory: '2048Mi' } });
    expect(find(objects, 'Deployment', 'support-bot-redis').spec.template.spec.containers[0].resources).toEqual({ requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '500m', memory: '256Mi' } });
  });

  it('renders the database as the deployment\'s: no revision label, the same for every revision', () => {
    const db = renderDatabase(target, { dbPassword: 'pw' });
    expect(db.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual(['Secret/support-bot-postgres', 'StatefulSet/support-bot-postgres', 'Service/support-bot-postgres']);
    for (const o of db) expect(o.metadata.labels).not.toHaveProperty('hangar.dev/revision');
    expect(renderDatabase({ ...target, revision: { ...target.revision, id: 'other', seq: 9 } }, { dbPassword: 'pw' })).toEqual(db);
    // The revision's objects carry their revision and never the database.
    const revisionObjects = renderObjects(target, { dbPassword: 'pw' });
    expect(revisionObjects.some((o) => o.metadata.name === 'support-bot-postgres')).toBe(false);
    for (const o of revisionObjects) expect(o.metadata.labels).toMatchObject({ 'hangar.dev/revision': '3' });
  });

  it('renders just the API, its autoscaler, a Service and the Secret for an empty resource_spec', () => {
    const minimal = renderObjects({ ...target, revision: { ...target.revision, resourceSpec: null } }, { dbPassword: 'pw' });
    expect(minimal.map((o) => o.kind)).toEqual(['Secret', 'Deployment', 'HorizontalPodAutoscaler', 'Service']);
    for (const o of minimal) expect(() => new MODELS[`${o.apiVersion}/${o.kind}`]!(o as never).validate()).not.toThrow();
  });
});
