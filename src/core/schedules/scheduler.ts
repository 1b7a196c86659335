// The scheduler: a background task of every worker process that fires due schedules. Replicas share
// the work through the database: a tick is claimed by moving the schedule's `next_run_at` forward and
// recording the tick in one transaction over rows locked with SKIP LOCKED, so with any number of
// replicas each tick starts exactly one run. Ticks missed while no server ran follow a policy.
import { sql, type Selectable } from 'kysely';
import type { Db } from '../../db/index.js';
import type { SchedulesTable, ScheduleTicksTable } from '../../db/tables/schedules.js';
import type { Logger } from '../../logging.js';
import type { Caller } from '../caller.js';
import { HangarError } from '../errors.js';
import type { RunService } from '../runs/service.js';
import type { ThreadService } from '../threads/service.js';
import type { WebhookService } from '../webhooks/service.js';
import { checkedCron, nextVersion, toSchedule, type Schedule } from './service.js';
import { nextTick } from './cron.js';

/** What happens to ticks that fell due while no scheduler was running. */
/** How many runs an `enqueue` schedule may have waiting on its thread before its ticks are skipped. */
export const MAX_QUEUED_RUNS = 3;

/** A tick of an `enqueue` schedule that found its queue full (recorded as `skipped`). */
class QueueFull extends Error {}

export type MissedTickPolicy = 'one' | 'skip';

/** Settings of the scheduler. */
export interface SchedulerSettings {
  /** Longest sleep between two looks at the table (schedules created on another replica). */
  pollMs: number;
  /** A tick later than this is "missed" (no server was up), not just late. */
  missedAfterMs: number;
  /** `one` (default): one catch-up run for all missed ticks, then on schedule. `skip`: none. */
  missedTicks: MissedTickPolicy;
  /** Ticks claimed per transaction. */
  batchSize: number;
  /** Runs started at once. */
  startConcurrency: number;
}

/** What the scheduler needs. */
export interface SchedulerDeps {
  db: Db;
  threads: ThreadService;
  runs: RunService;
  webhooks: WebhookService;
  logger: Logger;
  settings: SchedulerSettings;
}

interface Claimed {
  schedule: Schedule;
  tickId: string;
  tickAt: Date;
  catchUp: boolean;
  /** The tick's `created_at` when claimed, as PostgreSQL text (microseconds kept): the tick is still this scheduler's while unchanged. */
  claimedAt?: string;
}

/** Fires due schedules; a background task of the server (`start` / `stop`). */
export class Scheduler {
  readonly name = 'scheduler';
  private stopped = true;
  private wakeUp: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  private readonly log: Logger;

  constructor(private readonly deps: SchedulerDeps) {
    this.log = deps.logger.child({ component: 'scheduler' });
  }

  start(): void {
    this.stopped = false;
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake();
    await this.loop;
  }

  /** Look at the table now (a schedule was created or changed in this process). */
  wake(): void {
    this.wakeUp?.();
  }

  private async run(): Promise<void> {
    try {
      await this.recoverClaimed();
    } catch (error) {
      this.log.error({ err: error }, 'could not recover claimed ticks');
    }
    let lastRecovery = Date.now();
    while (!this.stopped) {
      let delay = this.deps.settings.pollMs;
      try {
        // Fire everything due; a full batch means more may be waiting.
        while (!this.stopped && (await this.fireDue()) === this.deps.settings.batchSize);
        if (Date.now() - lastRecovery > 30_000) {
          lastRecovery = Date.now();
          await this.recoverClaimed();
        }
        delay = await this.untilNextDue();
      } catch (error) {
        this.log.error({ err: error }, 'scheduler pass failed; retrying');
      }
      if (this.stopped) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        this.wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wakeUp = undefined;
    }
  }

  /** Milliseconds until the earliest due schedule, at most `pollMs`. */
  private async untilNextDue(): Promise<number> {
    const row = await this.deps.db
      .selectFrom('schedules')
      .select(sql<number | null>`extract(epoch from (min(next_run_at) - now())) * 1000`.as('ms'))
      .where('enabled', '=', true)
      .where('next_run_at', 'is not', null)
      .executeTakeFirst();
    const ms = row?.ms === null || row?.ms === undefined ? this.deps.settings.pollMs : Number(row.ms);
    return Math.max(0, Math.min(this.deps.settings.pollMs, Math.ceil(ms)));
  }

