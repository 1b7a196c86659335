// Starting runs and following their events. A start validates, then records the run (`pending`) and
// the thread (`busy`) in one statement and hands the run to the queue; workers do the rest. Resumes of
// a pending approval are checked against it here, so a wrong answer never reaches the graph.
import { randomUUID } from 'node:crypto';
import { sql, type RawBuilder, type Selectable } from 'kysely';
import type { Db } from '../../db/index.js';
import type { RunsTable } from '../../db/tables/runtime.js';
import { checkDecisions, isApprovalRequest, toMiddlewareResume, type WireApprovalRequest, type WireDecision } from '../../runtime/agent/approvals.js';
import type { RunWatch } from '../../runtime/events/hub.js';
import type { StoredEvent } from '../../runtime/events/types.js';
import type { RunInput } from '../../runtime/run-input.js';
import { type Caller, requireWrite } from '../caller.js';
import { HangarError, invalidField } from '../errors.js';
import type { ThreadStateReader } from '../threads/state.js';
import { toRun, type Run } from '../threads/service.js';
import { RunLifecycle, type CreatedRun, type RunWebhook, type StartSlot } from './lifecycle.js';
import { isFinalRunStatus, THREAD_TRANSITIONS, type ThreadStatus } from './status.js';

/** What the run service needs of the runtime. */
export interface RunPorts {
  /** Wake a worker: a run is pending. */
  announce(): Promise<void>;
  /** A free worker slot of this process, for a start that may claim its run at once (none: the run is queued). */
  reserve?(): StartSlot | undefined;
  /** A start is being accepted: workers in this process claim after it (call the result when done). */
  admit(): () => void;
  /** Resolves when no start is being accepted in this process (bounded): for work that can wait for them. */
  admitted(): Promise<void>;
  /**
   * Events of a run after `afterSeq` (`known` are its first ones, not read again), then live ones
   * until `isOver`; `watch` is the run's watch from before it was created.
   */
  subscribe(runId: string, afterSeq: number, isOver: () => Promise<boolean>, signal?: AbortSignal, known?: readonly StoredEvent[], watch?: RunWatch): AsyncGenerator<StoredEvent>;
  /** Watch a run about to be created, so that its stream need not read its status first. */
  watch?(runId: string): RunWatch;
  /** Every name a tool of the agent at `revision` (or of its subagents) may have, built-in tools included. */
  toolNames?(agent: { workspaceId: string; agentId: string; revision: string }): Promise<ReadonlySet<string>>;
  /** The model a run that ended before its agent was built counts under in usage (undefined: not known). */
  usageModel?(run: { workspaceId: string; agentId: string; revision: string }): Promise<string | undefined>;
  /** Stop executing `runId` wherever it runs (its row already says `interrupted`). */
  cancel(runId: string): Promise<void>;
  /**
   * End the pending approval of a thread without running its tools: each pending tool call gets a
   * result saying so. False when nothing was pending.
   */
  resolveInterrupt(target: { workspaceId: string; threadId: string; agentId: string }): Promise<boolean>;
}

/**
 * Keys of a run's metadata Hangar writes itself. A caller's value would be taken for Hangar's: a
 * `usage` of a run cancelled while queued, say, would be counted by the usage report.
 */
const RESERVED_WHY = {
  usage: 'model and token usage',
  attempt: 'attempt number',
  worker: 'worker',
  dropped_tools: 'tools left out',
  retried_after_lease_expiry: 'retries',
  handed_back: 'hand-backs',
} as const;
const RESERVED_METADATA = Object.keys(RESERVED_WHY) as (keyof typeof RESERVED_WHY)[];

/** 422 when a caller's run metadata (a run's, or a schedule's for its runs) holds a key Hangar records. */
export function checkRunMetadata(metadata: Record<string, unknown> | undefined): void {
  for (const key of RESERVED_METADATA) {
    if (metadata && Object.hasOwn(metadata, key)) throw invalidField(['metadata', key], `reserved: Hangar records the run's ${RESERVED_WHY[key]} there`);
  }
}

