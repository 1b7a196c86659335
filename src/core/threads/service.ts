// Threads: a conversation with one agent, its status, and (through LangGraph's checkpoints) its state.
import { isDeepStrictEqual } from 'node:util';
import { agentMetadata } from './bound.js';
import { sql, type Selectable } from 'kysely';
import type { Db } from '../../db/index.js';
import type { RunsTable, ThreadsTable } from '../../db/tables/runtime.js';
import type { AgentService } from '../agents/service.js';
import { type Caller, requireWrite } from '../caller.js';
import { HangarError, invalidField } from '../errors.js';
import type { RunStatus, ThreadStatus } from '../runs/status.js';
import type { HistoryFilter, ThreadStateReader, ThreadState } from './state.js';
import { listThreads, type ListThreadsQuery } from './list.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A thread. */
export interface Thread {
  id: string;
  workspaceId: string;
  /** Null until the first run binds an agent (a thread created by a LangGraph client). */
  agentId: string | null;
  status: ThreadStatus;
  /** Pending interrupts (read for a single `interrupted` thread; absent in lists). */
  interrupts?: ThreadState['interrupts'] | undefined;
  /** The current state (read for a single thread; absent in lists unless asked for). */
  state?: ThreadState | undefined;
  metadata: Record<string, unknown>;
  createdAt: Date;
  updatedAt: Date;
}

/** A run of a thread. */
export interface Run {
  id: string;
  threadId: string;
  agentId: string;
  revision: string;
  status: RunStatus;
  attempt: number;
  input: unknown;
  metadata: Record<string, unknown>;
  error: { error: string; message: string; code?: string } | null;
  createdAt: Date;
  updatedAt: Date;
  startedAt: Date | null;
  endedAt: Date | null;
}

export interface CreateThreadInput {
  /** Absent: the first run binds the agent. */
  agent_id?: string | undefined;
  /** The id to create the thread with (LangGraph clients choose it); generated when absent. */
  thread_id?: string | undefined;
  /** What to do when `thread_id` exists: `raise` (409, the default) or `do_nothing` (return it). */
  if_exists?: 'raise' | 'do_nothing' | undefined;
  options?: { test_run?: boolean | undefined; skip_memory_write_protection?: boolean | undefined } | undefined;
  metadata?: Record<string, unknown> | undefined;
  /** Made for a stateless run: deleted once its run has ended (`deleteTemporary`, `sweepTemporary`). */
  temporary?: boolean | undefined;
}

/**
 * Metadata keys Hangar writes into a thread: its creation options (which decide whether memory writes
 * pause, and whether usage counts its runs), workspace, creator, and agent (`assistant_id`, `graph_id`).
 */
export const RECORDED_METADATA = ['is_test_run', 'skip_memory_write_protection', 'tenant_id', 'ls_user_id', 'assistant_id', 'graph_id'] as const;

/** Orders of thread search. */
export type ThreadSort = 'created_at' | 'updated_at' | 'status' | 'thread_id';

/** Filters of thread search and count. */
export interface ThreadFilter {
  agent_id?: string | undefined;
  status?: ThreadStatus | undefined;
  metadata?: Record<string, unknown> | undefined;
}

/** Create, find and delete threads; read their state and runs. */
export class ThreadService {
  constructor(
    private readonly db: Db,
    private readonly agents: AgentService,
    private readonly state: ThreadStateReader,
  ) {}

