// Threads: a conversation with one agent, its status, and (through LangGraph's checkpoints) its state.
import { sql, type Selectable } from 'kysely';
import type { Db } from '../../db/index.js';
import type { RunsTable, ThreadsTable } from '../../db/tables/runtime.js';
import type { AgentService } from '../agents/service.js';
import { type Caller, requireWrite } from '../caller.js';
import { HangarError } from '../errors.js';
import type { RunStatus, ThreadStatus } from '../runs/status.js';
import type { ThreadStateReader, ThreadState } from './state.js';

/** A thread. */
export interface Thread {
  id: string;
  workspaceId: string;
  agentId: string;
  status: ThreadStatus;
  /** Pending interrupts (read for a single `interrupted` thread; absent in lists). */
  interrupts?: ThreadState['interrupts'] | undefined;
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
  agent_id: string;
  options?: { test_run?: boolean | undefined; skip_memory_write_protection?: boolean | undefined } | undefined;
  metadata?: Record<string, unknown> | undefined;
}

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
    await this.agents.findRow(caller.workspaceId, input.agent_id);
    const metadata = {
      ...(input.metadata ?? {}),
      // The options are echoed in metadata, as the hosted runtime does.
      is_test_run: input.options?.test_run ?? false,
      skip_memory_write_protection: input.options?.skip_memory_write_protection ?? false,
      tenant_id: caller.workspaceId,
      ls_user_id: caller.principal,
    };
    const row = await this.db
      .insertInto('threads')
      .values({ workspace_id: caller.workspaceId, agent_id: input.agent_id, metadata: JSON.stringify(metadata), principal: caller.principal })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toThread(row);
  }

  async get(caller: Caller, threadId: string): Promise<Thread> {
    const thread = toThread(await this.row(caller, threadId));
    // What the thread waits for lives in its checkpoint; only an interrupted thread has any.
    if (thread.status === 'interrupted') thread.interrupts = (await this.state.current(threadId)).interrupts;
    return thread;
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

  /** Threads matching `filter`, newest first. */
  async search(caller: Caller, filter: ThreadFilter, page: { limit: number; offset: number }): Promise<Thread[]> {
    const rows = await this.filtered(caller, filter).selectAll().orderBy('created_at', 'desc').orderBy('id').limit(page.limit).offset(page.offset).execute();
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
    await this.state.forget(threadId);
  }

  /** The thread's current state from its latest checkpoint. */
  async currentState(caller: Caller, threadId: string): Promise<ThreadState> {
    await this.row(caller, threadId);
    return this.state.current(threadId);
  }

  /** Past states, newest first. */
  async history(caller: Caller, threadId: string, limit: number): Promise<ThreadState[]> {
    await this.row(caller, threadId);
    return this.state.history(threadId, limit);
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
