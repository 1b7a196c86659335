// Starting runs and following their events. A start validates, then records the run (`pending`) and
// the thread (`busy`) in one transaction and hands the run to the queue; workers do the rest.
import { sql, type Selectable } from 'kysely';
import type { Db } from '../../db/index.js';
import type { RunsTable } from '../../db/tables/runtime.js';
import { isUniqueViolation } from '../../db/errors.js';
import type { StoredEvent } from '../../runtime/events/types.js';
import type { RunInput } from '../../runtime/run-input.js';
import { type Caller, requireWrite } from '../caller.js';
import { HangarError, invalidField } from '../errors.js';
import { toRun, type Run } from '../threads/service.js';
import { isFinalRunStatus, THREAD_TRANSITIONS } from './status.js';

/** What the run service needs of the runtime. */
export interface RunPorts {
  /** Wake a worker: a run is pending. */
  announce(): Promise<void>;
  /** Events of a run after `afterSeq`, then live ones until `isOver`. */
  subscribe(runId: string, afterSeq: number, isOver: () => Promise<boolean>, signal?: AbortSignal): AsyncGenerator<StoredEvent>;
}

/** A run request, validated by the API schema. */
export interface StartRunInput extends RunInput {
  agent_id: string;
}

/** Start runs; follow their event streams. */
export class RunService {
  constructor(
    private readonly db: Db,
    private readonly ports: RunPorts,
  ) {}

  /**
   * Accept a run on `threadId`; its events follow through `events`. Two round trips: the thread
   * with its agent's head, then one statement that marks the thread busy and inserts the run.
   */
  async start(caller: Caller, threadId: string, input: StartRunInput): Promise<Run> {
    requireWrite(caller);
    const thread = await this.db
      .selectFrom('threads as t')
      .leftJoin('agents as a', (join) => join.onRef('a.id', '=', 't.agent_id').onRef('a.workspace_id', '=', 't.workspace_id').on('a.deleted_at', 'is', null))
      .select(['t.agent_id', 't.metadata', 'a.head'])
      .where('t.workspace_id', '=', caller.workspaceId)
      .where('t.id', '=', threadId)
      .executeTakeFirst();
    if (!thread) throw new HangarError('thread_not_found', `no thread with id ${threadId} in this workspace`);
    if (input.agent_id !== thread.agent_id) {
      throw invalidField(['agent_id'], `must be the thread's agent (${thread.agent_id})`);
    }
    if (!thread.head) {
      throw new HangarError('agent_deleted', `agent ${thread.agent_id} of thread ${threadId} was deleted; the thread can be read but not run`);
    }
    const { agent_id: _agentId, ...runInput } = input;
    const metadata = { assistant_id: thread.agent_id, is_test_run: thread.metadata.is_test_run === true };
    try {
      const { rows } = await sql<Selectable<RunsTable>>`
        WITH claimed AS (
          UPDATE threads SET status = 'busy', updated_at = now()
          WHERE id = ${threadId} AND status IN (${sql.join([...THREAD_TRANSITIONS.busy])})
          RETURNING id
        )
        INSERT INTO runs (workspace_id, thread_id, agent_id, revision, input, principal, metadata)
        SELECT ${caller.workspaceId}, id, ${thread.agent_id}, ${thread.head}, ${JSON.stringify(runInput)}::jsonb, ${caller.principal}, ${JSON.stringify(metadata)}::jsonb
        FROM claimed
        RETURNING *`.execute(this.db);
      if (rows.length === 0) throw busy(threadId);
      await this.ports.announce();
      return toRun(rows[0]!);
    } catch (error) {
      if (isUniqueViolation(error)) throw busy(threadId);
      throw error;
    }
  }

  /** The run's events after `afterSeq`, then live ones until the run ends (or `signal` aborts). */
  events(runId: string, afterSeq: number, signal?: AbortSignal): AsyncGenerator<StoredEvent> {
    const isOver = async () => {
      const row = await this.db.selectFrom('runs').select('status').where('id', '=', runId).executeTakeFirst();
      return !row || isFinalRunStatus(row.status);
    };
    return this.ports.subscribe(runId, afterSeq, isOver, signal);
  }
}

function busy(threadId: string): HangarError {
  return new HangarError('thread_busy', `thread ${threadId} already has an active run; wait for it to finish before starting another`);
}
