// The one owner of run and thread status. Every status write of a run (create, claim, finish, cancel,
// sweep) and every thread status write that follows from one goes through this module, guarded by the
// transition tables of ./status.ts: an UPDATE only matches rows whose current status is an allowed
// source of its target, so a race (a cancel racing a finish, two sweepers) loses cleanly instead of
// overwriting. The rule "free the thread unless another run holds it" is written once (`freeThreads`).
// The runtime executes runs and reports outcomes here; it never writes a status itself.
import { randomUUID } from 'node:crypto';
import { sql, type RawBuilder, type Selectable } from 'kysely';
import type { Db } from '../../db/index.js';
import type { RunsTable } from '../../db/tables/runtime.js';
import { isUniqueViolation } from '../../db/errors.js';
import type { RunInput } from '../../runtime/run-input.js';
import { agentMetadata } from '../threads/bound.js';
import { RUN_TRANSITIONS, THREAD_TRANSITIONS, type RunStatus, type ThreadStatus } from './status.js';

/** A run claimed by a worker. */
export interface ClaimedRun {
  id: string;
  workspaceId: string;
  threadId: string;
  agentId: string;
  revision: string;
  principal: string;
  attempt: number;
  input: RunInput;
  /** The last event already in the run's log (its `metadata` at least). */
  lastSeq: number;
  /** Seconds since the run was created, at claim (its wait in the queue on a first attempt). */
  waitedSeconds?: number;
  /** The thread's metadata at claim (tracing reads its project and test-run mark). */
  threadMetadata?: Record<string, unknown> | undefined;
}

/** How a run ended, and the thread status that follows. */
export interface RunOutcome {
  status: Extract<RunStatus, 'success' | 'error' | 'interrupted' | 'timeout'>;
  thread: Extract<ThreadStatus, 'idle' | 'interrupted' | 'error'>;
  error?: { error: string; message: string; code?: string | undefined } | undefined;
  /** Tokens the run's model calls used, and the model (kept in the run's metadata for usage reports). */
  usage?: { model: string; input_tokens: number; output_tokens: number } | undefined;
  /** Tools named in tools.json that their server did not offer (kept on the run's record). */
  droppedTools?: { name: string; mcp_server_url: string; reason: string }[] | undefined;
  /** The error itself, stack included: for the server log at debug level only, never stored or sent. */
  cause?: unknown;
}

/** A transition outside the tables: a programming error, never a race. */
export class IllegalTransition extends Error {
  constructor(kind: 'run' | 'thread', from: string, to: string) {
    super(`${kind} status ${from} → ${to} is not an allowed transition`);
    this.name = 'IllegalTransition';
  }
}

/** Whether a run may go from `from` to `to`. */
export function canRunTransition(from: RunStatus, to: RunStatus): boolean {
  return RUN_TRANSITIONS[to].includes(from);
}

/** Whether a thread may go from `from` to `to`. */
export function canThreadTransition(from: ThreadStatus, to: ThreadStatus): boolean {
  return THREAD_TRANSITIONS[to].includes(from);
}

/** `status IN (<allowed sources of target>)`, optionally narrowed to `only` (each checked against the table). */
function runFrom(target: RunStatus, only?: readonly RunStatus[], column = 'status'): RawBuilder<unknown> {
  const sources = only ?? RUN_TRANSITIONS[target];
  for (const s of sources) if (!canRunTransition(s, target)) throw new IllegalTransition('run', s, target);
  return sql`${sql.ref(column)} IN (${sql.join(sources)})`;
}

function threadFrom(target: ThreadStatus, only?: readonly ThreadStatus[]): RawBuilder<unknown> {
  const sources = only ?? THREAD_TRANSITIONS[target];
  for (const s of sources) if (!canThreadTransition(s, target)) throw new IllegalTransition('thread', s, target);
  return sql`t.status IN (${sql.join(sources)})`;
}

/**
 * Runs (alias `alias`) cancelled while executing whose worker has not yet said it stopped: they keep
 * its lease until it does (`release`) or the lease expires (the worker died). A thread with one starts
 * no other run meanwhile.
 */
function stopping(alias: string): RawBuilder<unknown> {
  const r = sql.table(alias);
  // `lease_owner IS NOT NULL` lets the lookup use the index of runs holding a lease (migration 1700).
  return sql`(${r}.lease_owner IS NOT NULL AND ${r}.status <> 'running' AND ${r}.lease_expires_at > now())`;
}

/**
 * The one rule for freeing threads: the threads of the runs in CTE `settled` (columns `id`,
 * `thread_id`) go from `busy` to `to`, unless another run of theirs is still pending or running.
 * (Statements see the table as it was before them, so the settled runs themselves are excluded by id.)
 */
function freeThreads(settled: string, to: Exclude<ThreadStatus, 'busy'>): RawBuilder<unknown> {
  const cte = sql.table(settled);
  return sql`UPDATE threads t SET status = ${to}, updated_at = now()
    WHERE t.id IN (SELECT thread_id FROM ${cte}) AND ${threadFrom(to, ['busy'])}
      AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.thread_id = t.id AND r.status IN ('pending', 'running')
                      AND r.id NOT IN (SELECT id FROM ${cte}))
    RETURNING t.id`;
}