  async create(caller: Caller, input: CreateThreadInput): Promise<Thread> {
    requireWrite(caller);
    if (input.agent_id !== undefined) await this.agents.findRow(caller.workspaceId, input.agent_id);
    const metadata = {
      ...(input.metadata ?? {}),
      // The options are echoed in metadata, as the hosted runtime does.
      is_test_run: input.options?.test_run ?? false,
      skip_memory_write_protection: input.options?.skip_memory_write_protection ?? false,
      tenant_id: caller.workspaceId,
      ls_user_id: caller.principal,
      // Bound to its agent now, as a LangGraph server marks a thread when a run is created on it.
      ...(input.agent_id !== undefined ? agentMetadata(input.agent_id) : {}),
    };
    const row = await this.db
      .insertInto('threads')
      .values({
        ...(input.thread_id ? { id: input.thread_id } : {}),
        workspace_id: caller.workspaceId,
        agent_id: input.agent_id ?? null,
        metadata: JSON.stringify(metadata),
        principal: caller.principal,
        ...(input.temporary ? { temporary: true } : {}),
      })
      .onConflict((oc) => oc.column('id').doNothing())
      .returningAll()
      .executeTakeFirst();
    if (row) return toThread(row);
    // The id is taken (ids are global, so another workspace's thread answers the same 409).
    if (input.if_exists === 'do_nothing') {
      const existing = await this.db.selectFrom('threads').selectAll().where('workspace_id', '=', caller.workspaceId).where('id', '=', input.thread_id!).executeTakeFirst();
      if (existing) return toThread(existing);
    }
    throw new HangarError('thread_exists', `a thread with id ${input.thread_id} already exists`);
  }

  async get(caller: Caller, threadId: string): Promise<Thread> {
    const thread = toThread(await this.row(caller, threadId));
    // What the thread waits for, and its values, live in its checkpoint.
    thread.state = (await this.withRunErrors(caller, [await this.state.current(threadId)]))[0]!;
    thread.interrupts = thread.state.interrupts;
    return thread;
  }

  /**
   * States as LangGraph shows them after a failure or a cancel: the tasks of a failed run carry its
   * error (`{code, error, message}` as JSON, never a key or a server path), and the tasks a cancel
   * or a time limit cut off read as failed too (their node stays in `next`; `useStream` drops both
   * after its stop).
   * The run is the one that wrote the checkpoint (its `run_id`).
   */
  private async withRunErrors(caller: Caller, states: ThreadState[]): Promise<ThreadState[]> {
    const runOf = (s: ThreadState) => (typeof s.metadata.run_id === 'string' && UUID.test(s.metadata.run_id) ? s.metadata.run_id : undefined);
    const cutOff = (t: ThreadState['tasks'][number]) => t.error === null && t.interrupts.length === 0;
    const ids = [...new Set(states.filter((s) => s.tasks.some((t) => t.error !== null || cutOff(t))).map(runOf))].filter((id): id is string => id !== undefined);
    if (ids.length === 0) return states;
    const rows = await this.db.selectFrom('runs').select(['id', 'status', 'error']).where('workspace_id', '=', caller.workspaceId).where('id', 'in', ids).execute();
    const byId = new Map(rows.map((r) => [r.id, r]));
    return states.map((s) => {
      const run = byId.get(runOf(s) ?? '');
      if (!run) return s;
      // A run that paused (at a breakpoint, for an approval) ended `success`: its tasks wait.
      const stopped = run.status === 'error' || run.status === 'timeout' || run.status === 'interrupted';
      const error = JSON.stringify(run.error ?? (run.status === 'interrupted' ? { code: 'run_cancelled', error: 'RunCancelled', message: `run ${run.id} was cancelled` } : { code: 'run_failed', error: 'Error', message: `run ${run.id} ended ${run.status}` }));
      return { ...s, tasks: s.tasks.map((t) => (t.error !== null || (stopped && cutOff(t)) ? { ...t, error } : t)) };
    });
  }