/**
 * How long a cancel with `wait`, or a rollback, waits for the cancelled run's worker to stop. Leases
 * bound it too: a lease is not renewed after a cancel, so a dead worker's ends within `runLeaseMs`.
 */
const STOP_WAIT_MS = 10_000;

/** What to do when the thread already has an active run (LangGraph Platform's multitask strategies). */
export const MULTITASK_STRATEGIES = ['reject', 'enqueue', 'interrupt', 'rollback'] as const;

/** A multitask strategy. */
export type MultitaskStrategy = (typeof MULTITASK_STRATEGIES)[number];

/** The `command.resume` of a run request. */
export type WireResume = { decisions?: WireDecision[] | undefined } & Record<string, unknown>;

/** A run request, validated by the API schema. */
export interface StartRunInput extends Omit<RunInput, 'command' | 'skip_memory_write_protection'> {
  agent_id: string;
  /** A resume of the thread's pending interrupt as sent on the wire, and LangGraph's `goto`/`update`. */
  command?: { resume?: WireResume | undefined; goto?: string | string[] | undefined; update?: Record<string, unknown> | undefined } | undefined;
  multitask_strategy?: MultitaskStrategy | undefined;
  /** The caller's own metadata of the run. */
  metadata?: Record<string, unknown> | undefined;
  /** A webhook to POST to when the run ends, registered in the statement that records the run. */
  webhook?: RunWebhook | undefined;
}

/** The first event (`metadata`) and the watch of runs `RunService.start` created, by the returned run (held no longer than it). */
const FIRST_EVENTS = new WeakMap<Run, { event: StoredEvent; watch: RunWatch | undefined }>();

/** Start runs; follow, cancel and resume them. */
export class RunService {
  constructor(
    private readonly db: Db,
    private readonly ports: RunPorts,
    private readonly state: ThreadStateReader,
    private readonly lifecycle: RunLifecycle = new RunLifecycle(db),
  ) {}

  /** Accept a run on `threadId`; its events follow through `events`. A thread without an agent takes the run's. */
  async start(caller: Caller, threadId: string, input: StartRunInput): Promise<Run> {
    requireWrite(caller);
    checkRunMetadata(input.metadata);
    // Accepting runs goes first: workers here claim once the starts in progress are done.
    const admitted = this.ports.admit();
    try {
      return await this.accept(caller, threadId, input);
    } finally {
      admitted();
    }
  }

  private async accept(caller: Caller, threadId: string, input: StartRunInput): Promise<Run> {
    // A plain start (no resume or command; reject or enqueue) needs nothing of the thread beforehand.
    if (!input.command && input.multitask_strategy !== 'interrupt' && input.multitask_strategy !== 'rollback') return this.acceptPlain(caller, threadId, input);
    const found = await this.db
      .selectFrom('threads as t')
      .leftJoin('agents as a', (join) =>
        join.on((eb) => eb('a.id', '=', eb.fn.coalesce('t.agent_id', eb.val(input.agent_id)))).onRef('a.workspace_id', '=', 't.workspace_id').on('a.deleted_at', 'is', null),
      )
      .select(['t.agent_id', 't.metadata', 't.status', 'a.head'])
      .where('t.workspace_id', '=', caller.workspaceId)
      .where('t.id', '=', threadId)
      .executeTakeFirst();
    const head = runnable(threadId, input.agent_id, found && { agentId: found.agent_id, head: found.head });
    const thread = found!; // runnable() threw otherwise
    const agentId = thread.agent_id ?? input.agent_id;
    const { agent_id: _agentId, command, multitask_strategy: strategy = 'reject', metadata: userMetadata, webhook, ...rest } = input;
    const runInput: RunInput = { ...rest, skip_memory_write_protection: thread.metadata.skip_memory_write_protection === true };
    const resumes = command?.resume !== undefined;
    let approval: { interruptId: string; resume: unknown } | undefined;
    if (command) {
      const { resume, ...steer } = command;
      // A retried resume (its first answer lost on the way) gets the run the first one started. On a
      // thread paused again (that run went on and paused anew), only a resume keyed by interrupt id
      // says which pause it answers: an unkeyed one answers the pause the thread has now.
      const pausedAgain = thread.status === 'interrupted';
      if (resumes && (!pausedAgain || isKeyedResume(resume))) {
        const replayed = await this.lifecycle.replayedApproval(threadId, resume, pausedAgain);
        if (replayed) return toRun(replayed);
      }
      const toolNames = () => this.ports.toolNames?.({ workspaceId: caller.workspaceId, agentId, revision: head });
      const resumed = resumes ? await this.resumeValue(threadId, thread.status, resume!, toolNames) : undefined;
      runInput.command = { ...steer, ...(resumed ? { resume: resumed.value } : {}) };
      if (resumed) approval = { interruptId: resumed.interruptId, resume };
    }
    const metadata = { ...userMetadata, assistant_id: agentId, is_test_run: thread.metadata.is_test_run === true, multitask_strategy: strategy };
    if (strategy === 'interrupt' || strategy === 'rollback') await this.stopActive(threadId, strategy === 'rollback');
    // Enqueue may join a busy thread (its run waits for the active one); the others need it free.
    // A resume needs the thread still interrupted: a concurrent resume or resolve must not both win.
    const threadFrom: ThreadStatus[] = resumes ? ['interrupted'] : startsFrom(strategy);
    // The first run of a thread without an agent binds it (a concurrent first run of another agent loses).
    const [created, watch] = await this.watched((id) =>
      this.lifecycle.create({ id, workspaceId: caller.workspaceId, threadId, agentId, revision: head, principal: caller.principal, input: runInput, metadata, threadFrom, approval, webhook }),
    );
    if (!created) {
      watch?.release();
      throw resumes ? notInterrupted(threadId) : busy(threadId);
    }
    return this.accepted(created, watch);
  }

