// Wire shapes of threads, their state and their runs (SPEC "Thread", "Run request"; where SPEC is
// silent, the hosted API reference and LangGraph Platform conventions).
import { z } from '@hono/zod-openapi';
import { RUN_STATUSES, THREAD_STATUSES } from '../../core/runs/status.js';
import type { Run, Thread } from '../../core/threads/service.js';
import type { ThreadState } from '../../core/threads/state.js';
import { STREAM_MODES } from '../../runtime/events/types.js';
import { MESSAGE_ROLES } from '../../runtime/run-input.js';
import { DECISION_TYPES } from '../../runtime/agent/approvals.js';
import { MULTITASK_STRATEGIES } from '../../core/runs/service.js';

const ThreadStatus = z.enum(THREAD_STATUSES).openapi('ThreadStatus', {
  description: '`idle`: ready for a run. `busy`: a run is pending or running. `interrupted`: waiting for a person. `error`: the last run failed (a new run may start).',
});
const RunStatus = z.enum(RUN_STATUSES).openapi('RunStatus');
const metadata = z.record(z.string(), z.unknown());

export const CreateThreadRequest = z
  .object({
    agent_id: z.uuid({ message: 'must be a UUID' }).openapi({ description: 'The agent that runs on this thread.' }),
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
    agent_id: z.uuid(),
    status: ThreadStatus,
    interrupts: z.array(PendingInterrupt).openapi({ description: 'What the thread waits for when `interrupted`; empty otherwise.' }),
    metadata: metadata.openapi({ description: 'Your metadata plus `is_test_run`, `skip_memory_write_protection`, `tenant_id` and `ls_user_id`.' }),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('Thread');

const filterFields = {
  agent_id: z.uuid({ message: 'must be a UUID' }).optional().openapi({ description: 'Only threads of this agent.' }),
  status: ThreadStatus.optional(),
  metadata: metadata.optional().openapi({ description: 'Only threads whose metadata contains all these pairs.' }),
};

export const SearchThreadsRequest = z
  .object({
    ...filterFields,
    limit: z.number().int().min(1).max(1000).default(10).openapi({ description: 'At most this many threads (default 10).' }),
    offset: z.number().int().min(0).default(0),
  })
  .openapi('SearchThreadsRequest');

export const CountThreadsRequest = z.object(filterFields).openapi('CountThreadsRequest');

const CheckpointRef = z.object({ thread_id: z.string(), checkpoint_ns: z.string(), checkpoint_id: z.string() }).openapi('CheckpointRef');

export const ThreadStateSchema = z
  .object({
    values: z.record(z.string(), z.unknown()).openapi({ description: 'The graph state: `messages`, `files`, …' }),
    next: z.array(z.string()).openapi({ description: 'Nodes that run next; empty when the thread is at rest.' }),
    interrupts: z.array(PendingInterrupt).openapi({ description: 'Pending interrupts.' }),
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
    error: z.object({ error: z.string(), message: z.string() }).nullable(),
    metadata: metadata,
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
    started_at: z.iso.datetime().nullable(),
    ended_at: z.iso.datetime().nullable(),
  })
  .openapi('Run');

const Decision = z
  .object({
    type: z.enum(DECISION_TYPES).openapi({
      description:
        '`approve` runs the tool as requested; `edit` runs it with `edited_action`; `reject` tells the model no (optional `message`); `respond` gives the model `message` as the tool’s result.',
    }),
    edited_action: z
      .object({ name: z.string().optional(), args: z.record(z.string(), z.unknown()) })
      .optional()
      .openapi({ description: 'For `edit`: the arguments to run the tool with (and optionally another tool name).' }),
    message: z.string().optional().openapi({ description: 'For `reject`: why (optional). For `respond`: the answer the model gets.' }),
  })
  .openapi('Decision');

export const StreamRunRequest = z
  .object({
    agent_id: z.uuid({ message: 'must be a UUID' }).openapi({ description: 'Required; must be the thread’s agent.' }),
    messages: z
      .array(
        z.object({
          role: z.enum(MESSAGE_ROLES).openapi({ description: '`user`, `assistant`, `system` or `tool`.' }),
          content: z.string(),
        }),
      )
      .optional()
      .openapi({ description: 'Input messages, appended to the thread’s conversation. Required unless `command` resumes; ignored then (a placeholder is fine).' }),
    command: z
      .object({
        resume: z
          .object({ decisions: z.array(Decision).optional().openapi({ description: 'One decision per pending action request, in order.' }) })
          .catchall(z.unknown()),
      })
      .optional()
      .openapi({ description: 'Resume the thread’s pending interrupt instead of sending new input. The thread must be `interrupted`.' }),
    multitask_strategy: z.enum(MULTITASK_STRATEGIES).optional().openapi({
      description:
        'When the thread already has an active run: `reject` (default, 409), `enqueue` (run after it), `interrupt` (cancel it, then run), `rollback` (cancel and delete it, then run).',
    }),
    on_disconnect: z.enum(['cancel', 'continue']).optional().openapi({
      description: '`cancel`: cancel the run when this stream’s client goes away. Default `continue` (the run goes on; rejoin its stream).',
    }),
    stream_mode: z
      .array(z.enum(STREAM_MODES))
      .optional()
      .openapi({ description: 'Any of `values`, `updates`, `messages-tuple` (event name `messages`), `custom` (what tools write as they work: a sandbox command’s output as it comes, `{sandbox_output: {command, text}}`). Default `["values"]`.' }),
    stream_subgraphs: z.boolean().optional().openapi({ description: 'Also stream subagents’ events, named `<mode>|<namespace>`. Default false.' }),
    user_timezone: z.string().optional().openapi({
      description: 'IANA zone; the local date and time there go into the system prompt. UTC when absent or unknown.',
      example: 'Europe/Paris',
    }),
  })
  .openapi('StreamRunRequest');

/** The wire form of a thread. */
export function presentThread(t: Thread): z.infer<typeof ThreadSchema> {
  return {
    id: t.id,
    agent_id: t.agentId,
    status: t.status,
    interrupts: t.interrupts ?? [],
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
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
    started_at: r.startedAt?.toISOString() ?? null,
    ended_at: r.endedAt?.toISOString() ?? null,
  };
}

/** The wire form of a state (already plain). */
export function presentState(s: ThreadState): z.infer<typeof ThreadStateSchema> {
  return s;
}