/**
 * The end of a statement that created runs in CTE `created`: their place in the queue (`ahead`) and
 * their first event, `metadata`, written with them.
 */
const queuedTail = sql`ahead AS (
          SELECT count(*)::int AS n FROM runs WHERE status = 'pending'
        ), first_event AS (
          INSERT INTO run_events (run_id, seq, event, data)
          SELECT c.id, 1, 'metadata', '{"run_id":"' || c.id || '","attempt":1,"status":"' || c.status || '","queue_position":'
            || CASE WHEN c.status = 'pending' THEN a.n ELSE 0 END || '}'
          FROM created c, ahead a
          RETURNING data
        )`;

/**
 * The webhook delivery of runs in CTE `created`, inserted by the statement that creates them: a run
 * that asked for a webhook never exists without its delivery (a crash or a failed insert between two
 * statements would have left the run running and its webhook unsent).
 */
function webhookOf(webhook: RunWebhook | undefined): RawBuilder<unknown> {
  if (!webhook) return sql``;
  return sql`, webhook AS (
          INSERT INTO webhook_deliveries (workspace_id, run_id, thread_id, url, schedule_id)
          SELECT workspace_id, id, thread_id, ${webhook.url}, ${webhook.scheduleId ?? null}::uuid FROM created
        )`;
}

/** Where a run's webhook POSTs when it ends, and the schedule that started the run. */
export interface RunWebhook {
  url: string;
  scheduleId?: string | null | undefined;
}

/** A run a statement created, and the text of the first event it wrote (its stream sends it as it is). */
export interface CreatedRun {
  row: Selectable<RunsTable>;
  firstEvent: string;
}

/** A claimed run from its row and what the claiming statement learnt besides. */
function claimedRun(
  r: Pick<Selectable<RunsTable>, 'id' | 'workspace_id' | 'thread_id' | 'agent_id' | 'revision' | 'principal' | 'attempt'> & { input: unknown },
  extra: Pick<ClaimedRun, 'lastSeq' | 'waitedSeconds' | 'threadMetadata'>,
): ClaimedRun {
  return { id: r.id, workspaceId: r.workspace_id, threadId: r.thread_id, agentId: r.agent_id, revision: r.revision, principal: r.principal, attempt: r.attempt, input: r.input as RunInput, ...extra };
}

/** A worker slot a start may claim its run for (see `createOnThread`). */
export interface StartClaim {
  workerId: string;
  leaseMs: number;
}

/** A free worker slot held for a start (`RunPorts.reserve`). */
export interface StartSlot extends StartClaim {
  /** The start's statement claimed the run for this slot: execute it (once the starts in progress are accepted). */
  adopt(run: ClaimedRun): void;
  /** The slot is not needed (the run waits in the queue, or was not created); harmless after `adopt`. */
  release(): void;
}

/** What `create` records. */
export interface NewRun {
  /** The run's id when the caller chose it (a random one otherwise). */
  id?: string;
  workspaceId: string;
  threadId: string;
  agentId: string;
  revision: string;
  principal: string;
  input: RunInput;
  metadata: Record<string, unknown>;
  /** Thread statuses the run may start from (`busy` too for an enqueued run). */
  threadFrom: readonly ThreadStatus[];
  /** A resume: the interrupt it answers and the resume as sent, recorded with the run (once per interrupt). */
  approval?: { interruptId: string; resume: unknown } | undefined;
  /** The run's webhook, registered with it. */
  webhook?: RunWebhook | undefined;
}

/** Owns run and thread status. Stateless: any number of instances share the database. */
export class RunLifecycle {
  constructor(private readonly db: Db) {}

  /**
   * Record a `pending` run, take its thread (`busy`) and write the run's first event (`metadata`,
   * with its place in the queue) in one statement, so a client has something to show at once.
   * Undefined when the thread was not in one of `threadFrom`; `thread_busy` races surface as a
   * unique violation (one active run per thread), reported as undefined too.
   */
  async create(run: NewRun): Promise<CreatedRun | undefined> {
    const sources = run.threadFrom.filter((s) => s !== 'busy');
    const joinBusy = run.threadFrom.includes('busy');
    const id = run.id ?? randomUUID();
    try {
      const { rows } = await sql<Selectable<RunsTable> & { first_event: string }>`
        WITH claimed AS (
          UPDATE threads t SET status = 'busy', agent_id = ${run.agentId}, metadata = t.metadata || ${JSON.stringify(agentMetadata(run.agentId))}::jsonb, updated_at = now()
          WHERE t.id = ${run.threadId} AND (${sources.length > 0 ? threadFrom('busy', sources) : sql`false`} ${joinBusy ? sql`OR t.status = 'busy'` : sql``})
            -- A thread without an agent (made by a LangGraph client) is bound by its first run.
            AND (t.agent_id IS NULL OR t.agent_id = ${run.agentId})
          RETURNING t.id
        ), created AS (
          INSERT INTO runs (id, workspace_id, thread_id, agent_id, revision, input, principal, metadata)
          SELECT ${id}::uuid, ${run.workspaceId}, id, ${run.agentId}, ${run.revision}, ${JSON.stringify(run.input)}::jsonb, ${run.principal}, ${JSON.stringify(run.metadata)}::jsonb
          FROM claimed
          RETURNING *
        ), approval AS (
          INSERT INTO run_approvals (thread_id, interrupt_id, run_id, resume)
          SELECT thread_id, ${run.approval?.interruptId ?? ''}, id, ${JSON.stringify(run.approval?.resume ?? null)}::jsonb
          FROM created WHERE ${run.approval ? sql`true` : sql`false`}
        )${webhookOf(run.webhook)}, ${queuedTail}
        SELECT c.*, (SELECT data FROM first_event) AS first_event FROM created c`.execute(this.db);
      const row = rows[0];
      if (!row) return undefined;
      const { first_event: firstEvent, ...rest } = row;
      return { row: rest, firstEvent };
    } catch (error) {
      if (isUniqueViolation(error)) return undefined;
      throw error;
    }
  }