  /** Claim and fire one batch of due ticks; returns how many schedules were claimed. */
  async fireDue(): Promise<number> {
    const { missedAfterMs, missedTicks, batchSize } = this.deps.settings;
    const claimed = await this.deps.db.transaction().execute(async (trx) => {
      const { rows } = await sql<Selectable<SchedulesTable> & { now: Date }>`
        SELECT s.*, now() AS now FROM schedules s
        WHERE s.enabled AND s.next_run_at IS NOT NULL AND s.next_run_at <= now()
        ORDER BY s.next_run_at
        LIMIT ${batchSize}
        FOR UPDATE SKIP LOCKED`.execute(trx);
      if (rows.length === 0) return { out: [] as Claimed[], count: 0 };
      // Decide every schedule's tick in memory, then write them all in two statements.
      const plan = rows.map((row) => {
        const tickAt = row.next_run_at!;
        const now = new Date(row.now);
        const missed = now.getTime() - tickAt.getTime() > missedAfterMs;
        let next: Date | null = null;
        try {
          next = nextTick(checkedCron(row.schedule, row.timezone), now, row.end_time);
        } catch {
          next = null; // an expression that no longer parses (a zone removed from tzdata): stop it
        }
        const skip = missed && missedTicks === 'skip';
        const error = skip ? JSON.stringify({ error: 'missed_tick', message: 'the tick fell due while no scheduler was running (missed-tick policy: skip)' }) : null;
        return { row, tickAt, missed, next, skip, error };
      });
      await sql`
        UPDATE schedules s SET next_run_at = v.next
        FROM (SELECT unnest(${plan.map((p) => p.row.id)}::uuid[]) AS id, unnest(${plan.map((p) => p.next?.toISOString() ?? null)}::timestamptz[]) AS next) v
        WHERE s.id = v.id`.execute(trx);
      const { rows: ticks } = await sql<{ id: string; schedule_id: string; claimed_at: string }>`
        INSERT INTO schedule_ticks (schedule_id, workspace_id, tick_at, catch_up, state, error)
        SELECT * FROM unnest(
          ${plan.map((p) => p.row.id)}::uuid[], ${plan.map((p) => p.row.workspace_id)}::uuid[], ${plan.map((p) => p.tickAt.toISOString())}::timestamptz[],
          ${plan.map((p) => p.missed)}::boolean[], ${plan.map((p) => (p.skip ? 'skipped' : 'claimed'))}::text[], ${plan.map((p) => p.error)}::jsonb[])
        ON CONFLICT (schedule_id, tick_at) DO NOTHING
        RETURNING id, schedule_id, created_at::text AS claimed_at`.execute(trx);
      const tickOf = new Map(ticks.map((t) => [t.schedule_id, t]));
      const out = plan.flatMap((p): Claimed[] => {
        const tick = tickOf.get(p.row.id);
        return tick && !p.skip ? [{ schedule: toSchedule(p.row, null), tickId: tick.id, tickAt: p.tickAt, catchUp: p.missed, claimedAt: tick.claimed_at }] : [];
      });
      return { out, count: rows.length };
    });
    await this.startAll(claimed.out);
    return claimed.count;
  }

  private async startAll(claimed: Claimed[]): Promise<void> {
    const queue = [...claimed];
    const workers = Array.from({ length: Math.min(this.deps.settings.startConcurrency, queue.length) }, async () => {
      for (let next = queue.shift(); next; next = queue.shift()) await this.fire(next);
    });
    await Promise.all(workers);
  }

