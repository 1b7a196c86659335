// The run event hub on a real PostgreSQL: a failed log write stops the run visibly, a subscriber in
// another process finishes its stream across a dropped notification connection, and memory per run
// is bounded (late and slow subscribers read the table instead).
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabaseUrl } from '../../../test/support/database.js';
import { BUS_APPLICATION_NAME, NotificationBus } from '../../db/bus.js';
import { migrate } from '../../db/migrate.js';
import { EventLogUnavailable, RunEventHub, RunLeaseLost } from './hub.js';
import type { StoredEvent } from './types.js';

const logger = pino({ level: 'silent' });
let url: string;
let pool: pg.Pool;
let workspaceId: string;
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  url = await freshDatabaseUrl();
  pool = new pg.Pool({ connectionString: url, max: 4 });
  await migrate(pool);
  workspaceId = (await pool.query<{ id: string }>("INSERT INTO workspaces (name) VALUES ('hub') RETURNING id")).rows[0]!.id;
});
afterAll(async () => {
  for (const close of closers.reverse()) await close();
  await pool?.end();
});

async function newRun(status = 'running', id: string = randomUUID()): Promise<string> {
  // One active run per thread: each run on a thread of its own.
  const threadId = (await pool.query<{ id: string }>("INSERT INTO threads (workspace_id, agent_id, principal) VALUES ($1, gen_random_uuid(), 'p') RETURNING id", [workspaceId])).rows[0]!.id;
  const { rows } = await pool.query<{ id: string }>(
    "INSERT INTO runs (id, workspace_id, thread_id, agent_id, revision, input, principal, status) VALUES ($4, $1, $2, gen_random_uuid(), 'r', '{}', 'p', $3) RETURNING id",
    [workspaceId, threadId, status, id],
  );
  return rows[0]!.id;
}

/** A hub with its own pool and bus, as another process would have. */
async function process(limits: ConstructorParameters<typeof RunEventHub>[3] = {}) {
  const ownPool = new pg.Pool({ connectionString: url, max: 3 });
  const bus = new NotificationBus({ connectionString: url, pool: ownPool, logger, minBackoffMs: 20, maxBackoffMs: 100 });
  await bus.start();
  const hub = new RunEventHub(ownPool, bus, logger, limits);
  await hub.start();
  closers.push(async () => {
    await hub.stop();
    await bus.stop();
    await ownPool.end();
  });
  return { hub, bus, pool: ownPool };
}

const isOverFor = (runId: string) => async () => {
  const { rows } = await pool.query<{ status: string }>('SELECT status FROM runs WHERE id = $1', [runId]);
  return rows[0]?.status !== 'running';
};

async function all(gen: AsyncGenerator<StoredEvent>): Promise<StoredEvent[]> {
  const out: StoredEvent[] = [];
  for await (const e of gen) out.push(e);
  return out;
}

/**
 * A pending run watched by an API process (its own poll off: only the bus brings news) from before
 * the run was created, as a start does; `other` is a second process; `metadata` the run's first event.
 */
async function watchedRun() {
  const api = await process({ pollIntervalMs: 3_600_000 });
  const other = await process();
  const runId = randomUUID();
  const watch = api.hub.watch(runId);
  await newRun('pending', runId);
  const metadata: StoredEvent = { seq: 1, event: 'metadata', data: { run_id: runId } };
  return { api, other, runId, watch, metadata };
}

/** The executor's last two events (2 and 3), then the run succeeds and its log closes. */
async function finish(writer: ReturnType<RunEventHub['openWriter']>, runId: string): Promise<void> {
  writer.append(values(2));
  writer.append(values(3));
  await writer.flush();
  await pool.query("UPDATE runs SET status = 'success' WHERE id = $1", [runId]);
  await writer.end();
}

const values = (i: number) => ({ kind: 'values' as const, ns: [], data: { i } });