  /**
   * `create` for a plain start (no resume), reading the thread in the same statement: one round trip
   * instead of two. The run's revision is the agent's head; `skip_memory_write_protection` (input)
   * and `is_test_run` (metadata) come from the thread's metadata. `thread` is the thread as the
   * statement saw it (undefined: no such thread in the workspace), to say why nothing was created.
   *
   * `claimFor`: a worker of this process has a free slot. The run is then recorded `running`, held by
   * that worker (attempt 1, with its lease), as a claim would leave it: one statement less per run and
   * no wait for the worker to claim. Only when it could be claimed at once: its thread was free and no
   * claimable run waits in the queue (older runs go first). Otherwise it is recorded `pending` as without.
   */
  async createOnThread(run: Omit<NewRun, 'revision' | 'approval'> & { claimFor?: StartClaim | undefined }): Promise<{
    thread: { agentId: string | null; status: ThreadStatus; head: string | null; metadata: Record<string, unknown> | null } | undefined;
    created?: CreatedRun;
    /** The run as claimed for `claimFor`, when the statement claimed it. */
    claimed?: ClaimedRun;
    /** Another run took the thread while this statement ran (one active run per thread). */
    lostRace?: boolean;
  }> {
    const sources = run.threadFrom.filter((s) => s !== 'busy');
    const joinBusy = run.threadFrom.includes('busy');
    const id = run.id ?? randomUUID();
    const flag = (key: string) => sql`coalesce(c.metadata -> ${key} = 'true'::jsonb, false)`;
    const claim = run.claimFor;
    // A run recorded claimed skips `pending`, as if it had been created and then claimed.
    if (claim && !canRunTransition('pending', 'running')) throw new IllegalTransition('run', 'pending', 'running');
    try {
      const { rows } = await sql<
        Selectable<RunsTable> & { first_event: string; thread_agent_id: string | null; thread_status: ThreadStatus; thread_head: string | null; thread_metadata: Record<string, unknown> | null }
      >`
        WITH cur AS (
          SELECT t.id, t.agent_id, t.status, t.metadata, a.head
          FROM threads t LEFT JOIN agents a ON a.id = coalesce(t.agent_id, ${run.agentId}::uuid) AND a.workspace_id = t.workspace_id AND a.deleted_at IS NULL
          WHERE t.workspace_id = ${run.workspaceId} AND t.id = ${run.threadId}
        ), claimed AS (
          UPDATE threads t SET status = 'busy', agent_id = ${run.agentId}, metadata = t.metadata || ${JSON.stringify(agentMetadata(run.agentId))}::jsonb, updated_at = now()
          FROM cur
          WHERE t.id = cur.id AND cur.head IS NOT NULL AND (cur.agent_id IS NULL OR cur.agent_id = ${run.agentId})
            AND (${sources.length > 0 ? threadFrom('busy', sources) : sql`false`} ${joinBusy ? sql`OR t.status = 'busy'` : sql``})
          RETURNING t.id, cur.head, cur.metadata, cur.status AS was
        ), start AS (
          SELECT c.*, ${
            claim
              ? sql`c.was <> 'busy' AND NOT EXISTS (SELECT 1 FROM runs o WHERE o.thread_id = c.id AND ${stopping('o')}) AND NOT EXISTS (
                  SELECT 1 FROM runs r WHERE r.status = 'pending'
                    AND NOT EXISTS (SELECT 1 FROM runs o WHERE o.thread_id = r.thread_id AND (o.status = 'running' OR ${stopping('o')})))`
              : sql`false`
          } AS at_once FROM claimed c
        ), created AS (
          INSERT INTO runs (id, workspace_id, thread_id, agent_id, revision, input, principal, metadata, status, attempt, lease_owner, lease_expires_at, started_at)
          SELECT ${id}::uuid, ${run.workspaceId}, c.id, ${run.agentId}, c.head,
            ${JSON.stringify(run.input)}::jsonb || jsonb_build_object('skip_memory_write_protection', ${flag('skip_memory_write_protection')}),
            ${run.principal},
            ${JSON.stringify(run.metadata)}::jsonb || jsonb_build_object('is_test_run', ${flag('is_test_run')})
              || CASE WHEN c.at_once THEN jsonb_build_object('attempt', 1, 'worker', ${claim?.workerId ?? null}::text) ELSE '{}'::jsonb END,
            CASE WHEN c.at_once THEN 'running' ELSE 'pending' END,
            CASE WHEN c.at_once THEN 1 ELSE 0 END,
            CASE WHEN c.at_once THEN ${claim?.workerId ?? null}::text END,
            CASE WHEN c.at_once THEN now() + make_interval(secs => ${(claim?.leaseMs ?? 0) / 1000}) END,
            CASE WHEN c.at_once THEN now() END
          FROM start c
          RETURNING *
        )${webhookOf(run.webhook)}, ${queuedTail}
        SELECT c.*, (SELECT data FROM first_event) AS first_event, cur.agent_id AS thread_agent_id, cur.status AS thread_status, cur.head AS thread_head, cur.metadata AS thread_metadata
        FROM cur LEFT JOIN created c ON true`.execute(this.db);
      const row = rows[0];
      if (!row) return { thread: undefined };
      const { first_event: firstEvent, thread_agent_id: agentId, thread_status: status, thread_head: head, thread_metadata: metadata, ...rest } = row;
      const thread = { agentId, status, head, metadata };
      if (!rest.id) return { thread };
      const created = { row: rest, firstEvent };
      if (rest.status !== 'running') return { thread, created };
      // Its log holds the `metadata` the statement wrote; it waited for nothing.
      return { thread, created, claimed: claimedRun(rest, { lastSeq: 1, waitedSeconds: 0, threadMetadata: metadata ?? {} }) };
    } catch (error) {
      // Another run took the thread in the meantime (one active run per thread): busy.
      if (isUniqueViolation(error)) return { thread: undefined, lostRace: true };
      throw error;
    }
  }