  /**
   * Merge `metadata` into the thread's metadata (a key set to null is removed). The keys Hangar
   * records (RECORDED_METADATA: the options the thread was created with, its workspace, creator and
   * agent) may be sent back as they are but not changed or removed: a 422 naming the key, nothing
   * written. They decide what runs do (memory write protection, usage), so they stay as created.
   */
  async updateMetadata(caller: Caller, threadId: string, metadata: Record<string, unknown>): Promise<Thread> {
    requireWrite(caller);
    const removed = Object.keys(metadata).filter((k) => metadata[k] === null);
    const kept = Object.fromEntries(Object.entries(metadata).filter(([, v]) => v !== null));
    await this.db.transaction().execute(async (trx) => {
      const current = await trx
        .selectFrom('threads')
        .select('metadata')
        .where('workspace_id', '=', caller.workspaceId)
        .where('id', '=', threadId)
        .forUpdate()
        .executeTakeFirst();
      if (!current) throw new HangarError('thread_not_found', `no thread with id ${threadId} in this workspace`);
      const stored = current.metadata as Record<string, unknown>;
      for (const key of RECORDED_METADATA) {
        if (!(key in metadata) || isDeepStrictEqual(metadata[key], stored[key])) continue;
        throw invalidField(
          ['metadata', key],
          key === 'skip_memory_write_protection' || key === 'is_test_run'
            ? `is set when the thread is created (options.${key === 'is_test_run' ? 'test_run' : key}) and cannot be changed; create a new thread instead`
            : `is recorded by Hangar (${key === 'assistant_id' || key === 'graph_id' ? 'the thread’s agent' : key === 'tenant_id' ? 'the thread’s workspace' : 'the thread’s creator'}) and cannot be changed or removed`,
        );
      }
      await trx
        .updateTable('threads')
        .set({ metadata: sql`(metadata || ${JSON.stringify(kept)}::jsonb) - ${sql.val(removed)}::text[]` as never, updated_at: new Date() })
        .where('workspace_id', '=', caller.workspaceId)
        .where('id', '=', threadId)
        .execute();
    });
    return this.get(caller, threadId);
  }

  /** Threads matching `filter` with their current state, newest first (LangGraph lists carry `values`). */
  async searchWithState(caller: Caller, filter: ThreadFilter, page: { limit: number; offset: number; ids?: string[] | undefined; sortBy?: ThreadSort | undefined; sortOrder?: 'asc' | 'desc' | undefined }): Promise<Thread[]> {
    const threads = await this.search(caller, filter, page);
    await Promise.all(
      threads.map(async (t) => {
        t.state = await this.state.current(t.id);
        t.interrupts = t.state.interrupts;
      }),
    );
    return threads;
  }

  /** One page of an agent's threads with their current state, latest activity first (the hosted SDK's list). */
  async list(caller: Caller, query: ListThreadsQuery): Promise<{ threads: Thread[]; nextCursor: string | null }> {
    const page = await listThreads(this.db, caller.workspaceId, query);
    const threads = page.rows.map(toThread);
    await Promise.all(
      threads.map(async (t) => {
        t.state = await this.state.current(t.id);
        t.interrupts = t.state.interrupts;
      }),
    );
    return { threads, nextCursor: page.nextCursor };
  }

