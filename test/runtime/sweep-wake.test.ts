// A run handed back by the lease sweep is announced to every process, not only the sweeping one.
// Three processes on one database:
// - an API-only server, which serves the run's stream and executes nothing;
// - worker S, with one slot, kept busy by a slow run: it sweeps (every third of its lease, 2 s), but
//   cannot take the run it hands back;
// - worker W, idle, whose poll (HANGAR_RUN_POLL_MS) and lease (its own sweep's pace) are an hour: it
//   claims only when the queue's notification wakes it.
// The run's first worker is simulated as test/runtime/lease-sweep.test.ts simulates a stalled one
// (Hangar's own claim statement, then no renewal). When S's sweep hands the run back, W must take it
// and finish it as attempt 2. Before the fix, only S's workers were woken (no free slot), and W
// would have found the run an hour later: the test would then time out. Waits on events, not on time.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect } from '../../src/client/stream.js';
import { RunLifecycle } from '../../src/core/runs/lifecycle.js';
import { openDatabase, type DatabaseHandle } from '../../src/db/index.js';
import type { Hangar } from '../../src/server.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent, createThread, lastAiText, lastValues, start, startWorker, take } from './support.js';

const HOUR = String(60 * 60 * 1000);
let api: TestServer;
let stalled: DatabaseHandle;
let sweeper: Hangar | undefined;
let idle: Hangar | undefined;

beforeAll(async () => {
  api = await startTestServer({ env: { HANGAR_ROLE: 'api' } });
  stalled = openDatabase(api.databaseUrl, { max: 2 });
});
afterAll(async () => {
  await idle?.close();
  await sweeper?.close();
  await stalled?.close();
  await api?.close();
});

describe('a run handed back by the lease sweep', () => {
  it('is claimed at once by an idle worker of another process, not at its poll', async () => {
    const agentId = await createAgent(api);
    // The run to be swept: taken by a worker that then stalls (it never renews).
    const threadId = await createThread(api, agentId);
    const stream = await start(api, threadId, { agent_id: agentId, messages: [{ role: 'user', content: 'swept' }], stream_mode: ['values'] });
    const runId = stream.runId!;
    expect((await take(stream, 1))[0]!.data).toMatchObject({ run_id: runId, status: 'pending' });
    const [claimed] = await new RunLifecycle(stalled.db).claim('stalled-worker', 60_000, 1);
    expect(claimed).toMatchObject({ id: runId, attempt: 1 });

    // S: one slot, taken by a run whose model waits a minute before each token.
    sweeper = await startWorker(api, { HANGAR_WORKER_CONCURRENCY: '1', HANGAR_RUN_LEASE_MS: '6000' });
    const slowModel = await api.client.POST('/v1/deepagents/model-configs', { body: { name: 'sweep-wake-slow', model_id: 'scripted:slow', parameters: { delay_ms: 60_000 } } });
    expect(slowModel.response.status).toBe(201);
    const slowAgent = await createAgent(api, { runtime: { model: { model_id: 'sweep-wake-slow' } } });
    const slowThread = await createThread(api, slowAgent);
    const slow = await start(api, slowThread, { agent_id: slowAgent, messages: [{ role: 'user', content: 'take your time' }] });
    // Its first values: S executes it.
    expect((await take(slow, 2))[1]).toMatchObject({ event: 'values' });

    // W: idle, woken only by notifications. A run it executes to its end shows it is up and listening.
    idle = await startWorker(api, { HANGAR_RUN_POLL_MS: HOUR, HANGAR_RUN_LEASE_MS: HOUR });
    const warmThread = await createThread(api, agentId);
    const warm = await collect(await start(api, warmThread, { agent_id: agentId, messages: [{ role: 'user', content: 'warm' }], stream_mode: ['values'] }));
    expect(lastAiText(lastValues(warm))).toBe('You said: warm');

    // The stalled worker's lease runs out; S's sweep hands the run back (its `pending` event).
    await stalled.pool.query(`UPDATE runs SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, [runId]);
    expect((await take(stream, 1))[0]).toMatchObject({ event: 'metadata', data: { run_id: runId, attempt: 2, status: 'pending' } });

    // W takes it at once (woken by the sweep's statement) and finishes it.
    const rest = await collect(stream);
    expect(rest[0]).toMatchObject({ event: 'metadata', data: { run_id: runId, attempt: 2 } });
    expect(lastAiText(lastValues(rest))).toBe('You said: swept');
    const record = await api.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}', { params: { path: { thread_id: threadId, run_id: runId } } });
    expect(record.data).toMatchObject({ status: 'success', metadata: { attempt: 2, retried_after_lease_expiry: true, worker: idle.runtime.queue.workerId } });

    const cancelled = await api.client.POST('/v1/deepagents/threads/{thread_id}/runs/{run_id}/cancel', { params: { path: { thread_id: slowThread, run_id: slow.runId! } } });
    expect(cancelled.response.status).toBeLessThan(300);
    await collect(slow);
  }, 60_000);
});