  /**
   * A start without a resume that leaves other runs alone (`reject`, `enqueue`): the thread is read
   * in the statement that records the run, and what it saw says why when nothing was recorded.
   */
  private async acceptPlain(caller: Caller, threadId: string, input: StartRunInput): Promise<Run> {
    const { agent_id: agentId, command: _command, multitask_strategy: strategy = 'reject', metadata: userMetadata, webhook, ...rest } = input;
    // With a free worker slot here, the statement also claims the run when it can run at once.
    const slot = this.ports.reserve?.();
    try {
      const [result, watch] = await this.watched((id) =>
        this.lifecycle.createOnThread({
          id,
          workspaceId: caller.workspaceId,
          threadId,
          agentId,
          principal: caller.principal,
          input: rest,
          metadata: { ...userMetadata, assistant_id: agentId, multitask_strategy: strategy },
          threadFrom: startsFrom(strategy),
          webhook,
          claimFor: slot && { workerId: slot.workerId, leaseMs: slot.leaseMs },
        }),
      );
      if (result.created) {
        // A run left pending frees the slot before it is announced (a worker here may claim it).
        if (result.claimed) slot!.adopt(result.claimed);
        else slot?.release();
        return await this.accepted(result.created, watch);
      }
      watch?.release();
      if (!result.lostRace) runnable(threadId, agentId, result.thread);
      throw busy(threadId);
    } finally {
      slot?.release();
    }
  }

  /**
   * Record a run under an id watched from before the run exists, so that its stream need not read its
   * status (see RunEventHub.watch). A record that throws ends the watch; one that records nothing
   * leaves that to the caller.
   */
  private async watched<T>(record: (id: string) => Promise<T>): Promise<[T, RunWatch | undefined]> {
    const id = randomUUID();
    const watch = this.ports.watch?.(id);
    try {
      return [await record(id), watch];
    } catch (error) {
      watch?.release();
      throw error;
    }
  }

  /**
   * Hand a recorded run to the queue (unless its start claimed it); its stream starts with the
   * `metadata` event just written.
   */
  private async accepted(created: CreatedRun, watch: RunWatch | undefined): Promise<Run> {
    if (created.row.status === 'pending') await this.ports.announce();
    const run = toRun(created.row);
    // The stream of this run starts with the event just written; it need not be read back.
    const json = created.firstEvent;
    FIRST_EVENTS.set(run, { event: { seq: 1, event: 'metadata', json, data: JSON.parse(json) as unknown }, watch });
    return run;
  }