  /**
   * A new thread with the same agent, metadata and checkpoints (LangGraph's copy); its runs stay
   * with the original.
   */
  async copy(caller: Caller, threadId: string): Promise<Thread> {
    requireWrite(caller);
    const source = await this.row(caller, threadId);
    const row = await this.db
      .insertInto('threads')
      .values({
        workspace_id: caller.workspaceId,
        agent_id: source.agent_id,
        status: source.status === 'busy' ? 'idle' : source.status,
        metadata: JSON.stringify(source.metadata),
        principal: caller.principal,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    await this.state.copy(threadId, row.id);
    return this.get(caller, row.id);
  }

  /**
   * Write `values` into the thread's state as node `asNode` (LangGraph's `updateState`), through the
   * graph of the agent at its latest revision. A thread with an active run is a 409.
   */
  async updateState(caller: Caller, threadId: string, values: Record<string, unknown>, asNode: string | undefined): Promise<ThreadState> {
    requireWrite(caller);
    const thread = await this.row(caller, threadId);
    if (thread.status === 'busy') throw new HangarError('thread_busy', `thread ${threadId} has an active run; update its state when the run has finished`);
    if (!thread.agent_id) throw new HangarError('thread_has_no_agent', `thread ${threadId} has no agent yet; start a run with an assistant_id first`);
    // The thread's agent was deleted: the thread can be read but not changed, as for a run (502).
    const agent = await this.agents.findRow(caller.workspaceId, thread.agent_id).catch((error: unknown) => {
      if (error instanceof HangarError && error.code === 'agent_not_found') {
        throw new HangarError('agent_deleted', `agent ${thread.agent_id} of thread ${threadId} was deleted; the thread can be read but not changed`);
      }
      throw error;
    });
    await this.state.update({ workspaceId: caller.workspaceId, agentId: agent.id, revision: agent.head, threadId }, values, asNode);
    return this.state.current(threadId);
  }

  /** The drawable graph of an agent at a revision. */
  async graphOf(caller: Caller, target: { agentId: string; revision: string }, xray: boolean): Promise<Record<string, unknown>> {
    return this.state.graph({ workspaceId: caller.workspaceId, ...target }, xray);
  }

  /** Delete a run that has ended (`run_active` while it is pending or running). */
  async deleteRun(caller: Caller, threadId: string, runId: string): Promise<void> {
    requireWrite(caller);
    const run = await this.run(caller, threadId, runId);
    const deleted = await this.db.deleteFrom('runs').where('id', '=', run.id).where('status', 'not in', ['pending', 'running']).executeTakeFirst();
    if (Number(deleted.numDeletedRows) === 0) throw new HangarError('run_active', `run ${runId} is still ${run.status}; cancel it first`);
  }

  /** The thread's row (for the run service), or `thread_not_found`. */
  async row(caller: Caller, threadId: string): Promise<Selectable<ThreadsTable>> {
    const row = await this.db
      .selectFrom('threads')
      .selectAll()
      .where('workspace_id', '=', caller.workspaceId)
      .where('id', '=', threadId)
      .executeTakeFirst();
    if (!row) throw new HangarError('thread_not_found', `no thread with id ${threadId} in this workspace`);
    return row;
  }

  /** Threads matching `filter`, newest first (or as `sortBy`/`sortOrder` say); `ids` narrows to those. */
  async search(caller: Caller, filter: ThreadFilter, page: { limit: number; offset: number; ids?: string[] | undefined; sortBy?: ThreadSort | undefined; sortOrder?: 'asc' | 'desc' | undefined }): Promise<Thread[]> {
    let q = this.filtered(caller, filter).selectAll();
    if (page.ids) q = q.where('id', 'in', page.ids.length > 0 ? page.ids : ['00000000-0000-0000-0000-000000000000']);
    const rows = await q.orderBy(page.sortBy === 'thread_id' ? 'id' : (page.sortBy ?? 'created_at'), page.sortOrder ?? 'desc').orderBy('id').limit(page.limit).offset(page.offset).execute();
    return rows.map(toThread);
  }

  async count(caller: Caller, filter: ThreadFilter): Promise<number> {
    const row = await this.filtered(caller, filter).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /**
   * Delete a thread with its runs and events (its checkpoints too). A missing thread is a 404; a
   * thread with an active run is a 409 (the run would go on writing to a thread that is gone).
   */
  async delete(caller: Caller, threadId: string): Promise<void> {
    requireWrite(caller);
    const deleted = await this.db
      .deleteFrom('threads')
      .where('workspace_id', '=', caller.workspaceId)
      .where('id', '=', threadId)
      .where('status', '<>', 'busy')
      .executeTakeFirst();
    if (Number(deleted.numDeletedRows) === 0) {
      await this.row(caller, threadId); // 404 when it does not exist
      throw new HangarError('thread_busy', `thread ${threadId} has an active run; delete it when the run has finished`);
    }
  }

  /**
   * Delete the temporary thread of a stateless run once its run has ended (its follower saw the end).
   * A thread that is not temporary, is gone, has an active run again or a webhook still to send is
   * left alone (the sweeper deletes the last two kinds later).
   */
  async deleteTemporary(caller: Caller, threadId: string): Promise<void> {
    await this.db
      .deleteFrom('threads')
      .where('workspace_id', '=', caller.workspaceId)
      .where('id', '=', threadId)
      .where('temporary', '=', true)
      .where('status', '<>', 'busy')
      .where(noPendingWebhook)
      .execute();
  }

  /**
   * Delete temporary threads (of any workspace) whose run has been over for `graceSeconds`: those of
   * background stateless runs, of clients that went away, of processes that crashed before deleting
   * theirs. Up to 100 a call; returns how many went.
   */
  async sweepTemporary(graceSeconds: number): Promise<number> {
    const rows = await this.db
      .deleteFrom('threads')
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('threads')
          .select('id')
          .where('temporary', '=', true)
          .where('status', '<>', 'busy')
          .where('updated_at', '<', sql<Date>`now() - make_interval(secs => ${graceSeconds})`)
          .where(noPendingWebhook)
          .limit(100),
      )
      .where('status', '<>', 'busy')
      .where(noPendingWebhook)
      .returning('id')
      .execute();
    return rows.length;
  }

  /** The thread's current state from its latest checkpoint. */
  async currentState(caller: Caller, threadId: string): Promise<ThreadState> {
    await this.row(caller, threadId);
    return (await this.withRunErrors(caller, [await this.state.current(threadId)]))[0]!;
  }

  /** The state at one of the thread's checkpoints (a 404 `checkpoint_not_found` when it has no such checkpoint). */
  async stateAt(caller: Caller, threadId: string, checkpointId: string): Promise<ThreadState> {
    await this.row(caller, threadId);
    const state = await this.state.at(threadId, checkpointId);
    if (!state) throw new HangarError('checkpoint_not_found', `thread ${threadId} has no checkpoint ${checkpointId}`);
    return (await this.withRunErrors(caller, [state]))[0]!;
  }

  /** Past states, newest first (only those `filter` picks). */
  async history(caller: Caller, threadId: string, limit: number, filter?: HistoryFilter): Promise<ThreadState[]> {
    await this.row(caller, threadId);
    return this.withRunErrors(caller, await this.state.history(threadId, limit, filter));
  }

  async runs(caller: Caller, threadId: string, page: { limit: number; offset: number; status?: RunStatus | undefined }): Promise<Run[]> {
    await this.row(caller, threadId);
    let q = this.db.selectFrom('runs').selectAll().where('workspace_id', '=', caller.workspaceId).where('thread_id', '=', threadId);
    if (page.status) q = q.where('status', '=', page.status);
    const rows = await q.orderBy('created_at', 'desc').orderBy('id').limit(page.limit).offset(page.offset).execute();
    return rows.map(toRun);
  }

  async run(caller: Caller, threadId: string, runId: string): Promise<Run> {
    const row = await this.db
      .selectFrom('runs')
      .selectAll()
      .where('workspace_id', '=', caller.workspaceId)
      .where('thread_id', '=', threadId)
      .where('id', '=', runId)
      .executeTakeFirst();
    if (!row) throw new HangarError('run_not_found', `no run with id ${runId} on thread ${threadId}`);
    return toRun(row);
  }

  private filtered(caller: Caller, filter: ThreadFilter) {
    let q = this.db.selectFrom('threads').where('workspace_id', '=', caller.workspaceId);
    if (filter.agent_id) q = q.where('agent_id', '=', filter.agent_id);
    if (filter.status) q = q.where('status', '=', filter.status);
    if (filter.metadata && Object.keys(filter.metadata).length > 0) {
      q = q.where(sql<boolean>`metadata @> ${JSON.stringify(filter.metadata)}::jsonb`);
    }
    return q;
  }
}

/**
 * A temporary thread waits for the webhooks of its runs: their payload is read from its run and state
 * when they are sent (the sweeper deletes it once they are delivered or given up).
 */
const noPendingWebhook = sql<boolean>`NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.thread_id = threads.id AND d.state = 'pending')`;

/** The domain form of a thread row. */
export function toThread(row: Selectable<ThreadsTable>): Thread {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    agentId: row.agent_id,
    status: row.status,
    metadata: row.metadata,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** The domain form of a run row. */
export function toRun(row: Selectable<RunsTable>): Run {
  return {
    id: row.id,
    threadId: row.thread_id,
    agentId: row.agent_id,
    revision: row.revision,
    status: row.status,
    attempt: row.attempt,
    input: row.input,
    metadata: row.metadata,
    error: row.error,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    startedAt: row.started_at,
    endedAt: row.ended_at,
  };
}
