// A run whose worker stalled past its lease, on replicas of one database:
// - The stalled worker is simulated as test/runtime/restart.test.ts simulates a dead one, but with
//   Hangar's own parts, so that it can write late: it claims the run (RunLifecycle.claim, as a worker
//   process does) and writes its events through its own RunEventHub, then stops renewing. Another
//   process's sweep (the real statement) hands the run back to the queue; a worker process started
//   afterwards runs it to its end as attempt 2.
// - The client's stream, served by an API-only process, says the run waits for a worker again (a
//   `metadata` event `pending`, attempt 2) as soon as it is swept, before the retry's events.
// - The stalled worker writing after the sweep is refused (its writer fails; nothing reaches the log),
//   so its late events never land between the sweep's `pending` and the next attempt's events.
// - Joining again with Last-Event-ID reads on exactly; a full replay is the live stream, event for event.
// - A checkpoint the stalled worker writes late (its graph's next step) is refused too: the thread's
//   state stays the one the next attempt left, not forked under it. So are its late pending writes (a
//   task's interrupt or output under the checkpoint the next attempt left, which a resume would read).
// - A run cancelled while its worker is stalled holds its thread only until its lease expires; the
//   thread's next run may then execute, so the stalled worker's late checkpoint and events are
//   refused from then on, before any sweep has cleared the expired lease.
// - A thread deleted while the worker of its cancelled run is still stopping it: the worker's late
//   checkpoint and pending writes are refused, so nothing of the deleted thread is written back.
// Waits on events and statuses, never on time.
import { uuid6 } from '@langchain/langgraph-checkpoint';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { collect, joinRun } from '../../src/client/stream.js';
import { RunLifecycle } from '../../src/core/runs/lifecycle.js';
import { openDatabase, type DatabaseHandle } from '../../src/db/index.js';
import { createLogger } from '../../src/logging.js';
import { RunEventHub } from '../../src/runtime/events/hub.js';
import { LANGGRAPH_SCHEMA, SingleStatementSaver } from '../../src/runtime/storage.js';
import type { Hangar } from '../../src/server.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent, createThread, lastAiText, lastValues, start, startWorker, take } from './support.js';

let api: TestServer;
let stalled: DatabaseHandle;
let worker: Hangar | undefined;

beforeAll(async () => {
  // The API process executes nothing: the run waits for the (simulated) stalled worker.
  api = await startTestServer({ env: { HANGAR_ROLE: 'api' } });
  stalled = openDatabase(api.databaseUrl, { max: 2 });
});
afterEach(async () => {
  await worker?.close();
  worker = undefined;
});
afterAll(async () => {
  await stalled?.close();
  await api?.close();
});

