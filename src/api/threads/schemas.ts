// Wire shapes of threads, their state and their runs (SPEC "Thread", "Run request"; where SPEC is
// silent, the hosted API reference and LangGraph Platform conventions).
import { z } from '@hono/zod-openapi';
import { MULTITASK_STRATEGIES } from '../../core/runs/service.js';
import { RUN_STATUSES, THREAD_STATUSES } from '../../core/runs/status.js';
import type { Run, Thread } from '../../core/threads/service.js';
import type { ThreadState } from '../../core/threads/state.js';

export const ThreadStatus = z.enum(THREAD_STATUSES).openapi('ThreadStatus', {
  description: '`idle`: ready for a run. `busy`: a run is pending or running. `interrupted`: waiting for a person. `error`: the last run failed (a new run may start).',
});
const RunStatus = z.enum(RUN_STATUSES).openapi('RunStatus');
const metadata = z.record(z.string(), z.unknown());

export const CreateThreadRequest = z
  .object({
    agent_id: z.uuid({ message: 'must be a UUID' }).optional().openapi({
      description:
        'The agent that runs on this thread. LangGraph clients may name it in `metadata.assistant_id` (or `agent_id`, `graph_id`) instead, or leave it out: the first run’s `assistant_id` binds it.',
    }),
    thread_id: z.uuid({ message: 'must be a UUID' }).optional().openapi({ description: 'LangGraph: the id to create the thread with (generated when absent).' }),
    if_exists: z.enum(['raise', 'do_nothing']).optional().openapi({ description: 'LangGraph: when `thread_id` exists, `raise` (409, default) or `do_nothing` (return it).' }),
    supersteps: z.unknown().optional().openapi({ description: 'LangGraph: not supported (422); write state with `POST /threads/{thread_id}/state` after creating.' }),
    options: z
      .object({
        test_run: z.boolean().optional().openapi({ description: 'Marks the thread as a test run (echoed in metadata as `is_test_run`).' }),
        skip_memory_write_protection: z.boolean().optional().openapi({
          description: 'When true, writes under `/memories/` do not wait for approval (echoed in metadata).',
        }),
      })
      .optional(),
    metadata: metadata.optional().openapi({ description: 'Your own key/value pairs, searchable with `POST /threads/search`.' }),
  })
  .openapi('CreateThreadRequest');

const PendingInterrupt = z
  .object({
    id: z.string().nullable(),
    value: z.unknown().openapi({
      description:
        'For a tool approval: `{action_requests: [{name, args, description}], review_configs: [{action_name, allowed_decisions}]}`.',
    }),
  })
  .openapi('PendingInterrupt');