  /**
   * The run a resume already started, when `resume` repeats the approval behind the thread's latest
   * run (a client retrying a resume whose answer it lost): the retry gets that run, not a second one.
   * `namingPause`: only a resume keyed by the id of the pause it answered counts (the thread is paused
   * again, and an unkeyed resume answers that new pause).
   */
  async replayedApproval(threadId: string, resume: unknown, namingPause = false): Promise<Selectable<RunsTable> | undefined> {
    const { rows } = await sql<Selectable<RunsTable>>`
      SELECT r.* FROM run_approvals a JOIN runs r ON r.id = a.run_id
      WHERE a.thread_id = ${threadId} AND a.resume = ${JSON.stringify(resume)}::jsonb
        ${namingPause ? sql`AND a.resume ? a.interrupt_id` : sql``}
        AND r.id = (SELECT id FROM runs WHERE thread_id = ${threadId} ORDER BY created_at DESC, id DESC LIMIT 1)`.execute(this.db);
    return rows[0];
  }

  /**
   * Claim up to `limit` pending runs for `workerId`, oldest first, each the oldest pending run of a
   * thread with none running. Two workers racing for one thread's runs: the loser's statement breaks
   * the one-running-run-per-thread index and claims nothing this time.
   */
  async claim(workerId: string, leaseMs: number, limit: number): Promise<ClaimedRun[]> {
    try {
      const { rows } = await sql<{
        id: string;
        workspace_id: string;
        thread_id: string;
        agent_id: string;
        revision: string;
        principal: string;
        attempt: number;
        input: RunInput;
        last_seq: string | number;
        waited_seconds: number;
        thread_metadata: Record<string, unknown> | null;
      }>`
        UPDATE runs SET status = 'running', attempt = attempt + 1, lease_owner = ${workerId},
          metadata = metadata || jsonb_build_object('attempt', attempt + 1, 'worker', ${workerId}::text),
          lease_expires_at = now() + make_interval(secs => ${leaseMs / 1000}),
          started_at = coalesce(started_at, now()), updated_at = now()
        WHERE id IN (
          SELECT id FROM runs r WHERE status = 'pending'
            AND NOT EXISTS (SELECT 1 FROM runs o WHERE o.thread_id = r.thread_id AND (o.status = 'running' OR ${stopping('o')}))
            AND NOT EXISTS (SELECT 1 FROM runs o WHERE o.thread_id = r.thread_id AND o.status = 'pending' AND (o.created_at, o.id) < (r.created_at, r.id))
          ORDER BY created_at LIMIT ${limit} FOR UPDATE SKIP LOCKED
        ) AND ${runFrom('running')}
        RETURNING id, workspace_id, thread_id, agent_id, revision, principal, attempt, input,
          (SELECT coalesce(max(seq), 0) FROM run_events e WHERE e.run_id = runs.id) AS last_seq,
          EXTRACT(EPOCH FROM now() - created_at)::float8 AS waited_seconds,
          (SELECT t.metadata FROM threads t WHERE t.id = runs.thread_id) AS thread_metadata`.execute(this.db);
      return rows.map((r) => claimedRun(r, { lastSeq: Number(r.last_seq), waitedSeconds: Number(r.waited_seconds), threadMetadata: r.thread_metadata ?? {} }));
    } catch (error) {
      if (isUniqueViolation(error)) return [];
      throw error;
    }
  }

