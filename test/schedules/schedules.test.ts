// Schedules over real HTTP on a real server, in real time (second-level, 6-field expressions).
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runHangar } from '../support/cli.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent, createThread } from '../runtime/support.js';
import { createSchedule, eventually, sleep, ticksOf, ticksWithFinishedRuns } from './support.js';

let server: TestServer;
let agentId: string;

beforeAll(async () => {
  server = await startTestServer({ env: { HANGAR_SCHEDULE_MISSED_AFTER_MS: '1500' } });
  agentId = await createAgent(server);
});
afterAll(async () => {
  await server?.close();
});

describe('schedules', () => {
  it('fire on time, repeatedly, each run on a fresh thread and listed with the schedule', async () => {
    const created = await createSchedule(server, { agent_id: agentId, schedule: '* * * * * *', input: { messages: [{ role: 'user', content: 'status?' }] }, timezone: 'Europe/Paris' });
    expect(created).toMatchObject({ agent_id: agentId, schedule: '* * * * * *', timezone: 'Europe/Paris', thread: 'new', enabled: true, multitask_strategy: 'reject', last_run: null });
    expect(Date.parse(created.next_run_at!)).toBeGreaterThan(Date.parse(created.created_at) - 1000);

    const ticks = await ticksWithFinishedRuns(server, created.id, 3);
    const started = ticks.filter((t) => t.state === 'started');
    expect(started.length).toBeGreaterThanOrEqual(3);
    for (const tick of started) {
      // A tick is a whole second of the expression, and its run never starts before it.
      expect(new Date(tick.tick_at).getUTCMilliseconds()).toBe(0);
      expect(Date.parse(tick.run!.created_at)).toBeGreaterThanOrEqual(Date.parse(tick.tick_at));
      // Catch-up is only for a tick found later than HANGAR_SCHEDULE_MISSED_AFTER_MS (a loaded machine can be that late).
      if (tick.catch_up) expect(Date.parse(tick.run!.created_at) - Date.parse(tick.tick_at)).toBeGreaterThan(1500);
    }
    expect(new Set(started.map((t) => t.tick_at)).size).toBe(started.length);
    expect(new Set(started.map((t) => t.thread_id)).size).toBe(started.length);

    // Each run answered the scheduled message, on a thread marked with the schedule.
    const done = started.filter((t) => t.run!.status === 'success');
    expect(done.length).toBeGreaterThanOrEqual(3);
    const state = await server.client.GET('/v1/deepagents/threads/{thread_id}/state', { params: { path: { thread_id: done[0]!.thread_id! } } });
    const messages = state.data!.values.messages as { type: string; content: string }[];
    expect(messages.at(-1)).toMatchObject({ type: 'ai', content: 'You said: status?' });
    const thread = await server.client.GET('/v1/deepagents/threads/{thread_id}', { params: { path: { thread_id: done[0]!.thread_id! } } });
    expect(thread.data!.metadata).toMatchObject({ schedule_id: created.id });
    const runs = await server.client.GET('/v1/deepagents/threads/{thread_id}/runs', { params: { path: { thread_id: done[0]!.thread_id! } } });
    expect(runs.data!.map((r) => r.run_id)).toContain(done[0]!.run_id);

    const got = await server.client.GET('/v1/deepagents/schedules/{schedule_id}', { params: { path: { schedule_id: created.id } } });
    expect(got.data!.last_run).not.toBeNull();
    expect(Date.parse(got.data!.next_run_at!)).toBeGreaterThan(Date.parse(got.data!.last_run!.tick_at));

    // Disabled: no further tick fires, and it says so.
    const disabled = await server.client.PATCH('/v1/deepagents/schedules/{schedule_id}', { params: { path: { schedule_id: created.id } }, body: { enabled: false } });
    expect(disabled.data).toMatchObject({ enabled: false, next_run_at: null });
    await sleep(1_000); // a tick claimed just before the PATCH may still be starting its run
    const before = (await ticksOf(server, created.id)).length;
    await sleep(2_500);
    expect((await ticksOf(server, created.id)).length).toBe(before);

    // Enabled again: it fires from the next tick on (no catch-up for the disabled span).
    const enabledAt = Date.now();
    await server.client.PATCH('/v1/deepagents/schedules/{schedule_id}', { params: { path: { schedule_id: created.id } }, body: { enabled: true } });
    const resumed = await eventually(async () => {
      const all = await ticksOf(server, created.id);
      return all.length > before ? all : undefined;
    });
    for (const tick of resumed.slice(before)) expect(Date.parse(tick.tick_at)).toBeGreaterThanOrEqual(Math.floor(enabledAt / 1000) * 1000);

    // Deleted: gone, and nothing fires for it any more.
    expect((await server.client.DELETE('/v1/deepagents/schedules/{schedule_id}', { params: { path: { schedule_id: created.id } } })).response.status).toBe(204);
    await sleep(300);
    const threadsAfterDelete = await countScheduleThreads(created.id);
    await sleep(2_500);
    expect(await countScheduleThreads(created.id)).toBe(threadsAfterDelete);
    expect((await server.client.GET('/v1/deepagents/schedules/{schedule_id}', { params: { path: { schedule_id: created.id } } })).response.status).toBe(404);
    expect((await server.client.DELETE('/v1/deepagents/schedules/{schedule_id}', { params: { path: { schedule_id: created.id } } })).response.status).toBe(404);
  });

  it('runs on one thread when given one, and skips a tick that finds the thread busy (multitask reject)', async () => {
    const config = await server.client.POST('/v1/deepagents/model-configs', { body: { name: 'slow-sched', model_id: 'scripted:slow', parameters: { delay_ms: 400 } } });
    expect(config.response.status).toBe(201);
    const slowAgent = await createAgent(server, { runtime: { model: { model_id: 'slow-sched' } } });
    const threadId = await createThread(server, slowAgent);
    // Every second, on a thread whose runs take about two seconds (five words at 400 ms).
    const created = await createSchedule(server, { agent_id: slowAgent, schedule: '* * * * * *', messages: [{ role: 'user', content: 'one two three' }], thread: threadId });
    expect(created.thread).toBe(threadId);
    const ticks = await eventually(async () => {
      const all = await ticksOf(server, created.id);
      return all.some((t) => t.state === 'skipped') && all.some((t) => t.state === 'started') ? all : undefined;
    });
    await server.client.DELETE('/v1/deepagents/schedules/{schedule_id}', { params: { path: { schedule_id: created.id } } });
    expect(ticks.filter((t) => t.state === 'started').every((t) => t.thread_id === threadId)).toBe(true);
    const skipped = ticks.find((t) => t.state === 'skipped')!;
    expect(skipped.error).toMatchObject({ error: 'thread_busy' });
    expect(skipped.run).toBeNull();
  });

  it('an enqueue schedule firing faster than its runs finish queues at most 3 runs, then skips ticks and says why', async () => {
    const config = await server.client.POST('/v1/deepagents/model-configs', { body: { name: 'slow-enqueue', model_id: 'scripted:slow', parameters: { delay_ms: 1500 } } });
    expect(config.response.status).toBe(201);
    const slowAgent = await createAgent(server, { runtime: { model: { model_id: 'slow-enqueue' } } });
    const threadId = await createThread(server, slowAgent);
    // Every second, on a thread whose runs take several seconds each.
    const created = await createSchedule(server, { agent_id: slowAgent, schedule: '* * * * * *', messages: [{ role: 'user', content: 'one two three' }], thread: threadId, multitask_strategy: 'enqueue' });
    const skipped = await eventually(async () => (await ticksOf(server, created.id)).find((t) => t.state === 'skipped'));
    await server.client.DELETE('/v1/deepagents/schedules/{schedule_id}', { params: { path: { schedule_id: created.id } } });
    expect(skipped.error).toMatchObject({ error: 'schedule_queue_full' });
    expect(skipped.run).toBeNull();
    const db = new pg.Client({ connectionString: server.databaseUrl });
    await db.connect();
    try {
      const pending = await db.query("SELECT count(*)::int AS n FROM runs WHERE thread_id = $1 AND status = 'pending'", [threadId]);
      expect(pending.rows[0].n).toBeLessThanOrEqual(3);
    } finally {
      await db.end();
    }
  });

  it('stops, and says why, when the operator turns the workspace’s preview access off', async () => {
    const ws = await server.createWorkspace(`gated-${Date.now()}`);
    const made = await ws.client.POST('/v1/deepagents/agents', { body: { name: 'gated', instructions: 'Test.', runtime: { model: { model_id: 'scripted:demo' } } } });
    const created = await ws.client.POST('/v1/deepagents/schedules', { body: { agent_id: made.data!.id, schedule: '* * * * * *', messages: [{ role: 'user', content: 'tick' }] } });
    expect(created.response.status).toBe(201);
    const scheduleId = created.data!.id;
    const byApi = async () => (await ws.client.GET('/v1/deepagents/schedules/{schedule_id}/runs', { params: { path: { schedule_id: scheduleId }, query: { page_size: 100 } } })).data?.items;
    await eventually(async () => ((await byApi())?.some((t) => t.state === 'started') ? true : undefined));

    // The operator command, as an operator types it (it writes the database).
    const storage = ['--database-url', server.databaseUrl, '--data-dir', server.dataDir];
    const off = await runHangar(['workspaces', 'set', ws.name, '--preview-access', 'off', ...storage]);
    expect(off.code, off.stderr).toBe(0);
    expect((await ws.client.GET('/v1/deepagents/schedules', {})).response.status).toBe(403);
    // The scheduler starts runs without a request: it must apply the same gate and stop the schedule.
    const db = new pg.Client({ connectionString: server.databaseUrl });
    await db.connect();
    try {
      await eventually(async () => ((await db.query('SELECT enabled FROM schedules WHERE id = $1', [scheduleId])).rows[0]?.enabled === false ? true : undefined));
    } finally {
      await db.end();
    }

    const on = await runHangar(['workspaces', 'set', ws.name, '--preview-access', 'on', ...storage]);
    expect(on.code, on.stderr).toBe(0);
    const schedule = await eventually(async () => (await ws.client.GET('/v1/deepagents/schedules/{schedule_id}', { params: { path: { schedule_id: scheduleId } } })).data);
    expect(schedule).toMatchObject({ enabled: false, next_run_at: null, last_run: { state: 'failed', run: null, error: { error: 'preview_access_required' } } });
  });

  it('refuses bad input with the field named, and leaves nothing behind', async () => {
    const post = (body: unknown) => fetch(`${server.url}/v1/deepagents/schedules`, { method: 'POST', headers: { 'x-api-key': server.adminKey, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const base = { agent_id: agentId, schedule: '0 9 * * *', input: { messages: [{ role: 'user' as const, content: 'hi' }] } };
    const cases: [unknown, number, string][] = [
      [{ ...base, schedule: '* * * *' }, 422, 'schedule'],
      [{ ...base, schedule: '0 0 0 * * * 2030' }, 422, 'schedule'],
      [{ ...base, schedule: '99 * * * *' }, 422, 'schedule'],
      [{ ...base, timezone: 'Mars/Olympus' }, 422, 'timezone'],
      [{ ...base, input: undefined }, 422, 'messages'],
      [{ ...base, messages: [{ role: 'user', content: 'other' }] }, 422, 'messages'],
      [{ ...base, thread: 'sometimes' }, 422, 'thread'],
      [{ ...base, thread: '00000000-0000-4000-8000-000000000000' }, 422, 'thread'],
      [{ ...base, webhook: 'ftp://example.com/x' }, 422, 'webhook'],
      [{ ...base, end_time: 'tomorrow' }, 422, 'end_time'],
      // Ends before its first tick: it would never fire (the next 09:00 is after an end a minute ago).
      [{ ...base, end_time: new Date(Date.now() - 60_000).toISOString() }, 422, 'end_time'],
      [{ ...base, agent_id: '00000000-0000-4000-8000-000000000000' }, 404, 'agent'],
      // Its runs carry its metadata: the keys Hangar records there are refused, as on a run.
      [{ ...base, metadata: { usage: { model: 'forged', input_tokens: 1 } } }, 422, '"metadata","usage"'],
    ];
    for (const [body, status, named] of cases) {
      const res = await post(body);
      const text = await res.text();
      expect(res.status, text).toBe(status);
      expect(text).toContain(named);
    }
    // A thread of another agent is refused too.
    const other = await createAgent(server);
    const otherThread = await createThread(server, other);
    const res = await post({ ...base, thread: otherThread });
    expect(res.status).toBe(422);
    expect(await res.text()).toContain('another agent');
    const list = await server.client.GET('/v1/deepagents/schedules', { params: { query: { agent_id: agentId } } });
    expect(list.data!.items.filter((s) => s.schedule === '0 9 * * *')).toHaveLength(0);

    // A viewer reads but never changes.
    const viewer = server.clientFor(await server.createKey({ role: 'viewer' }));
    const refused = await viewer.POST('/v1/deepagents/schedules', { body: base });
    expect(refused.response.status).toBe(403);
    expect((await viewer.GET('/v1/deepagents/schedules', {})).response.status).toBe(200);
    expect((await viewer.GET('/v1/deepagents/webhooks/secret', {})).response.status).toBe(403);
  });

  it('refuses to re-enable a schedule whose agent was deleted, and leaves it off', async () => {
    const doomed = await createAgent(server);
    const schedule = await createSchedule(server, { agent_id: doomed, schedule: '0 0 1 1 *', messages: [{ role: 'user', content: 'x' }], enabled: false });
    const gone = await server.client.DELETE('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: doomed } } });
    expect(gone.response.status).toBe(204);
    const path = { schedule_id: schedule.id };
    const res = await server.client.PATCH('/v1/deepagents/schedules/{schedule_id}', { params: { path }, body: { enabled: true } });
    expect(res.response.status).toBe(422);
    expect(JSON.stringify(res.error)).toContain('was deleted');
    expect((res.error as { errors: { loc: string[] }[] }).errors[0]!.loc).toEqual(['body', 'enabled']);
    expect((await server.client.GET('/v1/deepagents/schedules/{schedule_id}', { params: { path } })).data).toMatchObject({ enabled: false, next_run_at: null });
    // Other changes, and keeping it off, still work.
    const renamed = await server.client.PATCH('/v1/deepagents/schedules/{schedule_id}', { params: { path }, body: { metadata: { note: 'kept' }, enabled: false } });
    expect(renamed.data).toMatchObject({ enabled: false, metadata: { note: 'kept' } });
  });

  it('a PATCH never writes back what it read over a change made meanwhile (the scheduler turning the schedule off)', async () => {
    const schedule = await createSchedule(server, { agent_id: agentId, schedule: '0 0 1 1 *', messages: [{ role: 'user', content: 'x' }] });
    const db = new pg.Client({ connectionString: server.databaseUrl });
    await db.connect();
    try {
      // Turn it off as the scheduler does when its agent is gone, in a transaction held open while the PATCH arrives.
      await db.query('BEGIN');
      await db.query('UPDATE schedules SET enabled = false, next_run_at = NULL, updated_at = now() WHERE id = $1', [schedule.id]);
      const patch = server.client.PATCH('/v1/deepagents/schedules/{schedule_id}', { params: { path: { schedule_id: schedule.id } }, body: { metadata: { note: 'meanwhile' } } });
      // Wait until the PATCH waits on the row, then let the disabling land.
      await eventually(async () => {
        // pg_stat_activity is read once per transaction unless its snapshot is cleared: this
        // connection holds a transaction open, so without the clear it would never see the wait.
        await db.query('SELECT pg_stat_clear_snapshot()');
        const waiting = await db.query("SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ILIKE '%schedules%' AND pid <> pg_backend_pid()");
        return waiting.rowCount ? true : undefined;
      });
      await db.query('COMMIT');
      const res = await patch;
      expect(res.response.status).toBe(200);
      expect(res.data).toMatchObject({ enabled: false, next_run_at: null, metadata: { note: 'meanwhile' } });
      const stored = await db.query('SELECT enabled, next_run_at FROM schedules WHERE id = $1', [schedule.id]);
      expect(stored.rows[0]).toEqual({ enabled: false, next_run_at: null });
    } finally {
      await db.end();
    }
  });

  it('with If-Match, a PATCH changes the schedule only if it has not changed since the updated_at it names (else 412, nothing written)', async () => {
    const schedule = await createSchedule(server, { agent_id: agentId, schedule: '0 0 1 1 *', messages: [{ role: 'user', content: 'x' }] });
    const path = { schedule_id: schedule.id };
    const patch = (ifMatch: string, body: { schedule?: string; metadata?: Record<string, string> }) =>
      server.client.PATCH('/v1/deepagents/schedules/{schedule_id}', { params: { path, header: { 'if-match': ifMatch } }, body });
    const first = await patch(`"${schedule.updated_at}"`, { schedule: '0 6 * * *' });
    expect(first.response.status).toBe(200);
    expect(first.data!.updated_at).not.toBe(schedule.updated_at);
    // Computed from the first version, which is no longer the schedule's.
    const stale = await patch(`"${schedule.updated_at}"`, { schedule: '0 7 * * *' });
    expect(stale.response.status).toBe(412);
    expect(stale.error).toMatchObject({ code: 'schedule_changed', status: 412 });
    expect(JSON.stringify(stale.error)).toContain(first.data!.updated_at);
    expect((await server.client.GET('/v1/deepagents/schedules/{schedule_id}', { params: { path } })).data).toMatchObject({ schedule: '0 6 * * *', updated_at: first.data!.updated_at });
    // Unquoted, weak, in a list, or `*`: all entity-tag forms are read.
    expect((await patch(`W/"${first.data!.updated_at}"`, { metadata: { a: '1' } })).response.status).toBe(200);
    expect((await patch('*', { metadata: { a: '2' } })).response.status).toBe(200);
    const current = (await server.client.GET('/v1/deepagents/schedules/{schedule_id}', { params: { path } })).data!;
    expect((await patch(`"nope", ${current.updated_at}`, { metadata: { a: '3' } })).response.status).toBe(200);
  });

  it('with If-Match, two edits in the same millisecond cannot slip past each other (each change is a new updated_at)', async () => {
    const schedule = await createSchedule(server, { agent_id: agentId, schedule: '0 0 1 1 *', messages: [{ role: 'user', content: 'x' }] });
    const path = { schedule_id: schedule.id };
    const patch = (ifMatch: string, body: { schedule?: string }) => server.client.PATCH('/v1/deepagents/schedules/{schedule_id}', { params: { path, header: { 'if-match': ifMatch } }, body });
    // The server's clock held still: every change it makes falls in the same millisecond.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    try {
      const first = await patch(`"${schedule.updated_at}"`, { schedule: '0 6 * * *' });
      expect(first.response.status).toBe(200);
      // Two clients computed their change from the first edit's version: only one may apply.
      const second = await patch(`"${first.data!.updated_at}"`, { schedule: '0 7 * * *' });
      expect(second.response.status).toBe(200);
      expect(second.data!.updated_at).not.toBe(first.data!.updated_at);
      const third = await patch(`"${first.data!.updated_at}"`, { schedule: '0 8 * * *' });
      expect(third.response.status).toBe(412);
      expect(third.error).toMatchObject({ code: 'schedule_changed' });
    } finally {
      vi.useRealTimers();
    }
    expect((await server.client.GET('/v1/deepagents/schedules/{schedule_id}', { params: { path } })).data).toMatchObject({ schedule: '0 7 * * *' });
  });

  it('lists with filters and pages, shows end_time and stops at it', async () => {
    // A week and a day always hold a weekday's 09:00 in New York.
    const ends = new Date(Date.now() + 8 * 24 * 60 * 60 * 1000).toISOString();
    const a = await createSchedule(server, { agent_id: agentId, schedule: '0 9 * * 1-5', timezone: 'America/New_York', messages: [{ role: 'user', content: 'report' }], end_time: ends, metadata: { team: 'ops' } });
    const b = await createSchedule(server, { agent_id: agentId, schedule: '30 8 * * *', messages: [{ role: 'user', content: 'report' }], enabled: false });
    expect(b.next_run_at).toBeNull();
    expect(a.end_time).toBe(ends);
    expect(Date.parse(a.next_run_at!)).toBeLessThanOrEqual(Date.parse(ends));
    // Moved to before its next tick, the end stops it: nothing is due any more.
    const ended = await server.client.PATCH('/v1/deepagents/schedules/{schedule_id}', { params: { path: { schedule_id: a.id } }, body: { end_time: new Date(Date.parse(a.next_run_at!) - 1000).toISOString() } });
    expect(ended.data).toMatchObject({ enabled: true, next_run_at: null });
    const enabled = await server.client.GET('/v1/deepagents/schedules', { params: { query: { agent_id: agentId, enabled: 'true' } } });
    expect(enabled.data!.items.map((s) => s.id)).toContain(a.id);
    expect(enabled.data!.items.map((s) => s.id)).not.toContain(b.id);
    const paged = await server.client.GET('/v1/deepagents/schedules', { params: { query: { agent_id: agentId, page_size: 1 } } });
    expect(paged.data!.items).toHaveLength(1);
    expect(paged.data!.next_cursor).toBe('1');
    const changed = await server.client.PATCH('/v1/deepagents/schedules/{schedule_id}', { params: { path: { schedule_id: b.id } }, body: { schedule: '0 */2 * * *', enabled: true } });
    expect(changed.data).toMatchObject({ schedule: '0 */2 * * *', enabled: true });
    expect(new Date(changed.data!.next_run_at!).getUTCMinutes()).toBe(0);
  });
});

async function countScheduleThreads(scheduleId: string): Promise<number> {
  const res = await server.client.POST('/v1/deepagents/threads/count', { body: { metadata: { schedule_id: scheduleId } } });
  return res.data!;
}
