// Rules of `resource_spec` that validation enforces and the API schema describes.

/** The volume sources a volume may name (exactly one). */
export const VOLUME_SOURCES = ['configMap', 'secret', 'emptyDir', 'persistentVolumeClaim', 'nfs', 'projected', 'downwardAPI', 'csi'] as const;

/** Pairs (request, limit) and (min, max) whose order is checked. */
export const ORDERED_PAIRS: [string, string][] = [
  ['min_scale', 'max_scale'],
  ['queue_min_scale', 'queue_max_scale'],
  ['orchestrator_min_scale', 'orchestrator_max_scale'],
  ...['', 'queue_', 'orchestrator_', 'executor_', 'redis_', 'db_'].flatMap((p): [string, string][] => [
    [`${p}cpu`, `${p}cpu_limit`],
    [`${p}memory_mb`, `${p}memory_limit_mb`],
  ]),
];
