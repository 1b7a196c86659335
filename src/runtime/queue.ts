// The run queue in PostgreSQL: pending runs are claimed with FOR UPDATE SKIP LOCKED under a lease the
// worker renews, and every status change is a guarded UPDATE (src/core/runs/status.ts).
import { sql } from 'kysely';
import type pg from 'pg';
import type { Db } from '../db/index.js';
import type { RunStatus, ThreadStatus } from '../core/runs/status.js';
import type { RunInput } from './run-input.js';

const QUEUE_CHANNEL = 'hangar_runs_queued';

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
}

/** How a run ended, and the thread status that follows. */
export interface RunOutcome {
  status: Extract<RunStatus, 'success' | 'error' | 'interrupted' | 'timeout'>;
  thread: Extract<ThreadStatus, 'idle' | 'interrupted' | 'error'>;
  error?: { error: string; message: string } | undefined;
  /** Tools named in tools.json that their server did not offer (kept on the run's record). */
  droppedTools?: { name: string; mcp_server_url: string; reason: string }[] | undefined;
}

/** Claims, leases and settles runs. */
export class RunQueue {
  private readonly wakers = new Set<() => void>();

  constructor(
    private readonly db: Db,
    private readonly pool: pg.Pool,
    readonly workerId: string,
    readonly leaseMs: number,
  ) {}

  /** Claim up to `limit` pending runs, oldest first. */
  async claim(limit: number): Promise<ClaimedRun[]> {
    const { rows } = await sql<{
      id: string;
      workspace_id: string;
      thread_id: string;
      agent_id: string;
      revision: string;
      principal: string;
      attempt: number;
      input: RunInput;
    }>`
      UPDATE runs SET status = 'running', attempt = attempt + 1, lease_owner = ${this.workerId},
        lease_expires_at = now() + make_interval(secs => ${this.leaseMs / 1000}),
        started_at = coalesce(started_at, now()), updated_at = now()
      WHERE id IN (
        SELECT id FROM runs WHERE status = 'pending' ORDER BY created_at LIMIT ${limit} FOR UPDATE SKIP LOCKED
      ) AND status = 'pending'
      RETURNING id, workspace_id, thread_id, agent_id, revision, principal, attempt, input`.execute(this.db);
    return rows.map((r) => ({
      id: r.id,
      workspaceId: r.workspace_id,
      threadId: r.thread_id,
      agentId: r.agent_id,
      revision: r.revision,
      principal: r.principal,
      attempt: r.attempt,
      input: r.input,
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
    const extra = outcome.droppedTools?.length ? JSON.stringify({ dropped_tools: outcome.droppedTools }) : '{}';
    const { rows } = await sql<{ settled: number }>`
      WITH settled AS (
        UPDATE runs SET status = ${outcome.status}, error = ${outcome.error ? JSON.stringify(outcome.error) : null}::jsonb,
          ended_at = now(), updated_at = now(), lease_owner = NULL, lease_expires_at = NULL,
          metadata = metadata || ${extra}::jsonb
        WHERE id = ${run.id} AND status = 'running' AND lease_owner = ${this.workerId}
        RETURNING thread_id
      ), freed AS (
        UPDATE threads SET status = ${outcome.thread}, updated_at = now()
        WHERE id IN (SELECT thread_id FROM settled) AND status = 'busy'
        RETURNING id
      )
      SELECT (SELECT count(*) FROM settled)::int AS settled, (SELECT count(*) FROM freed)::int AS freed`.execute(this.db);
    return (rows[0]?.settled ?? 0) > 0;
  }

  /**
   * Fail runs whose worker stopped renewing its lease (a crashed or killed process): the run ends
   * `error`, its thread `error`, in one statement. Returns the runs settled here, so their event
   * logs can get a closing `error` event. (Retrying them instead is issue 5's to decide.)
   */
  async failExpired(limit = 100): Promise<{ id: string; threadId: string }[]> {
    const error = { error: 'LeaseExpired', message: 'the worker running this run stopped (its lease expired); start a new run' };
    const { rows } = await sql<{ id: string; thread_id: string }>`
      WITH expired AS (
        SELECT id FROM runs WHERE status = 'running' AND lease_expires_at < now()
        ORDER BY lease_expires_at LIMIT ${limit} FOR UPDATE SKIP LOCKED
      ), failed AS (
        UPDATE runs SET status = 'error', error = ${JSON.stringify(error)}::jsonb, ended_at = now(), updated_at = now(),
          lease_owner = NULL, lease_expires_at = NULL
        WHERE id IN (SELECT id FROM expired)
        RETURNING id, thread_id
      ), freed AS (
        UPDATE threads SET status = 'error', updated_at = now()
        WHERE id IN (SELECT thread_id FROM failed) AND status = 'busy'
        RETURNING id
      )
      SELECT id, thread_id FROM failed`.execute(this.db);
    return rows.map((r) => ({ id: r.id, threadId: r.thread_id }));
  }

  /**
   * Tell workers that a run is waiting: at once in this process, and through NOTIFY in others (not
   * awaited: the 2 s poll of other processes covers a lost notification).
   */
  async announce(): Promise<void> {
    for (const wake of this.wakers) wake();
    this.pool.query('SELECT pg_notify($1, $2)', [QUEUE_CHANNEL, '']).catch(() => {});
  }

  /** Call `wake` whenever a run is announced, here or elsewhere. Returns a stop function. */
  async listen(wake: () => void): Promise<() => Promise<void>> {
    this.wakers.add(wake);
    const client = await this.pool.connect();
    client.on('notification', (msg) => {
      if (msg.channel === QUEUE_CHANNEL) wake();
    });
    client.on('error', () => {});
    await client.query(`LISTEN ${QUEUE_CHANNEL}`);
    return async () => {
      this.wakers.delete(wake);
      await client.query(`UNLISTEN ${QUEUE_CHANNEL}`).catch(() => {});
      client.release();
    };
  }
}
