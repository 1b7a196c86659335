// Wire shapes of Hangar's tracing read API.
import { z } from '@hono/zod-openapi';
import type { TokenUsage, TraceRun, TraceRunTree } from '../../tracing/run.js';
import type { ProjectStats, RootRun, TracingProject } from '../../tracing/store.js';

export const TracingProjectSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    description: z.string().nullable(),
    is_default: z.boolean().openapi({ description: 'Runs that name no project go here.' }),
    created_at: z.iso.datetime(),
  })
  .openapi('TracingProject');

export const CreateTracingProjectRequest = z
  .object({
    name: z.string().trim().min(1, 'must not be blank').max(200).openapi({ example: 'support-bot' }),
    description: z.string().max(2000).optional(),
  })
  .openapi('CreateTracingProjectRequest');

export const TracingProjectList = z.object({ items: z.array(TracingProjectSchema) }).openapi('TracingProjectList');

const runFields = {
  id: z.uuid(),
  trace_id: z.uuid(),
  parent_run_id: z.uuid().nullable(),
  project_id: z.uuid(),
  dotted_order: z.string(),
  name: z.string(),
  run_type: z.string().openapi({ example: 'llm' }),
  status: z.enum(['pending', 'success', 'error']),
  start_time: z.iso.datetime(),
  end_time: z.iso.datetime().nullable(),
  latency_ms: z.number().nullable(),
  inputs: z.unknown(),
  outputs: z.unknown(),
  error: z.string().nullable(),
  prompt_tokens: z.number().int().nullable(),
  completion_tokens: z.number().int().nullable(),
  total_tokens: z.number().int().nullable().openapi({ description: 'A model run’s own tokens; for other runs, the sum of the model runs beneath them.' }),
  tags: z.array(z.string()),
  metadata: z.record(z.string(), z.unknown()).openapi({ description: '`extra.metadata`.' }),
  extra: z.record(z.string(), z.unknown()),
  events: z.array(z.unknown()).nullable(),
};

export const TraceRunSchema = z.object(runFields).openapi('TraceRun');

type TreeBody = z.infer<typeof TraceRunSchema> & { child_runs: TreeBody[] };
export const TraceRunTreeSchema: z.ZodType<TreeBody> = z
  .object({
    ...runFields,
    child_runs: z.array(z.lazy(() => TraceRunTreeSchema)).openapi({ type: 'array', items: { $ref: '#/components/schemas/TraceRunTree' } }),
  })
  .openapi('TraceRunTree');

export const TraceRunPage = z
  .object({
    items: z.array(TraceRunSchema).openapi({ description: 'Root runs, newest first; token counts cover the whole trace.' }),
    next_cursor: z.string().nullable().openapi({ description: 'Pass as `cursor` for the next page; null on the last page.' }),
  })
  .openapi('TraceRunPage');

export const ProjectStatsSchema = z
  .object({
    run_count: z.number().int().openapi({ description: 'Root runs (traces).' }),
    error_count: z.number().int(),
    error_rate: z.number().openapi({ description: 'error_count / run_count (0 when there are no runs).' }),
    latency_p50_ms: z.number().nullable(),
    latency_p99_ms: z.number().nullable(),
    prompt_tokens: z.number().int(),
    completion_tokens: z.number().int(),
    total_tokens: z.number().int(),
    first_start_time: z.iso.datetime().nullable(),
    last_start_time: z.iso.datetime().nullable(),
  })
  .openapi('TracingProjectStats');

export const ExporterList = z
  .object({
    items: z.array(
      z.object({
        name: z.string().openapi({ example: 'otlp' }),
        queued: z.number().int(),
        sent: z.number().int(),
        dropped: z.number().int(),
      }),
    ),
  })
  .openapi('TraceExporterList');

/** A project on the wire. */
export function presentProject(p: TracingProject): z.infer<typeof TracingProjectSchema> {
  return { id: p.id, name: p.name, description: p.description, is_default: p.isDefault, created_at: p.createdAt.toISOString() };
}

/** A run on the wire, with `tokens` in place of its own (trace totals for a root in a list). */
export function presentRun(r: TraceRun, tokens: TokenUsage | null = r.tokens): z.infer<typeof TraceRunSchema> {
  return {
    id: r.id,
    trace_id: r.traceId,
    parent_run_id: r.parentRunId,
    project_id: r.projectId,
    dotted_order: r.dottedOrder,
    name: r.name,
    run_type: r.runType,
    status: r.status,
    start_time: r.startTime.toISOString(),
    end_time: r.endTime?.toISOString() ?? null,
    latency_ms: r.latencyMs,
    inputs: r.inputs,
    outputs: r.outputs,
    error: r.error,
    prompt_tokens: tokens?.promptTokens ?? null,
    completion_tokens: tokens?.completionTokens ?? null,
    total_tokens: tokens?.totalTokens ?? null,
    tags: r.tags,
    metadata: (r.extra.metadata ?? {}) as Record<string, unknown>,
    extra: r.extra,
    events: r.events,
  };
}

/** A root run of a list: token counts of its whole trace. */
export function presentRootRun(r: RootRun): z.infer<typeof TraceRunSchema> {
  return presentRun(r, r.traceTokens);
}

/** A run and its descendants on the wire. */
export function presentTree(t: TraceRunTree): TreeBody {
  return { ...presentRun(t), child_runs: t.children.map(presentTree) };
}

/** Project figures on the wire. */
export function presentStats(s: ProjectStats): z.infer<typeof ProjectStatsSchema> {
  return {
    run_count: s.runCount,
    error_count: s.errorCount,
    error_rate: s.errorRate,
    latency_p50_ms: s.latencyP50Ms,
    latency_p99_ms: s.latencyP99Ms,
    prompt_tokens: s.tokens.promptTokens,
    completion_tokens: s.tokens.completionTokens,
    total_tokens: s.tokens.totalTokens,
    first_start_time: s.firstStartTime?.toISOString() ?? null,
    last_start_time: s.lastStartTime?.toISOString() ?? null,
  };
}