  /** Start the run of one claimed tick and record what happened. */
  private async fire({ schedule, tickId, catchUp, claimedAt }: Claimed, existing?: { threadId: string | null }): Promise<void> {
    // A tick that waited long in this scheduler's queue may have been taken over by another
    // scheduler's recovery (it looks for ticks claimed over a minute ago): start it only while it is
    // still ours, and renew the claim so that no recovery takes it while its run starts.
    if (claimedAt) {
      const mine = await sql`
        UPDATE schedule_ticks SET created_at = now() WHERE id = ${tickId} AND state = 'claimed' AND created_at = ${claimedAt}::timestamptz`.execute(this.deps.db);
      if (Number(mine.numAffectedRows ?? 0) !== 1) return;
    }
    const caller: Caller = { workspaceId: schedule.workspaceId, keyId: `schedule:${schedule.id}`, role: 'member', principal: schedule.principal, previewAccess: true };
    let threadId = existing?.threadId ?? schedule.threadId;
    try {
      // The scheduler starts runs without a request, so the gate of the agent runtime is checked here:
      // a workspace whose preview access was turned off runs nothing, on a schedule or otherwise.
      const workspace = await this.deps.db.selectFrom('workspaces').select('preview_access').where('id', '=', schedule.workspaceId).executeTakeFirst();
      if (!workspace?.preview_access) {
        throw new HangarError('preview_access_required', 'the workspace has no access to the agent runtime (its preview access is off); enable the schedule again once it is back');
      }
      if (!threadId) {
        const thread = await this.deps.threads.create(caller, {
          agent_id: schedule.agentId,
          metadata: { ...schedule.metadata, schedule_id: schedule.id, schedule_tick_id: tickId },
        });
        threadId = thread.id;
        await this.record(tickId, { thread_id: threadId });
      }
      if (schedule.multitaskStrategy === 'enqueue') await this.checkQueue(schedule.id, threadId);
      const run = await this.deps.runs.start(caller, threadId, {
        agent_id: schedule.agentId,
        messages: schedule.input.messages,
        stream_mode: ['values'],
        stream_subgraphs: false,
        user_timezone: schedule.timezone,
        multitask_strategy: schedule.multitaskStrategy,
        // How a scheduler that finds this tick still `claimed` (its claimer died) adopts the run.
        metadata: { schedule_id: schedule.id, schedule_tick_id: tickId },
        // Recorded with the run, in one statement: never a started run without its webhook.
        ...(schedule.webhook ? { webhook: { url: schedule.webhook, scheduleId: schedule.id } } : {}),
      });
      await this.record(tickId, { state: 'started', run_id: run.id, thread_id: threadId });
      this.log.info({ schedule_id: schedule.id, run_id: run.id, thread_id: threadId, catch_up: catchUp }, 'schedule fired');
    } catch (error) {
      const code: string = error instanceof QueueFull ? 'schedule_queue_full' : error instanceof HangarError ? error.code : 'internal_error';
      const message = error instanceof Error ? error.message : String(error);
      if (code === 'thread_busy' || code === 'schedule_queue_full') {
        await this.record(tickId, { state: 'skipped', thread_id: threadId, error: JSON.stringify({ error: code, message }) });
        return;
      }
      await this.record(tickId, { state: 'failed', thread_id: threadId, error: JSON.stringify({ error: code, message }) });
      if (code === 'agent_not_found' || code === 'agent_deleted' || code === 'thread_not_found' || code === 'preview_access_required') {
        // Nothing runs until a person acts: stop the schedule rather than fail at every tick.
        await this.deps.db.updateTable('schedules').set({ enabled: false, next_run_at: null, updated_at: nextVersion }).where('id', '=', schedule.id).execute();
        this.log.warn({ schedule_id: schedule.id, code }, 'schedule disabled: its agent or thread is gone, or its workspace has no preview access');
      } else {
        this.log.error({ err: error, schedule_id: schedule.id }, 'schedule could not start its run');
      }
    }
  }

  /**
   * An `enqueue` schedule firing faster than its runs finish would queue runs without end: a tick that
   * finds MAX_QUEUED_RUNS of the schedule's runs still waiting on its thread is skipped instead.
   */
  private async checkQueue(scheduleId: string, threadId: string): Promise<void> {
    const { n } = await this.deps.db
      .selectFrom('runs')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('thread_id', '=', threadId)
      .where('status', '=', 'pending')
      .where(sql<boolean>`metadata->>'schedule_id' = ${scheduleId}`)
      .executeTakeFirstOrThrow();
    if (Number(n) >= MAX_QUEUED_RUNS) {
      throw new QueueFull(`${n} runs of this schedule already wait on thread ${threadId} (at most ${MAX_QUEUED_RUNS} are queued); this tick is skipped`);
    }
  }

  private async record(tickId: string, values: { state?: 'started' | 'skipped' | 'failed'; run_id?: string; thread_id?: string | null; error?: string }) {
    await this.deps.db.updateTable('schedule_ticks').set(values).where('id', '=', tickId).execute();
  }