export const ThreadSchema = z
  .object({
    id: z.uuid(),
    thread_id: z.uuid().openapi({ description: 'The same as `id` (LangGraph’s name for it).' }),
    agent_id: z.uuid().nullable().openapi({ description: 'Null until the first run binds an agent (a thread created by a LangGraph client without one).' }),
    status: ThreadStatus,
    values: z.record(z.string(), z.unknown()).openapi({ description: 'The current state (`messages`, `files`, …), as `GET …/state` `values`.' }),
    interrupts: z.record(z.string(), z.array(PendingInterrupt)).openapi({
      description: 'What the thread waits for, by task id (LangGraph’s shape): each task its state has next, with its interrupts (none at a breakpoint, or for a task a failed or cancelled run cut off); empty when nothing is next.',
    }),
    metadata: metadata.openapi({ description: 'Your metadata plus `is_test_run`, `skip_memory_write_protection`, `tenant_id` and `ls_user_id`.' }),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('Thread');

const filterFields = {
  agent_id: z.uuid({ message: 'must be a UUID' }).optional().openapi({ description: 'Only threads of this agent.' }),
  status: ThreadStatus.optional(),
  metadata: metadata.optional().openapi({ description: 'Only threads whose metadata contains all these pairs.' }),
  values: z
    .record(z.string(), z.unknown())
    .optional()
    .refine((v) => !v || Object.keys(v).length === 0, 'filtering threads by state values is not supported; filter by metadata')
    .openapi({ description: 'LangGraph: not supported (422 unless empty).' }),
};

export const SearchThreadsRequest = z
  .object({
    ...filterFields,
    ids: z.array(z.uuid({ message: 'must be a UUID' })).optional().openapi({ description: 'LangGraph: only these threads.' }),
    limit: z.number().int().min(1).max(1000).default(10).openapi({ description: 'At most this many threads (default 10).' }),
    offset: z.number().int().min(0).default(0),
    sort_by: z.enum(['created_at', 'updated_at', 'status', 'thread_id']).optional().openapi({ description: 'Default `created_at`.' }),
    sort_order: z.enum(['asc', 'desc']).optional().openapi({ description: 'Default `desc`.' }),
    select: z.array(z.string()).optional().openapi({ description: 'LangGraph: accepted; every field is returned.' }),
  })
  .openapi('SearchThreadsRequest');

export const CountThreadsRequest = z.object(filterFields).openapi('CountThreadsRequest');

const CheckpointRef = z.object({ thread_id: z.string(), checkpoint_ns: z.string(), checkpoint_id: z.string(), checkpoint_map: z.null() }).openapi('CheckpointRef');

export const ThreadStateSchema = z
  .object({
    values: z.record(z.string(), z.unknown()).openapi({ description: 'The graph state: `messages`, `files`, …' }),
    next: z.array(z.string()).openapi({ description: 'Nodes that run next; empty when the thread is at rest.' }),
    interrupts: z.array(PendingInterrupt).openapi({ description: 'Pending interrupts.' }),
    tasks: z
      .array(z.object({ id: z.string(), name: z.string(), path: z.array(z.string()),
          error: z.string().nullable().openapi({ description: 'A failed task: its run’s error `{code, error, message}` as JSON (what `useStream` shows as the thread’s error).' }),
          interrupts: z.array(PendingInterrupt), checkpoint: z.null(), state: z.null() }))
      .openapi({ description: 'LangGraph’s tasks: what runs next, each with the interrupts it waits on, or the error it failed with.' }),
    checkpoint: CheckpointRef.nullable(),
    parent_checkpoint: CheckpointRef.nullable(),
    metadata: metadata,
    created_at: z.string().nullable(),
  })
  .openapi('ThreadState');

export const RunSchema = z
  .object({
    run_id: z.uuid(),
    thread_id: z.uuid(),
    assistant_id: z.uuid().openapi({ description: 'The agent id (LangGraph Platform calls the agent an assistant).' }),
    agent_id: z.uuid(),
    revision: z.string().openapi({ description: 'The agent revision (commit) the run executes.' }),
    status: RunStatus,
    attempt: z.number().int(),
    error: z
      .object({
        code: z.string().optional().openapi({ description: 'Why the run failed, a stable code of the run error codes (API reference description), e.g. `model_rate_limited`, `run_timeout`.' }),
        error: z.string().openapi({ description: 'The error type.' }),
        message: z.string().openapi({ description: 'What happened, for people.' }),
      })
      .nullable(),
    metadata: metadata,
    multitask_strategy: z.enum(MULTITASK_STRATEGIES).nullable().openapi({ description: 'What the run asked for if the thread was busy (LangGraph’s field; also in `metadata`).' }),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
    started_at: z.iso.datetime().nullable(),
    ended_at: z.iso.datetime().nullable(),
  })
  .openapi('Run');

// The run request (both wire forms) lives with the LangGraph translation: ../langgraph/run-request.ts.
export { RunRequest as StreamRunRequest } from '../langgraph/run-request.js';

/** The wire form of a thread (a superset of the hosted form and LangGraph's). */
export function presentThread(t: Thread): z.infer<typeof ThreadSchema> {
  const interrupts: Record<string, { id: string | null; value: unknown }[]> = {};
  // As LangGraph: every task the thread's state has next, by id (a breakpoint's with none).
  for (const task of t.state?.tasks ?? []) interrupts[task.id] = task.interrupts;
  return {
    id: t.id,
    thread_id: t.id,
    agent_id: t.agentId,
    status: t.status,
    values: t.state?.values ?? {},
    interrupts,
    metadata: t.metadata,
    created_at: t.createdAt.toISOString(),
    updated_at: t.updatedAt.toISOString(),
  };
}

/** The wire form of a run. */
export function presentRun(r: Run): z.infer<typeof RunSchema> {
  return {
    run_id: r.id,
    thread_id: r.threadId,
    assistant_id: r.agentId,
    agent_id: r.agentId,
    revision: r.revision,
    status: r.status,
    attempt: r.attempt,
    error: r.error,
    metadata: r.metadata,
    multitask_strategy: (MULTITASK_STRATEGIES as readonly unknown[]).includes(r.metadata.multitask_strategy) ? (r.metadata.multitask_strategy as (typeof MULTITASK_STRATEGIES)[number]) : null,
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
    started_at: r.startedAt?.toISOString() ?? null,
    ended_at: r.endedAt?.toISOString() ?? null,
  };
}

/** The wire form of a state (already plain; tasks get LangGraph's remaining fields). */
export function presentState(s: ThreadState): z.infer<typeof ThreadStateSchema> {
  return { ...s, tasks: s.tasks.map((t) => ({ ...t, path: [], checkpoint: null, state: null })) };
}