  /**
   * Extend the leases `workerId` holds on `runIds`; returns the ids it no longer holds (cancelled,
   * or swept after a lost lease), which the worker must stop.
   */
  async renew(workerId: string, leaseMs: number, runIds: string[]): Promise<string[]> {
    if (runIds.length === 0) return [];
    const { rows } = await sql<{ id: string }>`
      UPDATE runs SET lease_expires_at = now() + make_interval(secs => ${leaseMs / 1000})
      WHERE id IN (${sql.join(runIds)}) AND status = 'running' AND lease_owner = ${workerId}
      RETURNING id`.execute(this.db);
    const held = new Set(rows.map((r) => r.id));
    return runIds.filter((id) => !held.has(id));
  }

  /**
   * Settle a run `workerId` holds and free its thread, in one statement. False when the run was no
   * longer its own (cancelled, or swept after its lease expired): nothing is written then.
   */
  async finish(workerId: string, runId: string, outcome: RunOutcome, attempt?: number): Promise<boolean> {
    return (await this.settle(workerId, runId, outcome, undefined, attempt)).settled;
  }

  /**
   * `finish`, also saying whether the thread stays held by another run (one enqueued behind this
   * one: the worker claims again), and sending `notify` (a NOTIFY on `channel`) with the same
   * statement, so subscribers elsewhere learn of the end without another round trip. With `attempt`,
   * only that attempt settles: a worker that lost a run's lease and claimed it again holds the same
   * `lease_owner`, and the older attempt must not settle the newer one.
   */
  async settle(
    workerId: string,
    runId: string,
    outcome: RunOutcome,
    notify?: { channel: string; payload: string },
    attempt?: number,
    /**
     * An event to end the run's log with, written by this statement after the last stored one: the
     * run's error when its log could not be written by the run itself (the database was away).
     */
    lastEvent?: { event: string; json: string },
  ): Promise<{ settled: boolean; threadHeld: boolean }> {
    const extra = JSON.stringify({
      ...(outcome.droppedTools?.length ? { dropped_tools: outcome.droppedTools } : {}),
      ...(outcome.usage ? { usage: outcome.usage } : {}),
    });
    const { rows } = await sql<{ settled: number; freed: number }>`
      WITH settled AS (
        UPDATE runs SET status = ${outcome.status}, error = ${outcome.error ? JSON.stringify(outcome.error) : null}::jsonb,
          ended_at = now(), updated_at = now(), lease_owner = NULL, lease_expires_at = NULL,
          metadata = metadata || ${extra}::jsonb
        WHERE id = ${runId} AND ${runFrom(outcome.status, ['running'])} AND lease_owner = ${workerId}
          ${attempt !== undefined ? sql`AND attempt = ${attempt}` : sql``}
        RETURNING id, thread_id
      ), freed AS (${freeThreads('settled', outcome.thread)})
      ${
        lastEvent
          ? sql`, logged AS (
        INSERT INTO run_events (run_id, seq, event, data)
        SELECT s.id, coalesce((SELECT max(e.seq) FROM run_events e WHERE e.run_id = s.id), 0) + 1, ${lastEvent.event}, ${lastEvent.json}
        FROM settled s
        ON CONFLICT DO NOTHING
      )`
          : sql``
      }
      SELECT (SELECT count(*) FROM settled)::int AS settled, (SELECT count(*) FROM freed)::int AS freed
        ${notify ? sql`, pg_notify(${notify.channel}, ${notify.payload}) IS NULL AS notified` : sql``}`.execute(this.db);
    const settled = (rows[0]?.settled ?? 0) > 0;
    return { settled, threadHeld: settled && (rows[0]?.freed ?? 0) === 0 };
  }

  /**
   * A run cancelled while `workerId` executed it (`cancel`) has stopped there: its worker gives the
   * lease back, so the thread's next run may start. The cancel did not know the run's model or tokens:
   * `usage` is kept. `waiting`: a run of the thread is pending (wake the workers). Only the attempt
   * that held the lease releases it.
   */
  async release(workerId: string, runId: string, attempt: number, usage?: RunOutcome['usage']): Promise<{ released: boolean; waiting: boolean }> {
    const kept = usage ? JSON.stringify({ usage }) : null;
    const { rows } = await sql<{ thread_id: string; waiting: boolean }>`
      UPDATE runs SET lease_owner = NULL, lease_expires_at = NULL, updated_at = now(),
        metadata = CASE WHEN ${kept}::jsonb IS NOT NULL AND status = 'interrupted' THEN metadata || ${kept}::jsonb ELSE metadata END
      WHERE id = ${runId} AND status <> 'running' AND lease_owner = ${workerId} AND attempt = ${attempt}
      RETURNING thread_id, EXISTS (SELECT 1 FROM runs p WHERE p.thread_id = runs.thread_id AND p.status = 'pending') AS waiting`.execute(this.db);
    return { released: rows.length > 0, waiting: rows[0]?.waiting === true };
  }

