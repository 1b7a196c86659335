// Rendering a deployment as Kubernetes objects. Per revision: API and queue Deployments with their
// autoscalers, a Service, a Secret for `secrets`, and Redis per the redis_* fields. Per deployment
// (renderDatabase): its PostgreSQL database, sized by the db_* fields, which every revision uses and
// which carries no revision label, so a new revision never restarts or replaces it. All carry
// resource_spec's metadata and pod composition as given.
import type { DriverTarget } from '../driver.js';

/** A rendered Kubernetes object (plain JSON, as applied). */
export type K8sObject = { apiVersion: string; kind: string; metadata: { name: string; namespace: string; labels?: Record<string, string>; annotations?: Record<string, string> } } & Record<string, unknown>;

/** Port the LangGraph API server listens on inside its container. */
export const APP_PORT = 8000;

type Spec = Record<string, unknown>;

const n = (spec: Spec, key: string): number | undefined => (typeof spec[key] === 'number' ? (spec[key] as number) : undefined);

/** CPU and memory requests/limits from `<prefix>cpu`, `<prefix>cpu_limit`, `<prefix>memory_mb`, `<prefix>memory_limit_mb`. */
export function resources(spec: Spec, prefix: string): { requests?: Record<string, string>; limits?: Record<string, string> } {
  const requests: Record<string, string> = {};
  const limits: Record<string, string> = {};
  const cpu = n(spec, `${prefix}cpu`);
  const cpuLimit = n(spec, `${prefix}cpu_limit`);
  const mem = n(spec, `${prefix}memory_mb`);
  const memLimit = n(spec, `${prefix}memory_limit_mb`);
  if (cpu !== undefined) requests.cpu = `${Math.round(cpu * 1000)}m`;
  if (mem !== undefined) requests.memory = `${Math.round(mem)}Mi`;
  if (cpuLimit !== undefined) limits.cpu = `${Math.round(cpuLimit * 1000)}m`;
  if (memLimit !== undefined) limits.memory = `${Math.round(memLimit)}Mi`;
  return { ...(Object.keys(requests).length ? { requests } : {}), ...(Object.keys(limits).length ? { limits } : {}) };
}

/** Object names of a deployment (its name is a DNS label, so these are valid names). */
export function objectNames(name: string) {
  return { api: `${name}-api`, queue: `${name}-queue`, service: name, secret: `${name}-secrets`, db: `${name}-postgres`, dbSecret: `${name}-postgres`, redis: `${name}-redis` };
}

/** What the objects of a deployment share: namespace, names, labels (`perRevision` adds the revision's). */
function common(t: DriverTarget, perRevision: boolean) {
  const spec = (t.revision.resourceSpec ?? {}) as Spec;
  const ns = t.deployment.sourceConfig.listener_config?.k8s_namespace ?? 'default';
  const names = objectNames(t.deployment.name);
  const selector = { 'app.kubernetes.io/name': t.deployment.name, 'app.kubernetes.io/instance': t.deployment.id };
  const labels = {
    ...((spec.labels as Record<string, string> | null) ?? {}),
    ...selector,
    'app.kubernetes.io/managed-by': 'hangar',
    ...(perRevision ? { 'hangar.dev/revision': String(t.revision.seq) } : {}),
  };
  const annotations = (spec.annotations as Record<string, string> | null) ?? {};
  const meta = (name: string, component: string) => ({
    name,
    namespace: ns,
    labels: { ...labels, 'app.kubernetes.io/component': component },
    ...(Object.keys(annotations).length ? { annotations } : {}),
  });
  return { spec, ns, names, selector, labels, annotations, meta };
}

/**
 * The deployment's database, in apply order: its Secret (password and DATABASE_URI), a PostgreSQL
 * StatefulSet with a volume claim, and its Service. Applied before the first revision and again
 * (unchanged unless db_* changed) before each; deleted only with the deployment.
 */
export function renderDatabase(t: DriverTarget, o: { dbPassword: string }): K8sObject[] {
  const { spec, ns, names, meta } = common(t, false);
  const uri = `postgres://postgres:${encodeURIComponent(o.dbPassword)}@${names.db}.${ns}.svc:5432/postgres?sslmode=disable`;
  return [
    { apiVersion: 'v1', kind: 'Secret', metadata: meta(names.dbSecret, 'postgres'), type: 'Opaque', stringData: { password: o.dbPassword, uri } },
    ...renderPostgres(spec, names, meta),
  ];
}