  /**
   * The run's events after `afterSeq`, then live ones until the run ends (or `signal` aborts).
   * `started`: the run as `start` returned it, whose first event is then known without a read.
   */
  events(runId: string, afterSeq: number, signal?: AbortSignal, started?: Run): AsyncGenerator<StoredEvent> {
    const first = started && started.id === runId ? FIRST_EVENTS.get(started) : undefined;
    // The first status check of a stream just started only catches a cancel that came before it
    // subscribed: it waits for the starts in progress (a burst of them shares the control pool).
    let waitForStarts = first !== undefined;
    const isOver = async () => {
      if (waitForStarts) {
        waitForStarts = false;
        await this.ports.admitted();
      }
      const row = await this.db.selectFrom('runs').select('status').where('id', '=', runId).executeTakeFirst();
      return !row || isFinalRunStatus(row.status);
    };
    return this.ports.subscribe(runId, afterSeq, isOver, signal, first ? [first.event] : [], first?.watch);
  }

  /**
   * Cancel a pending or running run: it ends `interrupted` and its thread goes back to `idle` (or
   * stays `busy` for a queued run). A run that already ended is returned as it is, untouched (no
   * rollback either), as the LangGraph server answers a cancel of an ended run with success: its SDK's
   * clients cancel in a `finally`, after the run may have ended.
   */
  async cancel(caller: Caller, threadId: string, runId: string, action: 'interrupt' | 'rollback' = 'interrupt', wait = false): Promise<Run> {
    requireWrite(caller);
    const exists = await this.db.selectFrom('runs').select('id').where('workspace_id', '=', caller.workspaceId).where('thread_id', '=', threadId).where('id', '=', runId).executeTakeFirst();
    if (!exists) throw new HangarError('run_not_found', `no run with id ${runId} on thread ${threadId}`);
    const rows = await this.interruptRuns(sql`id = ${runId}`);
    if (rows.length === 0) {
      // Ended before the cancel (or deleted meanwhile by a rollback: then it is gone).
      const ended = await this.db.selectFrom('runs').selectAll().where('id', '=', runId).executeTakeFirst();
      if (!ended) throw new HangarError('run_not_found', `no run with id ${runId} on thread ${threadId}`);
      return toRun(ended);
    }
    if (action === 'rollback') await this.rollBack(threadId, [runId]);
    // `wait`: answer once the run's worker has stopped executing it (bounded by its lease).
    else if (wait) await this.lifecycle.untilStopped([runId], STOP_WAIT_MS);
    return toRun(rows[0]!);
  }

  /** End the thread's pending approval without running the tools (`thread_not_interrupted` otherwise). */
  async resolveInterrupt(caller: Caller, threadId: string): Promise<void> {
    requireWrite(caller);
    const thread = await this.db.selectFrom('threads').select(['agent_id', 'status']).where('workspace_id', '=', caller.workspaceId).where('id', '=', threadId).executeTakeFirst();
    if (!thread) throw new HangarError('thread_not_found', `no thread with id ${threadId} in this workspace`);
    // A running thread has nothing pending yet (it may pause later): say it is busy, as a start does.
    if (thread.status === 'busy') throw busyResolving(threadId);
    if (thread.status !== 'interrupted') throw notInterrupted(threadId);
    // Take the thread first so that a concurrent resume cannot start on it meanwhile.
    if (!(await this.lifecycle.takeInterrupted(threadId))) {
      // A resume took it first: it is running now.
      const now = await this.db.selectFrom('threads').select('status').where('id', '=', threadId).executeTakeFirst();
      throw now?.status === 'busy' ? busyResolving(threadId) : notInterrupted(threadId);
    }
    let resolved = false;
    try {
      resolved = await this.ports.resolveInterrupt({ workspaceId: caller.workspaceId, threadId, agentId: thread.agent_id ?? '' });
    } finally {
      await this.lifecycle.releaseTaken(threadId, resolved ? 'idle' : 'interrupted');
    }
    if (!resolved) throw notInterrupted(threadId);
  }