  /** The usage of a run no worker settles (cancelled while queued), unless one was recorded. */
  async recordUsage(runId: string, usage: NonNullable<RunOutcome['usage']>): Promise<void> {
    await sql`UPDATE runs SET metadata = metadata || jsonb_build_object('usage', ${JSON.stringify(usage)}::jsonb)
      WHERE id = ${runId} AND NOT metadata ? 'usage'`.execute(this.db);
  }

  /**
   * Cancel the active runs matching `which` (a condition on `runs`): they end `interrupted` and their
   * threads go back to `idle` unless another run holds them. Returns the cancelled rows.
   *
   * A run that was executing keeps its worker's lease: the worker is still stopping it (its graph may
   * be finishing a step) and gives the lease back when it has stopped (`release`). Until then no other
   * run of the thread starts (`stopping`), so two executions never write one thread's state; a worker
   * that died meanwhile holds the thread no longer than its lease.
   *
   * A resume cancelled before any worker took it (attempt 0) ran nothing: its thread goes back to
   * `interrupted` instead, and its approval record is deleted, so the pause can be answered again.
   */
  async cancel(which: RawBuilder<unknown>): Promise<Selectable<RunsTable>[]> {
    const { rows } = await sql<Selectable<RunsTable>>`
      WITH stopped AS (
        UPDATE runs SET status = 'interrupted', ended_at = now(), updated_at = now()
        WHERE ${which} AND ${runFrom('interrupted')}
        RETURNING *
      ), unanswered AS (
        DELETE FROM run_approvals a USING stopped s
        WHERE a.run_id = s.id AND s.attempt = 0
        RETURNING s.thread_id
      ), repaused AS (
        UPDATE threads t SET status = 'interrupted', updated_at = now()
        WHERE t.id IN (SELECT thread_id FROM unanswered) AND ${threadFrom('interrupted', ['busy'])}
          AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.thread_id = t.id AND r.status IN ('pending', 'running')
                          AND r.id NOT IN (SELECT id FROM stopped))
      ), others AS (
        SELECT * FROM stopped WHERE thread_id NOT IN (SELECT thread_id FROM unanswered)
      ), freed AS (${freeThreads('others', 'idle')})
      SELECT * FROM stopped`.execute(this.db);
    return rows;
  }

  /**
   * Runs whose lease expired (their worker died or lost the database): handed back to the queue to
   * be retried from their last checkpoint, or failed once they used `maxAttempts` (their threads then
   * go to `error`). Threads left `busy` with no active run for a lease are freed.
   *
   * A run handed back gets a `metadata` event saying `pending` (its next attempt and its place in the
   * queue), as a put-back and a hand-back do, so its streams say it waits for a worker again; with
   * `streamsChannel`, the same statement tells them to read on (a NOTIFY per run, payload its id).
   * Its worker may only have stalled and still write: the runs are first locked (`FOR UPDATE SKIP
   * LOCKED`, skipping a run whose events are being written, see RunEventHub.write), then handed back
   * by a second statement of the same transaction, whose snapshot sees every event written before the
   * lock, so the `pending` event takes the next number. After it, the old attempt's writes are refused
   * (its lease is gone) and the next attempt appends after it.
   * `wake`: a NOTIFY the same statement sends when a run may now be claimed (one was handed back, or a
   * run waits on a thread a failed or abandoned run held), so that every process's idle workers claim
   * it at once, not only the sweeping process's (it may have no free slot).
   */
  async sweepExpired(
    leaseMs: number,
    maxAttempts: number,
    exclude: readonly string[] = [],
    streamsChannel?: string,
    wake?: { channel: string; payload: string },
  ): Promise<{ retried: number; failed: { id: string; threadId: string }[] }> {
    const sweep = (db: Db, expired: readonly string[]) => sql<{ retried: number; failed: { id: string; thread_id: string }[] | null }>`
      WITH expired AS (
        SELECT id FROM runs WHERE id IN (${expired.length > 0 ? sql.join(expired) : sql`NULL`}) AND status = 'running' AND lease_expires_at < now()
      ), ${retryOrFail('retried_after_lease_expiry', maxAttempts)}, ${toldPending('retried')}, stranded AS (
        -- A thread left busy with no active run (a process died between taking a thread and
        -- starting or settling its work, e.g. while resolving an interrupt) is freed after a lease.
        UPDATE threads t SET status = 'idle', updated_at = now()
        WHERE ${threadFrom('idle', ['busy'])} AND t.updated_at < now() - make_interval(secs => ${leaseMs / 1000})
          AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.thread_id = t.id AND r.status IN ('pending', 'running'))
      ), abandoned AS (
        -- A cancelled run whose worker died before it stopped: its lease no longer holds the thread
        -- once expired (\`stopping\`); cleared so that only live leases stay in their index.
        UPDATE runs SET lease_owner = NULL, lease_expires_at = NULL
        WHERE lease_owner IS NOT NULL AND status <> 'running' AND lease_expires_at < now()
        RETURNING thread_id
      )
      SELECT (SELECT count(*) FROM retried)::int AS retried, (SELECT json_agg(json_build_object('id', id, 'thread_id', thread_id)) FROM failed) AS failed
        ${streamsChannel ? sql`, (SELECT count(pg_notify(${streamsChannel}, id::text)) FROM retried) AS told` : sql``}
        ${
          wake
            ? sql`, (SELECT pg_notify(${wake.channel}, ${wake.payload}) WHERE EXISTS (SELECT 1 FROM retried)
                OR EXISTS (SELECT 1 FROM runs p WHERE p.status = 'pending' AND p.thread_id IN (SELECT thread_id FROM failed UNION ALL SELECT thread_id FROM abandoned))) IS NULL AS woke`
            : sql``
        }`.execute(db);
    const lock = (db: Db) => sql<{ id: string }>`
      SELECT id FROM runs WHERE status = 'running' AND lease_expires_at < now()
        ${exclude.length > 0 ? sql`AND id NOT IN (${sql.join(exclude)})` : sql``}
      FOR UPDATE SKIP LOCKED`.execute(db);
    const { rows } = await this.db.transaction().execute(async (trx) => {
      const expired = (await lock(trx)).rows.map((r) => r.id);
      return sweep(trx, expired);
    });
    const row = rows[0];
    return { retried: row?.retried ?? 0, failed: (row?.failed ?? []).map((f) => ({ id: f.id, threadId: f.thread_id })) };
  }