/** The PersistentVolumeClaim the database's StatefulSet creates (deleted with the deployment). */
export function databaseClaimName(deploymentName: string): string {
  return `data-${objectNames(deploymentName).db}-0`;
}

/**
 * The application container's securityContext under HANGAR_DEPLOY_K8S_POD_POLICY=restricted: a
 * non-root user (given, since LangGraph images and Node.js images run as root or as a user named,
 * not numbered, which the kubelet cannot check as non-root), no privilege escalation, no
 * capabilities, the runtime's default seccomp profile — Pod Security Standards' `restricted` profile.
 */
export function restrictedSecurityContext(runAsUser: number): Record<string, unknown> {
  return {
    runAsNonRoot: true,
    runAsUser,
    runAsGroup: runAsUser,
    allowPrivilegeEscalation: false,
    capabilities: { drop: ['ALL'] },
    seccompProfile: { type: 'RuntimeDefault' },
  };
}

/** How the revision's own containers are rendered: `restricted` adds restrictedSecurityContext(runAsUser). */
export interface RenderOptions {
  dbPassword: string;
  restricted?: { runAsUser: number } | undefined;
}

/** Every object of one revision, in apply order (the database is the deployment's: renderDatabase). */
export function renderObjects(t: DriverTarget, o: RenderOptions): K8sObject[] {
  const { spec, ns, names, selector, labels, annotations, meta } = common(t, true);
  const withRedis = ['redis_cpu', 'redis_memory_mb', 'redis_cpu_limit', 'redis_memory_limit_mb'].some((k) => spec[k] != null);
  const withQueue = ['queue_min_scale', 'queue_max_scale', 'queue_cpu', 'queue_memory_mb'].some((k) => spec[k] != null);

  const env: Record<string, unknown>[] = [
    { name: 'PORT', value: String(APP_PORT) },
    ...t.revision.secrets.map((s) => ({ name: s.name, valueFrom: { secretKeyRef: { name: names.secret, key: s.name } } })),
    ...(t.deployment.secretReferences ?? []).map((r) => ({ name: r.name, valueFrom: { secretKeyRef: { name: r.secret_name, key: r.secret_key } } })),
    { name: 'DATABASE_URI', valueFrom: { secretKeyRef: { name: names.dbSecret, key: 'uri' } } },
    ...(withRedis ? [{ name: 'REDIS_URI', value: `redis://${names.redis}.${ns}.svc:6379` }] : []),
  ];
  const sidecars = ((spec.sidecars as Record<string, unknown>[] | null) ?? []);
  const podSpec = (component: string, prefix: string) => ({
    ...(spec.service_account_name ? { serviceAccountName: spec.service_account_name } : {}),
    ...(spec.image_pull_secrets ? { imagePullSecrets: spec.image_pull_secrets } : {}),
    ...(spec.volumes ? { volumes: spec.volumes } : {}),
    // Sidecars that set restartPolicy are native sidecars (init containers that keep running).
    initContainers: [...((spec.init_containers as Record<string, unknown>[] | null) ?? []), ...sidecars.filter((c) => c.restartPolicy)],
    containers: [
      {
        name: component,
        image: t.revision.sourceRevisionConfig.image_uri ?? '',
        ports: component === 'api' ? [{ name: 'http', containerPort: APP_PORT }] : [],
        env: [...env, { name: 'HANGAR_COMPONENT', value: component }],
        resources: resources(spec, prefix),
        ...(spec.volume_mounts ? { volumeMounts: spec.volume_mounts } : {}),
        ...(component === 'api' ? { readinessProbe: { httpGet: { path: '/ok', port: APP_PORT } } } : {}),
        ...(o.restricted ? { securityContext: restrictedSecurityContext(o.restricted.runAsUser) } : {}),
      },
      ...sidecars.filter((c) => !c.restartPolicy),
    ],
  });
  const deployment = (name: string, component: string, prefix: string, min: number | undefined): K8sObject => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: meta(name, component),
    spec: {
      replicas: min ?? 1,
      selector: { matchLabels: { ...selector, 'app.kubernetes.io/component': component } },
      template: { metadata: { labels: { ...labels, 'app.kubernetes.io/component': component }, ...(Object.keys(annotations).length ? { annotations } : {}) }, spec: podSpec(component, prefix) },
    },
  });
  const hpa = (target: string, component: string, min: number | undefined, max: number | undefined): K8sObject => ({
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: meta(target, component),
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: target },
      minReplicas: Math.max(1, min ?? 1),
      maxReplicas: Math.max(1, min ?? 1, max ?? min ?? 1),
      metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 75 } } }],
    },
  });

  const out: K8sObject[] = [
    { apiVersion: 'v1', kind: 'Secret', metadata: meta(names.secret, 'secrets'), type: 'Opaque', stringData: Object.fromEntries(t.revision.secrets.map((s) => [s.name, s.value])) },
  ];
  if (withRedis) out.push(...renderRedis(spec, names, meta));
  out.push(deployment(names.api, 'api', '', n(spec, 'min_scale')), hpa(names.api, 'api', n(spec, 'min_scale'), n(spec, 'max_scale')));
  if (withQueue) out.push(deployment(names.queue, 'queue', 'queue_', n(spec, 'queue_min_scale')), hpa(names.queue, 'queue', n(spec, 'queue_min_scale'), n(spec, 'queue_max_scale')));
  out.push({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: meta(names.service, 'api'),
    spec: { type: 'ClusterIP', selector: { ...selector, 'app.kubernetes.io/component': 'api' }, ports: [{ name: 'http', port: 80, targetPort: APP_PORT }] },
  });
  return out;
}

