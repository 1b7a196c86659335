// Wire shape of `resource_spec`: scale and resources per component, metadata, and pod composition.
// Kubernetes objects inside it (volumes, containers, mounts) keep any further Kubernetes fields given.
import { z } from '@hono/zod-openapi';
import { VOLUME_SOURCES } from '../../core/deployments/resource-rules.js';

const num = (description: string) => z.number().nonnegative().nullable().optional().openapi({ description });
const scale = (description: string) => z.number().int().nonnegative().nullable().optional().openapi({ description });

/** A volume mount (Kubernetes `VolumeMount`). */
export const MountSchema = z
  .looseObject({
    name: z.string().min(1),
    mountPath: z.string().min(1),
    subPath: z.string().optional(),
    mountPropagation: z.string().optional(),
    subPathExpr: z.string().optional(),
    readOnly: z.boolean().optional(),
  })
  .openapi('VolumeMount');

/** A container (Kubernetes `Container`), for init containers and sidecars. */
export const ContainerSchema = z
  .looseObject({
    name: z.string().min(1),
    image: z.string().min(1).optional(),
    imagePullPolicy: z.string().optional(),
    workingDir: z.string().optional(),
    restartPolicy: z.string().optional(),
    command: z.array(z.string()).optional(),
    args: z.array(z.string()).optional(),
    env: z
      .array(z.object({ name: z.string().min(1), value: z.string().optional(), valueFrom: z.record(z.string(), z.unknown()).optional() }))
      .optional(),
    envFrom: z.array(z.record(z.string(), z.unknown())).optional(),
    resources: z
      .object({ limits: z.record(z.string(), z.unknown()).optional(), requests: z.record(z.string(), z.unknown()).optional() })
      .optional(),
    volumeMounts: z.array(MountSchema).optional(),
    securityContext: z.record(z.string(), z.unknown()).optional(),
  })
  .openapi('Container');

/** A volume (Kubernetes `Volume`) with exactly one of the supported sources. */
export const VolumeSchema = z
  .looseObject({
    name: z.string().min(1),
    ...Object.fromEntries(VOLUME_SOURCES.map((s) => [s, z.record(z.string(), z.unknown()).optional()])),
  })
  .openapi('Volume', {
    description: `\`name\` and exactly one of ${VOLUME_SOURCES.map((s) => `\`${s}\``).join(', ')}; only \`emptyDir\`, \`configMap\` and \`downwardAPI\` when the server sets \`HANGAR_DEPLOY_K8S_POD_POLICY=restricted\`.`,
  });

/** `resource_spec`. Numbers: CPU in cores, memory in MiB, storage in GiB. */
export const ResourceSpecSchema = z
  .object({
    min_scale: scale('API replicas at least.'),
    max_scale: scale('API replicas at most (autoscaled between the two).'),
    cpu: num('API CPU request, cores.'),
    cpu_limit: num('API CPU limit, cores.'),
    memory_mb: num('API memory request, MiB.'),
    memory_limit_mb: num('API memory limit, MiB.'),
    queue_min_scale: scale('Queue worker replicas at least.'),
    queue_max_scale: scale('Queue worker replicas at most.'),
    queue_cpu: num('Queue CPU request.'),
    queue_cpu_limit: num('Queue CPU limit.'),
    queue_memory_mb: num('Queue memory request, MiB.'),
    queue_memory_limit_mb: num('Queue memory limit, MiB.'),
    orchestrator_cpu: num('Orchestrator CPU request.'),
    orchestrator_cpu_limit: num('Orchestrator CPU limit.'),
    orchestrator_memory_mb: num('Orchestrator memory request, MiB.'),
    orchestrator_memory_limit_mb: num('Orchestrator memory limit, MiB.'),
    orchestrator_min_scale: scale('Orchestrator replicas at least.'),
    orchestrator_max_scale: scale('Orchestrator replicas at most.'),
    executor_cpu: num('Executor CPU request.'),
    executor_cpu_limit: num('Executor CPU limit.'),
    executor_memory_mb: num('Executor memory request, MiB.'),
    executor_memory_limit_mb: num('Executor memory limit, MiB.'),
    redis_cpu: num('Redis CPU request.'),
    redis_cpu_limit: num('Redis CPU limit.'),
    redis_memory_mb: num('Redis memory request, MiB.'),
    redis_memory_limit_mb: num('Redis memory limit, MiB.'),
    db_cpu: num('Database CPU request.'),
    db_cpu_limit: num('Database CPU limit.'),
    db_memory_mb: num('Database memory request, MiB.'),
    db_memory_limit_mb: num('Database memory limit, MiB.'),
    db_storage_gi: num('Database volume size, GiB.'),
    db_max_connections: scale('PostgreSQL max_connections.'),
    labels: z.record(z.string(), z.string()).nullable().optional().openapi({ description: 'Added to every object and pod.' }),
    annotations: z.record(z.string(), z.string()).nullable().optional().openapi({ description: 'Added to every object and pod.' }),
    service_account_name: z.string().nullable().optional().openapi({ description: 'Refused when the server sets `HANGAR_DEPLOY_K8S_POD_POLICY=restricted`.' }),
    image_pull_secrets: z.array(z.object({ name: z.string().min(1) })).nullable().optional(),
    volumes: z.array(VolumeSchema).nullable().optional(),
    volume_mounts: z.array(MountSchema).nullable().optional().openapi({ description: 'Mounted into the application containers.' }),
    init_containers: z.array(ContainerSchema).nullable().optional(),
    sidecars: z.array(ContainerSchema).nullable().optional(),
  })
  .openapi('ResourceSpec');

