// Schedule tick retention: ticks older than HANGAR_SCHEDULE_TICK_RETENTION_DAYS go when a server starts
// (and hourly), except the newest tick of each schedule and ticks still claimed. Old ticks are written
// straight into the database, as days of history would have left them.
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent } from '../runtime/support.js';
import { createSchedule, eventually, ticksOf } from './support.js';

const servers: TestServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.close();
});

describe('schedule tick retention', () => {
  it('deletes ticks older than the retention, keeping each schedule’s newest tick and claimed ones', async () => {
    const first = await startTestServer({ env: { HANGAR_SCHEDULE_TICK_RETENTION_DAYS: '7' } });
    servers.push(first);
    const agentId = await createAgent(first);
    const body = { agent_id: agentId, schedule: '0 0 1 1 *', messages: [{ role: 'user' as const, content: 'x' }], enabled: false };
    const busy = await createSchedule(first, body);
    const quiet = await createSchedule(first, body);
    const daysAgo = (d: number) => new Date(Date.now() - d * 86_400_000).toISOString();
    const claimedAt = daysAgo(10);
    const recentAt = daysAgo(1);
    const db = new pg.Client({ connectionString: first.databaseUrl });
    await db.connect();
    try {
      const insert = (scheduleId: string, tickAt: string, state: string) =>
        db.query("INSERT INTO schedule_ticks (schedule_id, workspace_id, tick_at, state, created_at) SELECT id, workspace_id, $2, $3, now() FROM schedules WHERE id = $1", [scheduleId, tickAt, state]);
      await insert(busy.id, daysAgo(30), 'skipped');
      await insert(busy.id, daysAgo(20), 'failed');
      await insert(busy.id, claimedAt, 'claimed');
      await insert(busy.id, recentAt, 'skipped');
      // A schedule whose only tick is old keeps it: it is what its `last_run` shows.
      await insert(quiet.id, daysAgo(40), 'skipped');
    } finally {
      await db.end();
    }
    await first.close();
    servers.pop();

    // The sweeper runs when a server starts.
    const second = await startTestServer({ databaseUrl: first.databaseUrl, dataDir: first.dataDir, adminKey: first.adminKey, env: { HANGAR_SCHEDULE_TICK_RETENTION_DAYS: '7' } });
    servers.push(second);
    const kept = await eventually(async () => {
      const ticks = await ticksOf(second, busy.id);
      return ticks.length === 2 ? ticks : undefined;
    });
    expect(kept.map((t) => new Date(t.tick_at).toISOString())).toEqual([claimedAt, recentAt]);
    expect(kept.map((t) => t.state)).toEqual(['claimed', 'skipped']);
    const quietTicks = await ticksOf(second, quiet.id);
    expect(quietTicks).toHaveLength(1);
    const got = await second.client.GET('/v1/deepagents/schedules/{schedule_id}', { params: { path: { schedule_id: quiet.id } } });
    expect(got.data!.last_run).toMatchObject({ state: 'skipped' });
  });
});