  /**
   * Ticks claimed by a scheduler that died before it started their run. A run it did start is
   * adopted (found on the tick's thread), so a crash never fires a tick twice; otherwise it starts now
   * — or, under the `skip` policy, a tick by now later than `missedAfterMs` is skipped as missed.
   */
  async recoverClaimed(): Promise<void> {
    const { rows } = await sql<Selectable<ScheduleTicksTable>>`
      SELECT * FROM schedule_ticks WHERE state = 'claimed' AND created_at < now() - interval '60 seconds'
      ORDER BY created_at LIMIT 100`.execute(this.deps.db);
    for (const tick of rows) {
      const schedule = await this.deps.db.selectFrom('schedules').selectAll().where('id', '=', tick.schedule_id).executeTakeFirst();
      const threadId =
        tick.thread_id ??
        (
          await this.deps.db
            .selectFrom('threads')
            .select('id')
            .where(sql<boolean>`metadata @> ${JSON.stringify({ schedule_tick_id: tick.id })}::jsonb`)
            .executeTakeFirst()
        )?.id ??
        null;
      // The run the dead scheduler started carries the tick's id: on the tick's own thread, or on the
      // thread of a thread-mode schedule (which has other runs too, so only the tick's id tells).
      const runThread = threadId ?? schedule?.thread_id ?? null;
      const adopted = runThread
        ? await this.deps.db
            .selectFrom('runs')
            .select('id')
            .where('thread_id', '=', runThread)
            .where((eb) =>
              threadId
                ? // A thread made for this tick: any run on it (runs of older versions carry no tick id).
                  eb.val(true)
                : sql<boolean>`metadata @> ${JSON.stringify({ schedule_tick_id: tick.id })}::jsonb`,
            )
            .orderBy('created_at')
            .executeTakeFirst()
        : undefined;
      if (adopted) {
        // A run started by a version that registered the webhook after the run may lack it.
        if (schedule?.webhook && runThread) {
          const registered = await this.deps.db.selectFrom('webhook_deliveries').select('id').where('run_id', '=', adopted.id).where('schedule_id', '=', schedule.id).executeTakeFirst();
          if (!registered) await this.deps.webhooks.register(schedule.workspace_id, { runId: adopted.id, threadId: runThread }, schedule.webhook, schedule.id);
        }
        await this.record(tick.id, { state: 'started', run_id: adopted.id, thread_id: runThread });
      } else if (!schedule) {
        await this.record(tick.id, { state: 'failed', error: JSON.stringify({ error: 'schedule_not_found', message: 'the schedule was deleted' }) });
      } else {
        // Take the tick over: one statement, so another recovering replica cannot take it too. (Not a
        // comparison with the created_at read above: JavaScript dates lose its microseconds.) Its run
        // would start now, over a minute after the claim: a tick that is by now later than
        // `missedAfterMs` fell due while no scheduler was running it, so it is a missed tick as one
        // missed during a stop is — marked `catch_up`, and under the `skip` policy skipped, not started
        // (the claim may have been on time; the run would not be).
        const late = sql<boolean>`now() - tick_at > make_interval(secs => ${this.deps.settings.missedAfterMs / 1000})`;
        const skip = this.deps.settings.missedTicks === 'skip';
        const missed = JSON.stringify({
          error: 'missed_tick',
          message: `the scheduler that claimed this tick stopped before starting its run; another took it over more than ${this.deps.settings.missedAfterMs / 1000} s after the tick fell due (missed-tick policy: skip)`,
        });
        const { rows: taken } = await sql<{ claimed_at: string; catch_up: boolean; state: string }>`
          UPDATE schedule_ticks SET created_at = now(), catch_up = catch_up OR ${late},
            state = CASE WHEN ${skip}::boolean AND ${late} THEN 'skipped' ELSE state END,
            error = CASE WHEN ${skip}::boolean AND ${late} THEN ${missed}::jsonb ELSE error END,
            thread_id = CASE WHEN ${skip}::boolean AND ${late} THEN ${threadId}::uuid ELSE thread_id END
          WHERE id = ${tick.id} AND state = 'claimed' AND created_at < now() - interval '60 seconds'
          RETURNING created_at::text AS claimed_at, catch_up, state`.execute(this.deps.db);
        const mine = taken[0];
        if (mine?.state === 'skipped') this.log.info({ schedule_id: schedule.id, tick_id: tick.id }, 'recovered tick skipped: too late under the skip policy');
        else if (mine) await this.fire({ schedule: toSchedule(schedule, null), tickId: tick.id, tickAt: tick.tick_at, catchUp: mine.catch_up, claimedAt: mine.claimed_at }, { threadId });
      }
    }
  }
}