describe('a run whose worker stalled past its lease', () => {
  it('is swept back with a pending event before the retry; the stalled worker writing late is refused; Last-Event-ID resumes exactly', async () => {
    const agentId = await createAgent(api);
    const threadId = await createThread(api, agentId);
    const stream = await start(api, threadId, { agent_id: agentId, messages: [{ role: 'user', content: 'hello again' }], stream_mode: ['values'] });
    expect(stream.status).toBe(200);
    const runId = stream.runId!;
    const seen = await take(stream, 1);
    expect(seen[0]!.data).toMatchObject({ run_id: runId, attempt: 1, status: 'pending' });

    // The stalled worker takes the run and writes an event, as a worker process does.
    const lifecycle = new RunLifecycle(stalled.db);
    const hub = new RunEventHub(stalled.pool, undefined, createLogger({ level: 'silent' }));
    const [claimed] = await lifecycle.claim('stalled-worker', 60_000, 1);
    expect(claimed).toMatchObject({ id: runId, attempt: 1, lastSeq: 1 });
    const writer = hub.openWriter(runId, claimed!.lastSeq, { workerId: 'stalled-worker', attempt: claimed!.attempt });
    writer.append({ kind: 'values', ns: [], data: { messages: [{ type: 'human', content: 'hello again' }], from: 'attempt 1' } });
    await writer.flush();
    seen.push(...(await take(stream, 1)));
    expect(seen[1]).toMatchObject({ id: '2', event: 'values', data: { from: 'attempt 1' } });

    // It stops renewing; its lease runs out and another process's sweep hands the run back.
    await stalled.pool.query(`UPDATE runs SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, [runId]);
    expect(await new RunLifecycle(stalled.db).sweepExpired(1_000, 3, [], api.hangar.runtime.hub.channel)).toMatchObject({ retried: 1 });
    // The client is told at once that the run waits for a worker again (no worker is running yet).
    seen.push(...(await take(stream, 1)));
    expect(seen[2]).toMatchObject({ id: '3', event: 'metadata', data: { run_id: runId, attempt: 2, status: 'pending' } });

    // The stalled worker wakes up and writes on: refused, its writer fails, nothing reaches the log.
    writer.append({ kind: 'values', ns: [], data: { from: 'attempt 1, late' } });
    writer.append({ kind: 'values', ns: [], data: { from: 'attempt 1, later' } });
    await expect(writer.flush()).rejects.toThrow(/no longer held by this worker/);
    const stored = await stalled.pool.query<{ seq: string }>('SELECT seq FROM run_events WHERE run_id = $1 ORDER BY seq', [runId]);
    expect(stored.rows.map((r) => Number(r.seq))).toEqual([1, 2, 3]);

    // A worker process takes the run and finishes it as attempt 2, after the pending event.
    worker = await startWorker(api);
    const rest = await collect(stream);
    const live = [...seen, ...rest];
    expect(live.map((e) => Number(e.id))).toEqual(live.map((_, i) => i + 1));
    expect(rest[0]).toMatchObject({ event: 'metadata', data: { run_id: runId, attempt: 2 } });
    expect(rest[0]!.data).not.toHaveProperty('status');
    expect(live.filter((e) => JSON.stringify(e.data).includes('late'))).toEqual([]);
    expect(lastAiText(lastValues(rest))).toBe('You said: hello again');
    const record = await api.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}', { params: { path: { thread_id: threadId, run_id: runId } } });
    expect(record.data).toMatchObject({ status: 'success', metadata: { attempt: 2, retried_after_lease_expiry: true } });

    // Joining again after the sweep's event reads on exactly; a full replay is the live stream.
    const resumed = await collect(await joinRun({ baseUrl: api.url, apiKey: api.adminKey, threadId, runId, lastEventId: '3' }));
    expect(resumed.map((e) => [e.id, e.event, e.data])).toEqual(rest.map((e) => [e.id, e.event, e.data]));
    const replay = await collect(await joinRun({ baseUrl: api.url, apiKey: api.adminKey, threadId, runId }));
    expect(replay.map((e) => [e.id, e.event, e.data])).toEqual(live.map((e) => [e.id, e.event, e.data]));

    // The stalled worker's graph finishes its step and checkpoints it, late: refused.
    const state = async () => (await api.client.GET('/v1/deepagents/threads/{thread_id}/state', { params: { path: { thread_id: threadId } } })).data!;
    const before = await state();
    const saver = new SingleStatementSaver(stalled.pool, LANGGRAPH_SCHEMA);
    saver.fence(runId, { workerId: 'stalled-worker', attempt: 1 });
    const latest = (await saver.getTuple({ configurable: { thread_id: threadId, checkpoint_ns: '' } }))!;
    const late = saver.put(
      { configurable: { thread_id: threadId, checkpoint_ns: '', checkpoint_id: latest.checkpoint.id }, metadata: { run_id: runId } },
      { ...latest.checkpoint, id: uuid6(-1) },
      { source: 'loop', step: 99, parents: {} },
      {},
    );
    await expect(late).rejects.toThrow(/no longer held by this worker/);
    expect((await state()).checkpoint).toEqual(before.checkpoint);

    // Its graph's pending writes too (a task's interrupt, here), under the checkpoint the next attempt
    // left: refused, so a resume of the thread would not find them.
    const lateWrites = saver.putWrites(
      { configurable: { thread_id: threadId, checkpoint_ns: '', checkpoint_id: latest.checkpoint.id }, metadata: { run_id: runId } },
      [['__interrupt__', [{ value: { from: 'attempt 1, late' }, id: 'late-interrupt' }]], ['messages', [{ type: 'ai', content: 'late' }]]],
      'late-task',
    );
    await expect(lateWrites).rejects.toThrow(/no longer held by this worker/);
    expect((await saver.getTuple({ configurable: { thread_id: threadId, checkpoint_ns: '' } }))!.pendingWrites).toEqual(latest.pendingWrites);
    const after = await state();
    expect(after).toEqual(before);
    expect(JSON.stringify(after)).not.toContain('late');
  }, 60_000);

  it('a cancelled run whose worker stalled past its lease: the thread’s next run may execute, and the stalled worker’s late writes are refused', async () => {
    const agentId = await createAgent(api);
    const threadId = await createThread(api, agentId);
    // A first run, to its end, so the thread has a state.
    worker = await startWorker(api);
    const done = await collect(await start(api, threadId, { agent_id: agentId, messages: [{ role: 'user', content: 'first' }], stream_mode: ['values'] }));
    expect(lastAiText(lastValues(done))).toBe('You said: first');
    await worker.close();
    worker = undefined;

    // The stalled worker takes the second run; no worker process runs from here on (so no sweep either).
    const second = await start(api, threadId, { agent_id: agentId, messages: [{ role: 'user', content: 'second' }], stream_mode: ['values'] });
    const runId = second.runId!;
    await take(second, 1);
    const [claimed] = await new RunLifecycle(stalled.db).claim('stalled-worker-2', 60_000, 1);
    expect(claimed).toMatchObject({ id: runId, attempt: 1 });
    const lease = { workerId: 'stalled-worker-2', attempt: 1 };
    const writer = new RunEventHub(stalled.pool, undefined, createLogger({ level: 'silent' })).openWriter(runId, claimed!.lastSeq, lease);
    const saver = new SingleStatementSaver(stalled.pool, LANGGRAPH_SCHEMA);
    saver.fence(runId, lease);

    const cancelled = await api.client.POST('/v1/deepagents/threads/{thread_id}/runs/{run_id}/cancel', { params: { path: { thread_id: threadId, run_id: runId } } });
    expect(cancelled.response.status).toBeLessThan(300);
    // The stalled worker never says it stopped; its lease runs out, and with it its hold on the thread:
    // the thread's next run is claimed by another worker (the real claim statement, as a worker process sends it).
    await stalled.pool.query(`UPDATE runs SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, [runId]);
    const third = await start(api, threadId, { agent_id: agentId, messages: [{ role: 'user', content: 'third' }], stream_mode: ['values'] });
    expect(third.status).toBe(200);
    const [next] = await new RunLifecycle(stalled.db).claim('next-worker', 60_000, 1);
    expect(next).toMatchObject({ id: third.runId, threadId });

    // The stalled worker wakes up: its step's checkpoint and its events are refused.
    const state = async () => (await api.client.GET('/v1/deepagents/threads/{thread_id}/state', { params: { path: { thread_id: threadId } } })).data!;
    const before = await state();
    const latest = (await saver.getTuple({ configurable: { thread_id: threadId, checkpoint_ns: '' } }))!;
    const late = saver.put(
      { configurable: { thread_id: threadId, checkpoint_ns: '', checkpoint_id: latest.checkpoint.id }, metadata: { run_id: runId } },
      { ...latest.checkpoint, id: uuid6(-1) },
      { source: 'loop', step: 99, parents: {} },
      {},
    );
    await expect(late).rejects.toThrow(/no longer held by this worker/);
    expect((await state()).checkpoint).toEqual(before.checkpoint);
    writer.append({ kind: 'values', ns: [], data: { from: 'cancelled attempt, late' } });
    await expect(writer.flush()).rejects.toThrow(/no longer held by this worker/);
    const stored = await stalled.pool.query<{ data: string }>('SELECT data FROM run_events WHERE run_id = $1', [runId]);
    expect(stored.rows.map((r) => r.data).join()).not.toContain('late');
  }, 60_000);

  it('a thread deleted while its cancelled run’s worker is still stopping: the worker’s late checkpoint writes nothing back', async () => {
    const agentId = await createAgent(api);
    const threadId = await createThread(api, agentId);
    worker = await startWorker(api);
    await collect(await start(api, threadId, { agent_id: agentId, messages: [{ role: 'user', content: 'first' }], stream_mode: ['values'] }));
    await worker.close();
    worker = undefined;
    const second = await start(api, threadId, { agent_id: agentId, messages: [{ role: 'user', content: 'second' }], stream_mode: ['values'] });
    const runId = second.runId!;
    await take(second, 1);
    const [claimed] = await new RunLifecycle(stalled.db).claim('stalled-worker-3', 60_000, 1);
    expect(claimed).toMatchObject({ id: runId });
    const saver = new SingleStatementSaver(stalled.pool, LANGGRAPH_SCHEMA);
    saver.fence(runId, { workerId: 'stalled-worker-3', attempt: 1 });
    const latest = (await saver.getTuple({ configurable: { thread_id: threadId, checkpoint_ns: '' } }))!;

    // Cancelled (the thread is free again at once), then deleted while the worker is still stopping.
    expect((await api.client.POST('/v1/deepagents/threads/{thread_id}/runs/{run_id}/cancel', { params: { path: { thread_id: threadId, run_id: runId } } })).response.status).toBeLessThan(300);
    expect((await api.client.DELETE('/v1/deepagents/threads/{thread_id}', { params: { path: { thread_id: threadId } } })).response.status).toBe(204);

    const late = saver.put(
      { configurable: { thread_id: threadId, checkpoint_ns: '', checkpoint_id: latest.checkpoint.id }, metadata: { run_id: runId } },
      { ...latest.checkpoint, id: uuid6(-1) },
      { source: 'loop', step: 99, parents: {} },
      {},
    );
    await expect(late).rejects.toThrow(/no longer held by this worker/);
    const lateWrites = saver.putWrites(
      { configurable: { thread_id: threadId, checkpoint_ns: '', checkpoint_id: latest.checkpoint.id }, metadata: { run_id: runId } },
      [['messages', [{ type: 'ai', content: 'late' }]]],
      'late-task',
    );
    await expect(lateWrites).rejects.toThrow(/no longer held by this worker/);
    const left = await stalled.pool.query(`SELECT 1 FROM ${LANGGRAPH_SCHEMA}.checkpoints WHERE thread_id = $1`, [threadId]);
    expect(left.rowCount).toBe(0);
    const leftWrites = await stalled.pool.query(`SELECT 1 FROM ${LANGGRAPH_SCHEMA}.checkpoint_writes WHERE thread_id = $1`, [threadId]);
    expect(leftWrites.rowCount).toBe(0);
  }, 60_000);
});
