// The run queue and the lifecycle it reports to, on a real PostgreSQL: the transition table holds,
// a stale lease loses its run cleanly, a cancel racing a finish has one winner, the thread is freed
// by one rule, and a cancel whose notification was lost is still found by the lease renewal.
import { sql } from 'kysely';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabaseUrl } from '../../test/support/database.js';
import { canRunTransition, IllegalTransition, RunLifecycle } from '../core/runs/lifecycle.js';
import { RUN_STATUSES, RUN_TRANSITIONS } from '../core/runs/status.js';
import { NotificationBus } from '../db/bus.js';
import { openDatabase, type DatabaseHandle } from '../db/index.js';
import { migrate } from '../db/migrate.js';
import { RunQueue } from './queue.js';

let database: DatabaseHandle;
let bus: NotificationBus;
let lifecycle: RunLifecycle;
let workspaceId: string;
const input = { messages: [{ role: 'user' as const, content: 'hi' }], stream_mode: ['values' as const], stream_subgraphs: false, user_timezone: null };

beforeAll(async () => {
  const url = await freshDatabaseUrl();
  database = openDatabase(url);
  await migrate(database.pool);
  bus = new NotificationBus({ connectionString: url, pool: database.pool, logger: pino({ level: 'silent' }) });
  await bus.start();
  lifecycle = new RunLifecycle(database.db);
  workspaceId = (await database.db.insertInto('workspaces').values({ name: 'queue-test' }).returning('id').executeTakeFirstOrThrow()).id;
});
afterAll(async () => {
  await bus?.stop();
  await database?.close();
});