describe('RunEventHub', () => {
  it('writes the events of many runs in few statements, in order per run', async () => {
    const { hub } = await process();
    const runs = await Promise.all([newRun('success'), newRun('success'), newRun('success')]);
    const writers = runs.map((id) => hub.openWriter(id, 0));
    for (let i = 1; i <= 20; i++) for (const w of writers) w.append(values(i));
    await Promise.all(writers.map((w) => w.end()));
    expect(hub.stats.batches).toBeLessThan(20);
    for (const id of runs) {
      const stored = await hub.readStored(id, 0);
      expect(stored.map((e) => (e.data as { i: number }).i)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    }
  });

  it('a write that cannot succeed fails that run (and only it) and reports why', async () => {
    const { hub } = await process({ writeAttempts: 2 });
    const doomed = await newRun();
    const fine = await newRun();
    const w1 = hub.openWriter(doomed, 0);
    const w2 = hub.openWriter(fine, 0);
    let reported: unknown;
    w1.onFailure = (error) => (reported = error);
    // The run disappears under its writer (a rollback deleted it): its events cannot be stored.
    await pool.query('DELETE FROM runs WHERE id = $1', [doomed]);
    w1.append(values(1));
    w2.append(values(1));
    await expect(w1.flush()).rejects.toBeInstanceOf(EventLogUnavailable);
    expect(reported).toBeInstanceOf(EventLogUnavailable);
    await w2.flush();
    expect((await hub.readStored(fine, 0)).map((e) => e.seq)).toEqual([1]);
    // Nothing more is taken from the failed run.
    w1.append(values(2));
    await expect(w1.end()).rejects.toBeInstanceOf(EventLogUnavailable);
  });

  it('a subscriber in another process completes its stream across a terminated notification connection', async () => {
    const executor = await process();
    // The subscriber's own poll is off: only the bus (and its gap wake-up) can bring the events.
    const api = await process({ pollIntervalMs: 3_600_000 });
    const runId = await newRun();
    const writer = executor.hub.openWriter(runId, 0);
    const seen: StoredEvent[] = [];
    const done = (async () => {
      for await (const e of api.hub.subscribe(runId, 0, isOverFor(runId))) seen.push(e);
    })();
    writer.append(values(1));
    await writer.flush();
    for (let i = 0; i < 500 && seen.length < 1; i++) await new Promise((r) => setTimeout(r, 10));
    expect(seen).toHaveLength(1);

    // Drop the API process's listening connection while the run goes on.
    const before = api.bus.connects;
    await pool.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()', [BUS_APPLICATION_NAME]);
    await finish(writer, runId);
    await done;
    expect(seen.map((e) => e.seq)).toEqual([1, 2, 3]);
    for (let i = 0; i < 500 && api.bus.connects === before; i++) await new Promise((r) => setTimeout(r, 10));
    expect(api.bus.connects).toBeGreaterThan(before);
  });

  it('a stream served where the worker lost the run’s lease follows the run to its end in the process it was handed to', async () => {
    // The stalled process's subscriber polls nothing: only the bus brings the next attempt's events.
    const stalled = await process({ pollIntervalMs: 3_600_000 });
    const next = await process();
    const runId = await newRun();
    await pool.query("UPDATE runs SET lease_owner = 'stalled', attempt = 1, lease_expires_at = now() + interval '1 hour' WHERE id = $1", [runId]);
    const writer = stalled.hub.openWriter(runId, 0, { workerId: 'stalled', attempt: 1 });
    writer.append(values(1));
    await writer.flush();
    const stream = all(stalled.hub.subscribe(runId, 0, isOverFor(runId)));
    // A sweep handed the run on and another worker claimed it (attempt 2).
    await pool.query("UPDATE runs SET lease_owner = 'next', attempt = 2 WHERE id = $1", [runId]);
    writer.append({ kind: 'values', ns: [], data: { late: true } });
    await expect(writer.flush()).rejects.toBeInstanceOf(RunLeaseLost);
    await writer.end().catch(() => {});
    await finish(next.hub.openWriter(runId, 1, { workerId: 'next', attempt: 2 }), runId);
    const events = await stream;
    expect(events.map((e) => [e.seq, e.data])).toEqual([
      [1, { i: 1 }],
      [2, { i: 2 }],
      [3, { i: 3 }],
    ]);
  });

  it('a queued run cancelled in another process ends its streams here at once (no poll needed)', async () => {
    const api = await process({ pollIntervalMs: 3_600_000 });
    const other = await process();
    const runId = await newRun('pending');
    const stream = all(api.hub.subscribe(runId, 0, isOverFor(runId)));
    await pool.query("UPDATE runs SET status = 'interrupted' WHERE id = $1", [runId]);
    await other.hub.poke(runId);
    expect(await stream).toEqual([]);
  });

  it('a stream watched from before its run existed skips the status read, and still follows the run to its end elsewhere', async () => {
    const { api, other: executor, runId, watch, metadata } = await watchedRun();
    const log: string[] = [];
    const isOver = async () => {
      log.push('status');
      const { rows } = await pool.query<{ status: string }>('SELECT status FROM runs WHERE id = $1', [runId]);
      return !['pending', 'running'].includes(rows[0]!.status);
    };
    const done = (async () => {
      for await (const e of api.hub.subscribe(runId, 0, isOver, undefined, [metadata], watch)) log.push(`event:${e.seq}`);
    })();
    await new Promise((r) => setTimeout(r, 100));
    // Claimed and executed by another process; its events arrive through the bus.
    await pool.query("UPDATE runs SET status = 'running' WHERE id = $1", [runId]);
    const writer = executor.hub.openWriter(runId, 1);
    await finish(writer, runId);
    await done;
    expect(log.filter((l) => l.startsWith('event:'))).toEqual(['event:1', 'event:2', 'event:3']);
    // Without the watch the stream reads the status right after its first event.
    expect(log.slice(0, 2)).toEqual(['event:1', 'event:2']);
  });

  it('a watch that heard about its run before the stream subscribed (a cancel elsewhere, or its time ran out) makes the stream read the status', async () => {
    const { api, other, runId, watch, metadata } = await watchedRun();
    await pool.query("UPDATE runs SET status = 'interrupted' WHERE id = $1", [runId]);
    await other.hub.poke(runId);
    for (let i = 0; i < 500 && !watch.spoiled; i++) await new Promise((r) => setTimeout(r, 10));
    expect(watch.spoiled).toBe(true);
    // The cancel is not missed: the stream ends at once, with its first event only.
    expect((await all(api.hub.subscribe(runId, 0, isOverFor(runId), undefined, [metadata], watch))).map((e) => e.seq)).toEqual([1]);

    const lapsed = api.hub.watch(randomUUID(), 20);
    expect(lapsed.spoiled).toBe(false);
    await new Promise((r) => setTimeout(r, 60));
    expect(lapsed.spoiled).toBe(true);
  });

  it('keeps a bounded window of events per run: a late subscriber and a slow one still get everything', async () => {
    const { hub } = await process({ keepEvents: 4, subscriberBuffer: 3 });
    const runId = await newRun();
    const writer = hub.openWriter(runId, 0);
    const slow = hub.subscribe(runId, 0, isOverFor(runId));
    const firstRead = slow.next(); // subscribes; after its first event it stops reading for a while
    writer.append(values(1));
    const first = await firstRead;
    for (let i = 2; i <= 30; i++) writer.append(values(i));
    await writer.flush();
    // The late subscriber cannot be served from memory (only 4 kept): it reads the table.
    const late = hub.subscribe(runId, 0, isOverFor(runId));
    await pool.query("UPDATE runs SET status = 'success' WHERE id = $1", [runId]);
    await writer.end();
    const lateEvents = await all(late);
    expect(lateEvents.map((e) => e.seq)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    const slowEvents = [first.value as StoredEvent, ...(await all(slow))];
    expect(slowEvents.map((e) => e.seq)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
  });
});