  /**
   * A run `workerId` stopped executing without finishing it (its process is stopping and the drain
   * timeout passed): handed back as `sweepExpired` hands back a run of a worker that died, as if its
   * lease had expired now — `pending` again (`metadata.handed_back`), retried from its last checkpoint
   * by the next worker to claim it, or failed like the sweep fails it once it used `maxAttempts`.
   * Only the attempt that holds the lease is handed back; `failed` when it was failed instead.
   * A run handed back gets a `metadata` event saying `pending` (with its next attempt and its place in
   * the queue), so a stream that follows it on another server says it waits for a worker. Its worker
   * flushed its events before this statement, so nothing else is writing the log. Each of `notify` is
   * sent with the same statement when the run was handed back (wakes other workers, tells the run's
   * streams to read on).
   */
  async handBack(workerId: string, runId: string, attempt: number, maxAttempts: number, notify: readonly { channel: string; payload: string }[] = []): Promise<{ handedBack: boolean; failed: boolean }> {
    const { rows } = await sql<{ retried: number; failed: number }>`
      WITH expired AS (
        SELECT id FROM runs WHERE id = ${runId} AND status = 'running' AND lease_owner = ${workerId} AND attempt = ${attempt}
        FOR UPDATE
      ), ${retryOrFail('handed_back', maxAttempts)}, ${toldPending('retried')}
      SELECT (SELECT count(*) FROM retried)::int AS retried, (SELECT count(*) FROM failed)::int AS failed
        ${notify.length > 0 ? sql`, ${sql.join(notify.map((n) => sql`(SELECT pg_notify(${n.channel}, ${n.payload}) FROM retried) IS NULL`))}` : sql``}`.execute(this.db);
    return { handedBack: (rows[0]?.retried ?? 0) > 0, failed: (rows[0]?.failed ?? 0) > 0 };
  }

  /**
   * A run a start recorded claimed by `workerId` (`createOnThread`'s `claimFor`) that the worker will
   * not execute after all (its process began stopping while the start was recorded): `pending` again
   * as if it had been recorded so (attempt 0, no lease, not started), so another worker claims it at
   * once, as attempt 1 — it never ran, so no attempt is used. Its first event said `running`: the
   * same statement appends a `metadata` event saying `pending` (with its place in the queue), as a run
   * recorded pending starts, so its streams say what is true. `notify` (each NOTIFY) is sent with the
   * same statement when it was put back (wakes other workers, tells the run's streams to read on).
   * False when the run was no longer held so (cancelled meanwhile: its worker releases the lease,
   * `release`).
   */
  async unclaim(workerId: string, runId: string, notify: readonly { channel: string; payload: string }[] = []): Promise<boolean> {
    const { rows } = await sql<{ id: string }>`
      WITH back AS (
        UPDATE runs SET status = 'pending', attempt = 0, lease_owner = NULL, lease_expires_at = NULL, started_at = NULL, updated_at = now(),
          metadata = metadata - 'attempt' - 'worker'
        WHERE id = ${runId} AND status = 'running' AND lease_owner = ${workerId} AND attempt = 1 AND ${runFrom('pending')}
        RETURNING id, attempt
      ), ${toldPending('back')}
      SELECT id ${notify.length > 0 ? sql`, ${sql.join(notify.map((n) => sql`pg_notify(${n.channel}, ${n.payload}) IS NULL`))}` : sql``} FROM back`.execute(this.db);
    return rows.length > 0;
  }