  /** The LangGraph resume value of a wire resume, checked against the thread's pending interrupts. */
  private async resumeValue(
    threadId: string,
    status: string,
    resume: WireResume,
    toolNames: () => Promise<ReadonlySet<string>> | undefined,
  ): Promise<{ value: unknown; interruptId: string }> {
    if (status === 'busy') throw busyResolving(threadId, 'resume');
    if (status !== 'interrupted') throw notInterrupted(threadId);
    const { interrupts, checkpoint } = await this.state.current(threadId);
    if (interrupts.length === 0) throw notInterrupted(threadId);
    const approvals = interrupts.filter((i): i is { id: string | null; value: WireApprovalRequest } => isApprovalRequest(i.value));
    const approval = approvals[0];
    // The key of the approval record: the interrupt answered (or the checkpoint that paused).
    const interruptId = (approval ?? interrupts[0])?.id ?? checkpoint?.checkpoint_id ?? 'pause';
    // Other pauses (an OAuth authorization, say) take the resume value as it is.
    if (!approval) return { value: resume, interruptId };
    if (!resume || typeof resume !== 'object') throw invalidField(['command', 'resume', 'decisions'], 'required: one decision per pending action request');
    // Several approval requests at once (subagents that ran in parallel): LangGraph would give one
    // unkeyed answer to every one of them, so each must be answered by its interrupt id.
    if (approvals.length > 1) return { value: keyedResume(approvals, resume, await toolNames()), interruptId };
    // LangGraph clients may key the resume by interrupt id.
    if (!Array.isArray(resume.decisions) && approval.id && approval.id in resume) resume = resume[approval.id] as WireResume;
    if (!Array.isArray(resume.decisions)) throw invalidField(['command', 'resume', 'decisions'], 'required: one decision per pending action request');
    const problem = checkDecisions(approval.value, resume.decisions, await toolNames());
    if (problem) throw invalidField(['command', 'resume', 'decisions'], problem);
    return { value: toMiddlewareResume(approval.value, resume.decisions), interruptId };
  }

  /** Interrupt the thread's active runs (and delete them for a rollback) before a new run starts. */
  private async stopActive(threadId: string, remove: boolean): Promise<void> {
    const stopped = await this.interruptRuns(sql`thread_id = ${threadId}`);
    if (remove && stopped.length > 0) await this.rollBack(threadId, stopped.map((r) => r.id));
  }

  /**
   * Delete stopped runs and what they wrote into the thread's state (LangGraph's rollback). The
   * worker deletes the checkpoints again once it has stopped, for a step it was still writing.
   */
  private async rollBack(threadId: string, runIds: string[]): Promise<void> {
    // A worker still stopping one of them could write a step after the delete: wait for it first.
    // One that does not stop in time (stalled, or dead with a live lease) deletes its checkpoints
    // again when it ends (RunWorker.forgetIfRolledBack).
    await this.lifecycle.untilStopped(runIds, STOP_WAIT_MS);
    await this.db.deleteFrom('runs').where('id', 'in', runIds).execute();
    for (const id of runIds) await this.state.rollback(threadId, id);
  }

  /**
   * Mark the matching active runs `interrupted`, free their thread unless another run waits on it,
   * and tell the workers executing them to stop.
   */
  private async interruptRuns(which: RawBuilder<unknown>): Promise<Selectable<RunsTable>[]> {
    const rows = await this.lifecycle.cancel(which);
    await Promise.all(rows.map((r) => this.ports.cancel(r.id)));
    // A run cancelled while queued has no worker to record its usage: it counts under its agent's model.
    const queued = rows.filter((r) => r.lease_owner === null);
    await Promise.all(
      queued.map(async (r) => {
        const model = await this.ports.usageModel?.({ workspaceId: r.workspace_id, agentId: r.agent_id, revision: r.revision });
        if (model !== undefined) await this.lifecycle.recordUsage(r.id, { model, input_tokens: 0, output_tokens: 0 });
      }),
    );
    return rows;
  }
}

/** A resume whose answers are keyed by interrupt id (not one `decisions` list). */
function isKeyedResume(resume: unknown): boolean {
  return resume !== null && typeof resume === 'object' && !Array.isArray(resume) && !('decisions' in resume) && Object.keys(resume).length > 0;
}

