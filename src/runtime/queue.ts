// The run queue in PostgreSQL: pending runs are claimed with FOR UPDATE SKIP LOCKED under a lease the
// worker renews, and every status change is a guarded UPDATE (src/core/runs/status.ts).
import { sql } from 'kysely';
import type pg from 'pg';
import type { Db } from '../db/index.js';
import type { RunStatus, ThreadStatus } from '../core/runs/status.js';
import { isUniqueViolation } from '../db/errors.js';
import type { RunInput } from './run-input.js';

const QUEUE_CHANNEL = 'hangar_runs_queued';
const CANCEL_CHANNEL = 'hangar_runs_cancelled';

/** A run claimed by this worker. */
export interface ClaimedRun {
  id: string;
  workspaceId: string;
  threadId: string;
  agentId: string;
  revision: string;
  principal: string;
  attempt: number;
  input: RunInput;
  /** Seconds since the run was created, at claim (its wait in the queue on a first attempt). */
  waitedSeconds?: number;
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

/** Claims, leases and settles runs. */
export class RunQueue {
  private readonly wakers = new Set<() => void>();
  private readonly cancellers = new Set<(runId: string) => void>();

  constructor(
    private readonly db: Db,
    private readonly pool: pg.Pool,
    readonly workerId: string,
    readonly leaseMs: number,
  ) {}

  /**
   * Claim up to `limit` pending runs, oldest first. Two workers racing for one thread's runs: the
   * loser's statement breaks the one-running-run-per-thread index and claims nothing this time.
   */
  async claim(limit: number): Promise<ClaimedRun[]> {
    try {
      return await this.claimOnce(limit);
    } catch (error) {
      if (isUniqueViolation(error)) return [];
      throw error;
    }
  }

  private async claimOnce(limit: number): Promise<ClaimedRun[]> {
    const { rows } = await sql<{
      id: string;
      workspace_id: string;
      thread_id: string;
      agent_id: string;
      revision: string;
      principal: string;
      attempt: number;
      input: RunInput;
      waited_seconds: number;
    }>`
      UPDATE runs SET status = 'running', attempt = attempt + 1, lease_owner = ${this.workerId},
        metadata = metadata || jsonb_build_object('attempt', attempt + 1, 'worker', ${this.workerId}::text),
        lease_expires_at = now() + make_interval(secs => ${this.leaseMs / 1000}),
        started_at = coalesce(started_at, now()), updated_at = now()
      WHERE id IN (
        -- The oldest pending run of each thread that has none running (queued runs wait their turn).
        SELECT id FROM runs r WHERE status = 'pending'
          AND NOT EXISTS (SELECT 1 FROM runs o WHERE o.thread_id = r.thread_id AND o.status = 'running')
          AND NOT EXISTS (SELECT 1 FROM runs o WHERE o.thread_id = r.thread_id AND o.status = 'pending' AND (o.created_at, o.id) < (r.created_at, r.id))
        ORDER BY created_at LIMIT ${limit} FOR UPDATE SKIP LOCKED
      ) AND status = 'pending'
      RETURNING id, workspace_id, thread_id, agent_id, revision, principal, attempt, input,
        EXTRACT(EPOCH FROM now() - created_at)::float8 AS waited_seconds`.execute(this.db);
    return rows.map((r) => ({
      id: r.id,
      workspaceId: r.workspace_id,
      threadId: r.thread_id,
      agentId: r.agent_id,
      revision: r.revision,
      principal: r.principal,
      attempt: r.attempt,
      input: r.input,
      waitedSeconds: r.waited_seconds,
    }));
  }

  /** Extend the leases of runs this worker holds. */
  async renew(runIds: string[]): Promise<void> {
    if (runIds.length === 0) return;
    await this.db
      .updateTable('runs')
      .set({ lease_expires_at: sql`now() + make_interval(secs => ${this.leaseMs / 1000})`, updated_at: new Date() })
      .where('id', 'in', runIds)
      .where('status', '=', 'running')
      .where('lease_owner', '=', this.workerId)
      .execute();
  }

  /**
   * Settle a run this worker holds and free its thread, in one statement (so one round trip and one
   * transaction). False if the run was no longer ours.
   */
  async finish(run: ClaimedRun, outcome: RunOutcome): Promise<boolean> {
    const extra = JSON.stringify({
      ...(outcome.droppedTools?.length ? { dropped_tools: outcome.droppedTools } : {}),
      ...(outcome.usage ? { usage: outcome.usage } : {}),
    });
    const { rows } = await sql<{ settled: number }>`
      WITH settled AS (
        UPDATE runs SET status = ${outcome.status}, error = ${outcome.error ? JSON.stringify(outcome.error) : null}::jsonb,
          ended_at = now(), updated_at = now(), lease_owner = NULL, lease_expires_at = NULL,
          metadata = metadata || ${extra}::jsonb
        WHERE id = ${run.id} AND status = 'running' AND lease_owner = ${this.workerId}
        RETURNING thread_id
      ), freed AS (
        UPDATE threads t SET status = ${outcome.thread}, updated_at = now()
        WHERE t.id IN (SELECT thread_id FROM settled) AND t.status = 'busy'
          -- A queued run keeps the thread busy.
          AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.thread_id = t.id AND r.status = 'pending')
        RETURNING id
      )
      SELECT (SELECT count(*) FROM settled)::int AS settled, (SELECT count(*) FROM freed)::int AS freed`.execute(this.db);
    return (rows[0]?.settled ?? 0) > 0;
  }

