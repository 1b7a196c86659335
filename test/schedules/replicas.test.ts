// Schedules across processes sharing one database: three replicas fire each tick exactly once, and a
// restart after ticks were missed follows the missed-tick policy.
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { startHangar, type Hangar } from '../../src/server.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent, createThread, run } from '../runtime/support.js';
import { createSchedule, eventually, sleep, ticksOf, ticksWithFinishedRuns } from './support.js';

const quiet = { logDestination: new Writable({ write: (_c, _e, done) => done() }), announce: () => {} };
const secretKey = randomBytes(32).toString('hex');
const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

function replica(first: TestServer, env: Record<string, string> = {}): Promise<Hangar> {
  return startHangar(
    loadConfig({
      flags: { port: 0, databaseUrl: first.databaseUrl, dataDir: first.dataDir },
      env: { HANGAR_BOOTSTRAP_API_KEY: first.adminKey, HANGAR_SECRET_KEY: secretKey, LOG_LEVEL: 'silent', ...env },
    }),
    quiet,
  );
}

describe('schedules across replicas', () => {
  it('three servers on one database start exactly one run per tick', async () => {
    const first = await startTestServer({ env: { HANGAR_SECRET_KEY: secretKey } });
    closers.push(() => first.close());
    const others = [await replica(first), await replica(first)];
    for (const o of others) closers.push(() => o.close());
    const agentId = await createAgent(first);
    const schedule = await createSchedule(first, { agent_id: agentId, schedule: '* * * * * *', messages: [{ role: 'user', content: 'tick' }] });
    await ticksWithFinishedRuns(first, schedule.id, 6);
    await first.client.PATCH('/v1/deepagents/schedules/{schedule_id}', { params: { path: { schedule_id: schedule.id } }, body: { enabled: false } });
    await sleep(500);
    const ticks = await ticksOf(first, schedule.id);
    const started = ticks.filter((t) => t.state === 'started');
    expect(started.length).toBeGreaterThanOrEqual(6);
    expect(ticks.every((t) => t.state === 'started')).toBe(true);
    expect(new Set(ticks.map((t) => t.tick_at)).size).toBe(ticks.length);

    // Counted straight from the database: one thread and one run per tick, none more.
    const db = new pg.Client({ connectionString: first.databaseUrl });
    await db.connect();
    try {
      const { rows } = await db.query<{ threads: string; runs: string }>(
        `SELECT count(DISTINCT t.id) AS threads, count(r.id) AS runs FROM threads t LEFT JOIN runs r ON r.thread_id = t.id WHERE t.metadata @> $1::jsonb`,
        [JSON.stringify({ schedule_id: schedule.id })],
      );
      expect(Number(rows[0]!.threads)).toBe(ticks.length);
      expect(Number(rows[0]!.runs)).toBe(ticks.length);
    } finally {
      await db.end();
    }
  });

  it('after every server was down, missed ticks give one catch-up run (or none under the skip policy), then it goes on schedule', async () => {
    let server = await startTestServer({ env: { HANGAR_SCHEDULE_MISSED_AFTER_MS: '1500' } });
    const { databaseUrl, dataDir, adminKey } = server;
    const agentId = await createAgent(server);
    const schedule = await createSchedule(server, { agent_id: agentId, schedule: '* * * * * *', messages: [{ role: 'user', content: 'tick' }] });
    await ticksWithFinishedRuns(server, schedule.id, 1);
    await server.close();
    const stoppedAt = Date.now();
    const before = await countTicks(databaseUrl, schedule.id);
    await sleep(4_000); // about four ticks fall due while no server runs

    server = await startTestServer({ databaseUrl, dataDir, adminKey, env: { HANGAR_SCHEDULE_MISSED_AFTER_MS: '1500' } });
    const restartedAt = Date.now();
    const after = await eventually(async () => {
      const ticks = await ticksOf(server, schedule.id);
      const fresh = ticks.slice(before);
      return fresh.filter((t) => !t.catch_up).length >= 2 ? fresh : undefined;
    });
    const catchUps = after.filter((t) => t.catch_up);
    expect(catchUps).toHaveLength(1);
    expect(catchUps[0]!.state).toBe('started');
    // The catch-up stands for a tick that fell due while nothing ran; the others follow on schedule.
    expect(Date.parse(catchUps[0]!.tick_at)).toBeGreaterThanOrEqual(stoppedAt - 1000);
    expect(Date.parse(catchUps[0]!.tick_at)).toBeLessThan(restartedAt);
    expect(after.indexOf(catchUps[0]!)).toBe(0);
    // No run for each of the other missed ticks: the next one is already on schedule after the restart.
    expect(Date.parse(after[1]!.tick_at)).toBeGreaterThanOrEqual(restartedAt - 1000);
    await server.close();

    // The same under HANGAR_SCHEDULE_MISSED_TICKS=skip: the missed ticks are recorded, none runs.
    const beforeSkip = await countTicks(databaseUrl, schedule.id);
    await sleep(3_000);
    server = await startTestServer({ databaseUrl, dataDir, adminKey, env: { HANGAR_SCHEDULE_MISSED_AFTER_MS: '1500', HANGAR_SCHEDULE_MISSED_TICKS: 'skip' } });
    closers.push(() => server.close());
    const skipped = await eventually(async () => {
      const fresh = (await ticksOf(server, schedule.id)).slice(beforeSkip);
      return fresh.some((t) => t.state === 'started') ? fresh : undefined;
    });
    expect(skipped[0]).toMatchObject({ state: 'skipped', catch_up: true, run: null, error: { error: 'missed_tick' } });
    expect(skipped.filter((t) => t.catch_up)).toHaveLength(1);
  });
});