/** Thread statuses a start may take the thread from, by multitask strategy (enqueue joins a busy thread). */
function startsFrom(strategy: MultitaskStrategy): ThreadStatus[] {
  return strategy === 'enqueue' ? [...THREAD_TRANSITIONS.busy, 'busy'] : [...THREAD_TRANSITIONS.busy];
}

/**
 * The agent revision a start on this thread runs (its agent's head), or the reason it cannot:
 * no such thread, another agent than the thread's, or the agent missing or deleted.
 */
function runnable(threadId: string, agentId: string, thread: { agentId: string | null; head: string | null } | undefined): string {
  if (!thread) throw new HangarError('thread_not_found', `no thread with id ${threadId} in this workspace`);
  if (thread.agentId !== null && thread.agentId !== agentId) throw invalidField(['agent_id'], `must be the thread's agent (${thread.agentId})`);
  if (thread.head) return thread.head;
  if (thread.agentId === null) throw new HangarError('agent_not_found', `no agent with id ${agentId} in this workspace`);
  throw new HangarError('agent_deleted', `agent ${thread.agentId} of thread ${threadId} was deleted; the thread can be read but not run`);
}

function busy(threadId: string): HangarError {
  return new HangarError(
    'thread_busy',
    `thread ${threadId} already has an active run; wait for it to finish, or send multitask_strategy enqueue, interrupt or rollback`,
  );
}

/** A resume or resolve sent while a run of the thread is active: nothing is pending yet. */
function busyResolving(threadId: string, what: 'resume' | 'resolve' = 'resolve'): HangarError {
  return new HangarError('thread_busy', `thread ${threadId} has an active run, so it has no pending interrupt to ${what}; wait for the run to pause or finish, or cancel it`);
}

function notInterrupted(threadId: string): HangarError {
  return new HangarError('thread_not_interrupted', `thread ${threadId} has no pending interrupt to resume or resolve`);
}

/**
 * The resume of several pending approval requests: `{<interrupt id>: {decisions: [...]}, ...}`, every
 * request answered, each checked against its own request; LangGraph routes each answer by its id.
 */
function keyedResume(approvals: { id: string | null; value: WireApprovalRequest }[], resume: WireResume, toolNames: ReadonlySet<string> | undefined): Record<string, unknown> {
  const listing = approvals.map((a) => `${a.id} (${a.value.action_requests.map((r) => r.name).join(', ')})`).join('; ');
  const form = `answer each by its interrupt id: {"resume": {"<interrupt id>": {"decisions": [...]}, ...}}; pending: ${listing}`;
  if (Array.isArray(resume.decisions)) {
    throw invalidField(['command', 'resume', 'decisions'], `${approvals.length} approval requests are pending at once (subagents that ran in parallel), so one list of decisions cannot say which answers which; ${form}`);
  }
  const pendingIds = new Set(approvals.map((a) => a.id));
  for (const key of Object.keys(resume)) {
    if (!pendingIds.has(key)) throw invalidField(['command', 'resume', key], `no pending approval request has this id; ${form}`);
  }
  const value: Record<string, unknown> = {};
  for (const a of approvals) {
    const entry = a.id === null ? undefined : (resume[a.id] as { decisions?: unknown } | undefined);
    if (a.id === null || !entry || typeof entry !== 'object' || !Array.isArray(entry.decisions)) {
      throw invalidField(['command', 'resume', a.id ?? 'decisions'], `required: the decisions for approval request ${a.id}; ${form}`);
    }
    const bad = (entry.decisions as unknown[]).findIndex((d) => !d || typeof d !== 'object' || Array.isArray(d));
    if (bad >= 0) throw invalidField(['command', 'resume', a.id, 'decisions', bad], 'must be a decision object such as {"type": "approve"}');
    const decisions = entry.decisions as WireDecision[];
    const problem = checkDecisions(a.value, decisions, toolNames);
    if (problem) throw invalidField(['command', 'resume', a.id, 'decisions'], problem);
    value[a.id] = toMiddlewareResume(a.value, decisions);
  }
  return value;
}