type Meta = (name: string, component: string) => K8sObject['metadata'];

function renderPostgres(spec: Spec, names: ReturnType<typeof objectNames>, meta: Meta): K8sObject[] {
  const sel = { ...meta(names.db, 'postgres').labels! };
  const matchLabels = { 'app.kubernetes.io/instance': sel['app.kubernetes.io/instance']!, 'app.kubernetes.io/component': 'postgres' };
  const maxConn = n(spec, 'db_max_connections');
  return [
    {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: meta(names.db, 'postgres'),
      spec: {
        serviceName: names.db,
        replicas: 1,
        selector: { matchLabels },
        template: {
          metadata: { labels: sel },
          spec: {
            containers: [
              {
                name: 'postgres',
                image: 'postgres:16',
                args: maxConn ? ['-c', `max_connections=${maxConn}`] : [],
                env: [
                  { name: 'POSTGRES_PASSWORD', valueFrom: { secretKeyRef: { name: names.dbSecret, key: 'password' } } },
                  { name: 'PGDATA', value: '/var/lib/postgresql/data/pgdata' },
                ],
                ports: [{ name: 'postgres', containerPort: 5432 }],
                resources: resources(spec, 'db_'),
                volumeMounts: [{ name: 'data', mountPath: '/var/lib/postgresql/data' }],
              },
            ],
          },
        },
        volumeClaimTemplates: [
          { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: `${n(spec, 'db_storage_gi') ?? 1}Gi` } } } },
        ],
      },
    },
    { apiVersion: 'v1', kind: 'Service', metadata: meta(names.db, 'postgres'), spec: { selector: matchLabels, ports: [{ name: 'postgres', port: 5432, targetPort: 5432 }] } },
  ];
}

function renderRedis(spec: Spec, names: ReturnType<typeof objectNames>, meta: Meta): K8sObject[] {
  const labels = meta(names.redis, 'redis').labels!;
  const matchLabels = { 'app.kubernetes.io/instance': labels['app.kubernetes.io/instance']!, 'app.kubernetes.io/component': 'redis' };
  return [
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: meta(names.redis, 'redis'),
      spec: {
        replicas: 1,
        selector: { matchLabels },
        template: { metadata: { labels }, spec: { containers: [{ name: 'redis', image: 'redis:7', ports: [{ name: 'redis', containerPort: 6379 }], resources: resources(spec, 'redis_') }] } },
      },
    },
    { apiVersion: 'v1', kind: 'Service', metadata: meta(names.redis, 'redis'), spec: { selector: matchLabels, ports: [{ name: 'redis', port: 6379, targetPort: 6379 }] } },
  ];
}