/** A tick of `scheduleId` due `dueAgo` ago that a scheduler claimed 2 minutes ago and then died; its id. */
async function claimedTick(db: pg.Client, scheduleId: string, dueAgo: string): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO schedule_ticks (schedule_id, workspace_id, tick_at, state, created_at)
     SELECT id, workspace_id, date_trunc('second', now()) - $2::interval, 'claimed', now() - interval '2 minutes' FROM schedules WHERE id = $1
     RETURNING id`,
    [scheduleId, dueAgo],
  );
  return rows[0]!.id;
}

describe('a scheduler that died with a tick claimed', () => {
  it('is taken over after a minute: the run it never started starts, the run it started is adopted, none twice', async () => {
    let server = await startTestServer();
    const { databaseUrl, dataDir, adminKey } = server;
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    closers.push(() => db.end());
    const agentId = await createAgent(server);
    const messages = [{ role: 'user' as const, content: 'tick' }];

    // A: its scheduler died after claiming the tick, before starting anything.
    const a = await createSchedule(server, { agent_id: agentId, schedule: '0 9 * * *', messages, enabled: false });
    await claimedTick(db, a.id, '2 minutes');

    // B, on one thread: its scheduler died after starting the run, before recording it. (The crash
    // is made by hand: a tick that ran is put back in the state such a scheduler leaves.)
    const threadId = await createThread(server, agentId);
    const b = await createSchedule(server, { agent_id: agentId, schedule: '* * * * * *', messages, thread: threadId, webhook: 'http://127.0.0.1:9/hook' });
    const [ran] = (await ticksWithFinishedRuns(server, b.id, 1)).filter((t) => t.run?.status === 'success');
    await server.client.PATCH('/v1/deepagents/schedules/{schedule_id}', { params: { path: { schedule_id: b.id } }, body: { enabled: false } });
    await sleep(1_000); // a tick claimed just before the PATCH may still be starting its run
    await db.query(
      `UPDATE schedule_ticks SET state = 'claimed', run_id = NULL, thread_id = NULL, created_at = now() - interval '2 minutes' WHERE schedule_id = $1 AND tick_at = $2`,
      [b.id, ran!.tick_at],
    );
    await db.query('DELETE FROM webhook_deliveries WHERE run_id = $1', [ran!.run_id]); // it died before registering the webhook
    const runsOf = async () => (await server.client.GET('/v1/deepagents/threads/{thread_id}/runs', { params: { path: { thread_id: threadId } } })).data!.map((r) => r.run_id);
    const runsBefore = await runsOf();

    // A new server looks for such ticks when it starts.
    await server.close();
    server = await startTestServer({ databaseUrl, dataDir, adminKey });
    closers.push(() => server.close());
    const tickOf = async (id: string, at?: string) => (await ticksOf(server, id)).find((t) => (at ? t.tick_at === at : true) && t.state !== 'claimed');
    const aTick = await eventually(() => tickOf(a.id), 30_000, 'the tick of A started');
    expect(aTick.state).toBe('started');
    expect(aTick.run_id).not.toBeNull();
    // Its claim was on time but its run starts minutes late: a catch-up, as for a tick missed while
    // no server ran. The adopted run of B started on time and stays no catch-up.
    expect(aTick.catch_up).toBe(true);
    const bTick = await eventually(() => tickOf(b.id, ran!.tick_at), 30_000, 'the tick of B adopted');
    expect(bTick).toMatchObject({ state: 'started', run_id: ran!.run_id, thread_id: threadId, catch_up: false });
    expect(await runsOf()).toEqual(runsBefore);
    // The adopted run notifies the schedule's webhook, once.
    const deliveries = await server.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}/webhooks', { params: { path: { thread_id: threadId, run_id: ran!.run_id! } } });
    expect(deliveries.data!.map((d) => [d.url, d.schedule_id])).toEqual([['http://127.0.0.1:9/hook', b.id]]);
  }, 120_000);
});

describe('a scheduler that died with a tick claimed, under HANGAR_SCHEDULE_MISSED_TICKS=skip', () => {
  it('skips a tick taken over later than the missed-after limit, starts one taken over in time, and still adopts a run that was started', async () => {
    // Missed after 5 minutes: a tick claimed 2 minutes ago is late but not missed; one due 10 minutes ago is missed.
    const env = { HANGAR_SCHEDULE_MISSED_TICKS: 'skip', HANGAR_SCHEDULE_MISSED_AFTER_MS: '300000' };
    let server = await startTestServer({ env });
    const { databaseUrl, dataDir, adminKey } = server;
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    closers.push(() => db.end());
    const agentId = await createAgent(server);
    const messages = [{ role: 'user' as const, content: 'tick' }];

    // Missed: its run never started, and it fell due 10 minutes ago.
    const missed = await createSchedule(server, { agent_id: agentId, schedule: '0 9 * * *', messages, enabled: false });
    await claimedTick(db, missed.id, '10 minutes');
    // Late, not missed: due 2 minutes ago.
    const late = await createSchedule(server, { agent_id: agentId, schedule: '0 9 * * *', messages, enabled: false });
    await claimedTick(db, late.id, '2 minutes');
    // Missed too, but its scheduler had started the run (it carries the tick's id) before dying.
    const threadId = await createThread(server, agentId);
    const started = await createSchedule(server, { agent_id: agentId, schedule: '0 9 * * *', messages, thread: threadId, enabled: false });
    const startedTick = await claimedTick(db, started.id, '10 minutes');
    const ran = await run(server, threadId, { agent_id: agentId, messages, metadata: { schedule_id: started.id, schedule_tick_id: startedTick } });
    const runId = ran.stream.runId;
    const runsOf = async () => (await server.client.GET('/v1/deepagents/threads/{thread_id}/runs', { params: { path: { thread_id: threadId } } })).data!.map((r) => r.run_id);
    expect(await runsOf()).toEqual([runId]);

    // A new server looks for such ticks when it starts.
    await server.close();
    server = await startTestServer({ databaseUrl, dataDir, adminKey, env });
    closers.push(() => server.close());
    const settled = (id: string) => eventually(async () => (await ticksOf(server, id)).find((t) => t.state !== 'claimed'), 30_000, `the tick of ${id} settled`);
    const [missedTick, lateTick, adoptedTick] = await Promise.all([settled(missed.id), settled(late.id), settled(started.id)]);
    expect(missedTick).toMatchObject({ state: 'skipped', catch_up: true, run_id: null, run: null, error: { error: 'missed_tick' } });
    expect(missedTick.error!.message).toMatch(/stopped before starting its run.*more than 300 s after the tick fell due.*skip/);
    expect(lateTick).toMatchObject({ state: 'started', catch_up: false });
    expect(lateTick.run_id).not.toBeNull();
    expect(adoptedTick).toMatchObject({ state: 'started', run_id: runId, thread_id: threadId, catch_up: false });
    expect(await runsOf()).toEqual([runId]);
  }, 120_000);
});

async function countTicks(databaseUrl: string, scheduleId: string): Promise<number> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const { rows } = await db.query<{ n: string }>('SELECT count(*) AS n FROM schedule_ticks WHERE schedule_id = $1', [scheduleId]);
    return Number(rows[0]!.n);
  } finally {
    await db.end();
  }
}