async function thread(): Promise<string> {
  const row = await database.db
    .insertInto('threads')
    .values({ workspace_id: workspaceId, agent_id: '00000000-0000-0000-0000-000000000001', principal: 'p', metadata: '{}' })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

async function startRun(threadId: string, enqueue = false): Promise<string> {
  const created = await lifecycle.create({
    workspaceId,
    threadId,
    agentId: '00000000-0000-0000-0000-000000000001',
    revision: 'r1',
    principal: 'p',
    input,
    metadata: {},
    threadFrom: enqueue ? ['idle', 'interrupted', 'error', 'busy'] : ['idle', 'interrupted', 'error'],
  });
  if (!created) throw new Error('not created');
  return created.row.id;
}

async function status(runId: string) {
  const run = await database.db.selectFrom('runs').select(['status', 'thread_id']).where('id', '=', runId).executeTakeFirstOrThrow();
  const t = await database.db.selectFrom('threads').select('status').where('id', '=', run.thread_id).executeTakeFirstOrThrow();
  return { run: run.status, thread: t.status };
}

async function drain(queue: RunQueue) {
  // Other tests' runs may be pending: claim until ours is among them.
  return queue.claim(100);
}

describe('run lifecycle', () => {
  it('every status write is checked against the transition table', () => {
    for (const to of RUN_STATUSES) for (const from of RUN_STATUSES) expect(canRunTransition(from, to)).toBe(RUN_TRANSITIONS[to].includes(from));
    expect(canRunTransition('success', 'running')).toBe(false);
    // `timeout` (issue 19) is reachable from running only.
    expect(RUN_TRANSITIONS.timeout).toEqual(['running']);
  });

  it('a run is accepted with its metadata event already in the log, and its place in the queue', async () => {
    const t1 = await thread();
    const t2 = await thread();
    await startRun(t1);
    const second = await startRun(t2);
    const { rows } = await database.pool.query<{ seq: number; event: string; data: string }>('SELECT seq, event, data FROM run_events WHERE run_id = $1', [second]);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.event).toBe('metadata');
    const data = JSON.parse(rows[0]!.data) as Record<string, unknown>;
    expect(data).toMatchObject({ run_id: second, attempt: 1, status: 'pending' });
    expect(data.queue_position).toBeGreaterThanOrEqual(1);
    // A second start on a busy thread is refused (no run, no event).
    expect(await lifecycle.create({ workspaceId, threadId: t1, agentId: '00000000-0000-0000-0000-000000000001', revision: 'r', principal: 'p', input, metadata: {}, threadFrom: ['idle'] })).toBeUndefined();
    await drain(new RunQueue(lifecycle, bus, 'drainer', 30_000));
  });

  it('a stale lease: the sweep hands the run back, the old worker learns it on renewal and cannot settle it', async () => {
    const a = new RunQueue(lifecycle, bus, 'worker-a', 30_000);
    const b = new RunQueue(lifecycle, bus, 'worker-b', 30_000);
    const runId = await startRun(await thread());
    const claimed = await drain(a);
    const mine = claimed.find((r) => r.id === runId)!;
    expect(mine).toMatchObject({ attempt: 1, lastSeq: 1 });
    // Worker A stalls: its lease runs out.
    await database.pool.query("UPDATE runs SET lease_expires_at = now() - interval '1 second' WHERE id = $1", [runId]);
    const swept = await b.sweepExpired(3);
    expect(swept.retried).toBeGreaterThanOrEqual(1);
    expect(await status(runId)).toEqual({ run: 'pending', thread: 'busy' });
    expect(await a.renew([runId])).toEqual([runId]);
    const again = (await drain(b)).find((r) => r.id === runId)!;
    expect(again.attempt).toBe(2);
    expect(await a.finish(mine, { status: 'success', thread: 'idle' })).toBe(false);
    expect(await status(runId)).toEqual({ run: 'running', thread: 'busy' });
    expect(await b.finish(again, { status: 'success', thread: 'idle' })).toBe(true);
    expect(await status(runId)).toEqual({ run: 'success', thread: 'idle' });
  });

  it('a worker that lost a lease and claimed the run again: only the newer attempt settles it; its own sweep leaves what it executes', async () => {
    const a = new RunQueue(lifecycle, bus, 'worker-again', 30_000);
    const runId = await startRun(await thread());
    const first = (await drain(a)).find((r) => r.id === runId)!;
    await database.pool.query("UPDATE runs SET lease_expires_at = now() - interval '1 second' WHERE id = $1", [runId]);
    // Its own sweep, told the run executes here, leaves it alone (a late renewal is not a lost worker).
    await a.sweepExpired(3, [runId]);
    expect(await status(runId)).toEqual({ run: 'running', thread: 'busy' });
    // Another process's sweep hands it back, and the same worker claims it again.
    await new RunQueue(lifecycle, bus, 'worker-other', 30_000).sweepExpired(3);
    const second = (await drain(a)).find((r) => r.id === runId)!;
    expect(second.attempt).toBe(first.attempt + 1);
    expect(await a.finish(first, { status: 'error', thread: 'error' })).toBe(false);
    expect(await status(runId)).toEqual({ run: 'running', thread: 'busy' });
    expect(await a.finish(second, { status: 'success', thread: 'idle' })).toBe(true);
    expect(await status(runId)).toEqual({ run: 'success', thread: 'idle' });
  });

  it('a cancel racing a finish: exactly one wins, and the thread ends free either way', async () => {
    const q = new RunQueue(lifecycle, bus, 'worker-race', 30_000);
    for (let i = 0; i < 10; i++) {
      const runId = await startRun(await thread());
      const run = (await drain(q)).find((r) => r.id === runId)!;
      const [cancelled, finished] = await Promise.all([lifecycle.cancel(sql`id = ${runId}`), q.finish(run, { status: 'success', thread: 'idle' })]);
      expect(cancelled.length + (finished ? 1 : 0)).toBe(1);
      expect(await status(runId)).toEqual({ run: finished ? 'success' : 'interrupted', thread: 'idle' });
    }
  });

  it('one rule frees a thread: not while another run of it waits, whoever settles', async () => {
    const q = new RunQueue(lifecycle, bus, 'worker-rule', 30_000);
    const t = await thread();
    const first = await startRun(t);
    const queued = await startRun(t, true);
    const run = (await drain(q)).find((r) => r.id === first)!;
    expect((await drain(q)).some((r) => r.id === queued)).toBe(false); // waits for the first
    expect(await q.finish(run, { status: 'success', thread: 'idle' })).toBe(true);
    expect(await status(first)).toEqual({ run: 'success', thread: 'busy' });
    // Cancelling the queued run frees the thread now.
    expect(await lifecycle.cancel(sql`id = ${queued}`)).toHaveLength(1);
    expect(await status(queued)).toEqual({ run: 'interrupted', thread: 'idle' });
  });

  it('a cancelled run holds its thread until its worker has stopped it, or its lease expired', async () => {
    const a = new RunQueue(lifecycle, bus, 'worker-stopping', 30_000);
    const b = new RunQueue(lifecycle, bus, 'worker-next', 30_000);
    const t = await thread();
    const first = await startRun(t);
    const run = (await drain(a)).find((r) => r.id === first)!;
    expect(await lifecycle.cancel(sql`id = ${first}`)).toHaveLength(1);
    // The cancel freed the thread and a new run takes it; it waits while the worker is still stopping.
    const next = await startRun(t);
    expect(await status(next)).toEqual({ run: 'pending', thread: 'busy' });
    expect((await drain(b)).some((r) => r.id === next)).toBe(false);
    expect(await lifecycle.untilStopped([first], 0)).toBe(false);
    // The worker stops: its settle writes nothing over the cancel, gives the lease back, keeps the usage.
    const usage = { model: 'scripted:x', input_tokens: 3, output_tokens: 4 };
    expect(await a.settle(run, { status: 'interrupted', thread: 'idle', usage })).toMatchObject({ settled: false, threadHeld: false });
    expect(await lifecycle.untilStopped([first], 0)).toBe(true);
    const row = await database.db.selectFrom('runs').select(['status', 'lease_owner', 'metadata']).where('id', '=', first).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'interrupted', lease_owner: null, metadata: { usage } });
    const claimed = (await drain(b)).find((r) => r.id === next)!;
    expect(claimed).toBeDefined();
    await b.finish(claimed, { status: 'success', thread: 'idle' });

    // A worker that died while stopping its run holds the thread only until its lease expires.
    const third = await startRun(t);
    await drain(a);
    await lifecycle.cancel(sql`id = ${third}`);
    const fourth = await startRun(t);
    expect((await drain(b)).some((r) => r.id === fourth)).toBe(false);
    await database.pool.query("UPDATE runs SET lease_expires_at = now() - interval '1 second' WHERE id = $1", [third]);
    expect((await drain(b)).some((r) => r.id === fourth)).toBe(true);
    // The sweep clears the dead worker's lease.
    await b.sweepExpired(3);
    expect(await database.db.selectFrom('runs').select(['lease_owner', 'lease_expires_at']).where('id', '=', third).executeTakeFirstOrThrow()).toEqual({ lease_owner: null, lease_expires_at: null });
  });

  it('a cancel whose notification never arrived is found by the lease renewal', async () => {
    const q = new RunQueue(lifecycle, bus, 'worker-renew', 30_000);
    const runId = await startRun(await thread());
    await drain(q);
    // Another process cancels straight in the database (its NOTIFY lost).
    await lifecycle.cancel(sql`id = ${runId}`);
    expect(await q.renew([runId])).toEqual([runId]);
  });

  it('refuses an illegal transition before touching the database', () => {
    expect(() => new IllegalTransition('run', 'success', 'running')).not.toThrow();
    // running → running is no transition: the outcome type forbids it, and the guard catches a cast.
    return expect(lifecycle.finish('w', '00000000-0000-0000-0000-000000000000', { status: 'running' as never, thread: 'idle' })).rejects.toThrow(IllegalTransition);
  });

  it('deletes the events of runs that ended before the retention period, and only those', async () => {
    const q = new RunQueue(lifecycle, bus, 'worker-retention', 30_000);
    const oldRun = await startRun(await thread());
    const newRun = await startRun(await thread());
    for (const r of await drain(q)) await q.finish(r, { status: 'success', thread: 'idle' });
    const active = await startRun(await thread());
    await database.pool.query("UPDATE runs SET ended_at = now() - interval '40 days' WHERE id = $1", [oldRun]);
    await database.pool.query("UPDATE run_events SET created_at = now() - interval '40 days' WHERE run_id = ANY($1)", [[oldRun, active]]);
    const { sweepRunEvents } = await import('../core/runs/sweeper.js');
    expect(await sweepRunEvents(lifecycle, 30)).toBeGreaterThanOrEqual(1);
    const left = await database.pool.query<{ run_id: string }>('SELECT DISTINCT run_id FROM run_events WHERE run_id = ANY($1)', [[oldRun, newRun, active]]);
    expect(left.rows.map((r) => r.run_id).sort()).toEqual([newRun, active].sort());
  });
});
