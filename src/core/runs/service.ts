// Starting runs and following their events. A start validates, then records the run (`pending`) and
// the thread (`busy`) in one transaction and hands the run to the queue; workers do the rest.
import type { Db } from '../../db/index.js';
import { isUniqueViolation } from '../../db/errors.js';
import type { StoredEvent } from '../../runtime/events/types.js';
import type { RunInput } from '../../runtime/run-input.js';
import type { AgentService } from '../agents/service.js';
import { type Caller, requireWrite } from '../caller.js';
import { HangarError, invalidField } from '../errors.js';
import { toRun, type Run, type ThreadService } from '../threads/service.js';
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
    private readonly threads: ThreadService,
    private readonly agents: AgentService,
    private readonly ports: RunPorts,
  ) {}

  /** Accept a run on `threadId`; its events follow through `events`. */
  async start(caller: Caller, threadId: string, input: StartRunInput): Promise<Run> {
    requireWrite(caller);
    const thread = await this.threads.row(caller, threadId);
    if (input.agent_id !== thread.agent_id) {
      throw invalidField(['agent_id'], `must be the thread's agent (${thread.agent_id})`);
    }
    let revision: string;
    try {
      revision = (await this.agents.findRow(caller.workspaceId, thread.agent_id)).head;
    } catch (error) {
      if (error instanceof HangarError && error.code === 'agent_not_found') {
        throw new HangarError('agent_deleted', `agent ${thread.agent_id} of thread ${threadId} was deleted; the thread can be read but not run`);
      }
      throw error;
    }
    const { agent_id: _agentId, ...runInput } = input;
    try {
      const row = await this.db.transaction().execute(async (trx) => {
        const claimed = await trx
          .updateTable('threads')
          .set({ status: 'busy', updated_at: new Date() })
          .where('id', '=', threadId)
          .where('status', 'in', THREAD_TRANSITIONS.busy)
          .executeTakeFirst();
        if (Number(claimed.numUpdatedRows) === 0) throw busy(threadId);
        return trx
          .insertInto('runs')
          .values({
            workspace_id: caller.workspaceId,
            thread_id: threadId,
            agent_id: thread.agent_id,
            revision,
            input: JSON.stringify(runInput),
            principal: caller.principal,
            metadata: JSON.stringify({ assistant_id: thread.agent_id, is_test_run: thread.metadata.is_test_run === true }),
          })
          .returningAll()
          .executeTakeFirstOrThrow();
      });
      await this.ports.announce();
      return toRun(row);
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