  /**
   * Runs whose lease expired (their worker died or lost the database): handed back to the queue to
   * be retried from their last checkpoint, or failed once they used `maxAttempts`. Their threads stay
   * busy while retried and are freed when failed. Returns how many were retried and which failed
   * (so their event logs can get a closing `error` event).
   */
  async sweepExpired(maxAttempts: number): Promise<{ retried: number; failed: { id: string; threadId: string }[] }> {
    const error = JSON.stringify({
      code: 'run_lease_expired',
      error: 'LeaseExpired',
      message: `the worker running this run stopped (its lease expired) and the run used its ${maxAttempts} attempt(s); start a new run`,
    });
    const { rows } = await sql<{ retried: number; failed: { id: string; thread_id: string }[] | null }>`
      WITH expired AS (
        SELECT id FROM runs WHERE status = 'running' AND lease_expires_at < now() FOR UPDATE SKIP LOCKED
      ), retried AS (
        UPDATE runs SET status = 'pending', lease_owner = NULL, lease_expires_at = NULL, updated_at = now(),
          metadata = metadata || jsonb_build_object('retried_after_lease_expiry', true)
        WHERE id IN (SELECT id FROM expired) AND attempt < ${maxAttempts}
        RETURNING id
      ), failed AS (
        UPDATE runs SET status = 'error', error = ${error}::jsonb, ended_at = now(), updated_at = now(),
          lease_owner = NULL, lease_expires_at = NULL
        WHERE id IN (SELECT id FROM expired) AND attempt >= ${maxAttempts}
        RETURNING id, thread_id
      ), freed AS (
        UPDATE threads t SET status = 'error', updated_at = now()
        WHERE t.id IN (SELECT thread_id FROM failed) AND t.status = 'busy'
          AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.thread_id = t.id AND r.status = 'pending')
      ), stranded AS (
        -- A thread left busy with no active run (a process died between taking a thread and
        -- starting or settling its work, e.g. while resolving an interrupt) is freed after a lease.
        UPDATE threads t SET status = 'idle', updated_at = now()
        WHERE t.status = 'busy' AND t.updated_at < now() - make_interval(secs => ${this.leaseMs / 1000})
          AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.thread_id = t.id AND r.status IN ('pending', 'running'))
      )
      SELECT (SELECT count(*) FROM retried)::int AS retried, (SELECT json_agg(json_build_object('id', id, 'thread_id', thread_id)) FROM failed) AS failed`.execute(this.db);
    const row = rows[0];
    return { retried: row?.retried ?? 0, failed: (row?.failed ?? []).map((f) => ({ id: f.id, threadId: f.thread_id })) };
  }

  /**
   * Tell workers that a run is waiting: at once in this process, and through NOTIFY in others (not
   * awaited: the 2 s poll of other processes covers a lost notification).
   */
  async announce(): Promise<void> {
    for (const wake of this.wakers) wake();
    this.pool.query('SELECT pg_notify($1, $2)', [QUEUE_CHANNEL, '']).catch(() => {});
  }

  /** Tell the worker executing `runId`, here or elsewhere, to stop it. */
  async cancel(runId: string): Promise<void> {
    for (const cancel of this.cancellers) cancel(runId);
    await this.pool.query('SELECT pg_notify($1, $2)', [CANCEL_CHANNEL, runId]);
  }

  /**
   * Call `wake` whenever a run is announced and `cancel` whenever a run is cancelled, here or
   * elsewhere. Returns a stop function.
   */
  async listen(wake: () => void, cancel: (runId: string) => void = () => {}): Promise<() => Promise<void>> {
    this.wakers.add(wake);
    this.cancellers.add(cancel);
    const client = await this.pool.connect();
    client.on('notification', (msg) => {
      if (msg.channel === QUEUE_CHANNEL) wake();
      // This process's own cancels were delivered directly; a second call is harmless.
      if (msg.channel === CANCEL_CHANNEL && msg.payload) cancel(msg.payload);
    });
    client.on('error', () => {});
    await client.query(`LISTEN ${QUEUE_CHANNEL}`);
    await client.query(`LISTEN ${CANCEL_CHANNEL}`);
    return async () => {
      this.wakers.delete(wake);
      this.cancellers.delete(cancel);
      await client.query('UNLISTEN *').catch(() => {});
      client.release();
    };
  }
}