  /**
   * Wait until the workers of cancelled runs `runIds` have stopped them (given their leases back) or
   * their leases expired (a worker that died), for at most `maxMs`. True when none is stopping any more.
   */
  async untilStopped(runIds: readonly string[], maxMs: number): Promise<boolean> {
    if (runIds.length === 0) return true;
    const deadline = Date.now() + maxMs;
    for (let pause = 5; ; pause = Math.min(pause * 2, 100)) {
      const { rows } = await sql<{ n: number }>`
        SELECT count(*)::int AS n FROM runs WHERE id IN (${sql.join(runIds)}) AND ${stopping('runs')}`.execute(this.db);
      if ((rows[0]?.n ?? 0) === 0) return true;
      if (Date.now() + pause > deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }

  /** Take an interrupted thread (`busy`) to resolve its pause; false when it is not interrupted. */
  async takeInterrupted(threadId: string): Promise<boolean> {
    const { rows } = await sql`UPDATE threads t SET status = 'busy', updated_at = now() WHERE t.id = ${threadId} AND ${threadFrom('busy', ['interrupted'])} RETURNING t.id`.execute(this.db);
    return rows.length > 0;
  }

  /** Give back a thread taken by `takeInterrupted`: `idle` when resolved, `interrupted` when not. */
  async releaseTaken(threadId: string, to: 'idle' | 'interrupted'): Promise<void> {
    await sql`UPDATE threads t SET status = ${to}, updated_at = now() WHERE t.id = ${threadId} AND ${threadFrom(to, ['busy'])}
      AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.thread_id = t.id AND r.status IN ('pending', 'running'))`.execute(this.db);
  }

  /**
   * Delete the events of runs that ended more than `days` days ago (so every event is older than
   * that), `batch` runs at a time; returns how many events went. Through `runs.ended_at`, so the
   * event log needs no extra index on its hot insert path.
   */
  async deleteOldEvents(days: number, batch = 200): Promise<number> {
    const { rows } = await sql<{ n: number }>`
      WITH old AS (
        SELECT r.id FROM runs r
        WHERE r.ended_at < now() - make_interval(days => ${days}) AND r.status NOT IN ('pending', 'running')
          AND EXISTS (SELECT 1 FROM run_events e WHERE e.run_id = r.id)
        LIMIT ${batch}
      ), gone AS (
        DELETE FROM run_events e WHERE e.run_id IN (SELECT id FROM old) RETURNING 1
      )
      SELECT count(*)::int AS n FROM gone`.execute(this.db);
    return rows[0]?.n ?? 0;
  }
}

/**
 * CTEs `retried`, `failed` and `freed` over the runs of a CTE `expired` whose worker stopped: each is
 * handed back to the queue (`pending`, `marker` set in its metadata) to be retried from its last
 * checkpoint, or failed once it used `maxAttempts` (its thread then goes to `error`). Shared by the
 * sweep (a worker that died) and `handBack` (a worker that is stopping).
 */
function retryOrFail(marker: 'retried_after_lease_expiry' | 'handed_back', maxAttempts: number): RawBuilder<unknown> {
  return sql`retried AS (
        UPDATE runs SET status = 'pending', lease_owner = NULL, lease_expires_at = NULL, updated_at = now(),
          metadata = metadata || jsonb_build_object(${sql.lit(marker)}::text, true)
        WHERE id IN (SELECT id FROM expired) AND attempt < ${maxAttempts} AND ${runFrom('pending')}
        RETURNING id, attempt
      ), failed AS (
        UPDATE runs SET status = 'error', error = ${leaseExpiredError(maxAttempts)}::jsonb, ended_at = now(), updated_at = now(),
          lease_owner = NULL, lease_expires_at = NULL
        WHERE id IN (SELECT id FROM expired) AND attempt >= ${maxAttempts} AND ${runFrom('error', ['running'])}
        RETURNING id, thread_id
      ), freed AS (${freeThreads('failed', 'error')})`;
}

/**
 * CTEs appending to the log of each run in `source` (a CTE returning `id` and the run's `attempt` as
 * the statement leaves it) a `metadata` event saying it waits for a worker again: the attempt to come
 * and its place in the queue, as a run recorded pending starts. (The statement sees the table as it
 * was: the run itself is not counted ahead.) The event takes the number after the last one stored:
 * the run's lease is gone with this statement, so no other writer appends to its log meanwhile.
 */
function toldPending(source: 'retried' | 'back'): RawBuilder<unknown> {
  return sql`ahead AS (
        SELECT count(*)::int AS n FROM runs WHERE status = 'pending'
      ), told AS (
        INSERT INTO run_events (run_id, seq, event, data)
        SELECT r.id, (SELECT coalesce(max(seq), 0) + 1 FROM run_events e WHERE e.run_id = r.id), 'metadata',
          jsonb_build_object('run_id', r.id, 'attempt', r.attempt + 1, 'status', 'pending', 'queue_position', a.n)::text
        FROM ${sql.raw(source)} r, ahead a
      )`;
}

/** The error of a run failed because its worker stopped and it used its `maxAttempts` attempts. */
function leaseExpiredError(maxAttempts: number): string {
  return JSON.stringify({
    code: 'run_lease_expired',
    error: 'LeaseExpired',
    message: `the worker running this run stopped (its lease expired) and the run used its ${maxAttempts} attempt(s); start a new run`,
  });
}
