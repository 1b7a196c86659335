// A dropped notification connection in a two-process set-up: an API-only server and a worker-only
// server on one database. Every listening connection (`pg_terminate_backend`, as a failover or an
// operator would) is cut in the middle of a run: the stream still completes with every event, and a
// cancel sent to the API process still stops the run in the worker. A saved model configuration slows
// the scripted model so the run is still going while the test acts; the test waits on events and
// statuses, never on time.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect } from '../../src/client/stream.js';
import { BUS_APPLICATION_NAME } from '../../src/db/bus.js';
import type { Hangar } from '../../src/server.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent, createThread, lastAiText, lastValues, start, take, startWorker } from './support.js';

let api: TestServer;
let worker: Hangar;
let admin: pg.Client;
let agentId: string;

beforeAll(async () => {
  api = await startTestServer({ env: { HANGAR_ROLE: 'api' } });
  // A short lease: renewals (every third of it) also find cancels whose notification was lost.
  worker = await startWorker(api, { HANGAR_RUN_LEASE_MS: '3000' });
  admin = new pg.Client({ connectionString: api.databaseUrl });
  await admin.connect();
  const config = await api.client.POST('/v1/deepagents/model-configs', { body: { name: 'slow', model_id: 'scripted:slow', parameters: { delay_ms: 25 } } });
  expect(config.response.status).toBe(201);
  agentId = await createAgent(api, { runtime: { model: { model_id: 'slow' } } });
});
afterAll(async () => {
  await admin?.end();
  await worker?.close();
  await api?.close();
});

const LONG = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');

/** Cut every notification bus connection of this database; returns how many. */
async function cutListeners(): Promise<number> {
  const { rows } = await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()', [BUS_APPLICATION_NAME]);
  return rows.length;
}

async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 3_000 && !(await check()); i++) await new Promise((r) => setTimeout(r, 10));
  expect(await check()).toBe(true);
}

describe('a dropped notification connection', () => {
  it('mid-run: the stream from the API process still completes with every event in order', async () => {
    const threadId = await createThread(api, agentId);
    const stream = await start(api, threadId, { agent_id: agentId, messages: [{ role: 'user', content: LONG }], stream_mode: ['messages-tuple', 'values'] });
    expect(stream.status).toBe(200);
    const first = await take(stream, 5);
    expect(first[0]).toMatchObject({ event: 'metadata', data: { run_id: stream.runId } });
    const connectsBefore = worker.runtime.bus.connects + api.hangar.runtime.bus.connects;
    expect(await cutListeners()).toBe(2); // one per process
    const rest = await collect(stream);
    const events = [...first, ...rest];
    const ids = events.map((e) => Number(e.id));
    expect(ids).toEqual(ids.map((_, i) => i + 1));
    expect(lastAiText(lastValues(events))).toBe(`You said: ${LONG}`);
    // Both processes reconnected.
    await until(() => worker.runtime.bus.connects + api.hangar.runtime.bus.connects >= connectsBefore + 2);
    // An operator sees it: the API process's Prometheus scrape counts the reconnect.
    const scrape = await (await fetch(`${api.url}/metrics`)).text();
    const reconnects = /^hangar_notification_bus_reconnects_total\{listener="bus"\} (\d+)/m.exec(scrape);
    expect(Number(reconnects?.[1])).toBeGreaterThanOrEqual(1);
  });

  it('mid-run: a cancel sent to the API process still stops the run in the worker', async () => {
    const threadId = await createThread(api, agentId);
    const stream = await start(api, threadId, { agent_id: agentId, messages: [{ role: 'user', content: LONG }], stream_mode: ['messages-tuple'] });
    await take(stream, 5);
    expect(worker.workers!.size).toBe(1);
    expect(await cutListeners()).toBe(2);
    // Sent while the worker's listener is down: its notification may well be lost.
    const cancelled = await api.client.POST('/v1/deepagents/threads/{thread_id}/runs/{run_id}/cancel', { params: { path: { thread_id: threadId, run_id: stream.runId! } } });
    expect(cancelled.response.status).toBe(200);
    expect(cancelled.data!.status).toBe('interrupted');
    await collect(stream); // the stream ends
    await until(() => worker.workers!.size === 0);
    const run = await api.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}', { params: { path: { thread_id: threadId, run_id: stream.runId! } } });
    expect(run.data!.status).toBe('interrupted');
    const thread = await api.client.GET('/v1/deepagents/threads/{thread_id}', { params: { path: { thread_id: threadId } } });
    expect(thread.data!.status).toBe('idle');
    // The run really stopped: its log does not grow any more, and the thread takes a new run.
    const { rows } = await admin.query<{ n: number }>('SELECT count(*)::int AS n FROM run_events WHERE run_id = $1', [stream.runId]);
    const next = await start(api, threadId, { agent_id: agentId, messages: [{ role: 'user', content: 'again' }] });
    expect(next.status).toBe(200);
    await collect(next);
    const after = await admin.query<{ n: number }>('SELECT count(*)::int AS n FROM run_events WHERE run_id = $1', [stream.runId]);
    expect(after.rows[0]!.n).toBe(rows[0]!.n);
  });
});
