// Every database connection cut, three times, while runs execute: an API-only server and two
// worker-only servers (one executing inline, one on its executor thread) on one database, twelve streamed runs of a slowed scripted model in flight, and
// every backend of the database but the test's own terminated (`pg_terminate_backend`, as a failover
// or an operator would): pools, the checkpointer, the store, the notification bus, in the middle of
// statements or between them. No process crashes (an error of a pooled connection used to be thrown
// as an uncaught exception), every stream is complete (its events contiguous, ending with the run's
// answer), every run succeeds and every thread is free and takes a new run. Waits on events and
// statuses, never on time.
import { Writable } from 'node:stream';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { collect, type RunStream, type SseEvent } from '../../src/client/stream.js';
import { loadConfig } from '../../src/config/index.js';
import { startHangar, type Hangar } from '../../src/server.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent, createThread, lastAiText, lastValues, start } from './support.js';

let api: TestServer;
let workers: Hangar[];
let admin: pg.Client;
let agentId: string;

beforeAll(async () => {
  api = await startTestServer({ env: { HANGAR_ROLE: 'api', HANGAR_RUN_LEASE_MS: '3000' } });
  // Two worker processes on the database: one executes runs on its event loop, one on its executor thread.
  workers = await Promise.all(
    ['inline', 'thread'].map((executor) =>
      startHangar(
        loadConfig({
          flags: { port: 0, databaseUrl: api.databaseUrl, dataDir: api.dataDir },
          env: { HANGAR_BOOTSTRAP_API_KEY: api.adminKey, HANGAR_ROLE: 'worker', HANGAR_EXECUTOR: executor, HANGAR_WORKER_CONCURRENCY: '6', HANGAR_RUN_LEASE_MS: '3000', LOG_LEVEL: 'silent' },
        }),
        { logDestination: new Writable({ write: (_c, _e, done) => done() }), announce: () => {} },
      ),
    ),
  );
  admin = new pg.Client({ connectionString: api.databaseUrl });
  await admin.connect();
  const config = await api.client.POST('/v1/deepagents/model-configs', { body: { name: 'slow', model_id: 'scripted:slow', parameters: { delay_ms: 15 } } });
  expect(config.response.status).toBe(201);
  agentId = await createAgent(api, { runtime: { model: { model_id: 'slow' } } });
});
afterAll(async () => {
  await admin?.end();
  for (const worker of workers ?? []) await worker.close();
  await api?.close();
});

/** Terminate every connection to the test's database except this one; returns how many. */
async function cutEverything(): Promise<number> {
  const { rows } = await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
  return rows.length;
}

/** Read a stream up to its first token (a `messages` event) and leave it open. */
async function untilToken(stream: RunStream): Promise<SseEvent[]> {
  const out: SseEvent[] = [];
  for (;;) {
    const next = await stream.events.next();
    if (next.done) return out;
    out.push(next.value);
    if (next.value.event === 'messages') return out;
  }
}

const WORDS = Array.from({ length: 30 }, (_, i) => `word${i}`).join(' ');

describe('every database connection cut while runs execute', () => {
  it('leaves every stream complete, every run succeeded and every thread free', async () => {
    const threads = await Promise.all(Array.from({ length: 12 }, () => createThread(api, agentId)));
    const streams = await Promise.all(threads.map((t) => start(api, t, { agent_id: agentId, messages: [{ role: 'user', content: WORDS }], stream_mode: ['messages-tuple', 'values'] })));
    for (const s of streams) expect(s.status).toBe(200);
    // Every run is under way (its first token streamed) before the first cut.
    const firsts = await Promise.all(streams.map((s) => untilToken(s)));
    for (const f of firsts) expect([f[0]!.event, f.at(-1)!.event]).toEqual(['metadata', 'messages']);
    const rests = streams.map((s) => collect(s));
    let cut = 0;
    for (let round = 0; round < 3; round++) {
      await new Promise((r) => setTimeout(r, 120)); // tokens flow between cuts
      cut += await cutEverything();
    }
    // Both processes' pools, the listeners and the checkpointer's and store's connections.
    expect(cut).toBeGreaterThanOrEqual(6);
    const ends = await Promise.all(rests);
    const executedBy = new Set<string>();
    for (let i = 0; i < threads.length; i++) {
      const events = [...firsts[i]!, ...ends[i]!];
      expect(events.map((e) => Number(e.id))).toEqual(events.map((_, j) => j + 1));
      expect(events.filter((e) => e.event === 'error')).toEqual([]);
      expect(lastAiText(lastValues(events))).toBe(`You said: ${WORDS}`);
      const run = await api.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}', { params: { path: { thread_id: threads[i]!, run_id: streams[i]!.runId! } } });
      expect(run.data!.status).toBe('success');
      executedBy.add(String((run.data!.metadata as { worker?: unknown }).worker));
      const thread = await api.client.GET('/v1/deepagents/threads/{thread_id}', { params: { path: { thread_id: threads[i]! } } });
      expect(thread.data!.status).toBe('idle');
    }
    // Both worker processes executed some of them.
    expect(executedBy.size).toBe(2);
    // Each thread takes a new run, which completes.
    for (const t of threads) {
      const next = await start(api, t, { agent_id: agentId, messages: [{ role: 'user', content: 'again' }] });
      expect(next.status).toBe(200);
      expect(lastAiText(lastValues(await collect(next)))).toBe('You said: again');
    }
  }, 120_000);

  it('the database closed to connections while runs stream: requests answer 503, every run settles and says how, and all is served again once it reopens', async () => {
    const { rows } = await admin.query<{ name: string }>('SELECT current_database() AS name');
    const name = rows[0]!.name;
    const threads = await Promise.all(Array.from({ length: 8 }, () => createThread(api, agentId)));
    const streams = await Promise.all(threads.map((t) => start(api, t, { agent_id: agentId, messages: [{ role: 'user', content: WORDS }], stream_mode: ['messages-tuple', 'values'] })));
    const firsts = await Promise.all(streams.map((s) => untilToken(s)));
    const rests = streams.map((s) => collect(s));
    // Run from another database: a session cannot close its own database to connections.
    const cluster = new pg.Client({ connectionString: inject('pgAdminUrl') });
    await cluster.connect();
    await cluster.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS false`);
    try {
      await cutEverything();
      // The outage lasts as long as a request takes to give up (its reads are sent again meanwhile).
      const refused = await api.client.GET('/v1/deepagents/threads/{thread_id}', { params: { path: { thread_id: threads[0]! } } });
      expect(refused.response.status).toBe(503);
      expect(refused.error).toMatchObject({ code: 'database_unavailable', type: 'unavailable' });
      expect(JSON.stringify(refused.error)).not.toContain(name);
      // The process is still up.
      expect((await fetch(`${api.url}/ok`)).status).toBe(200);
    } finally {
      await cluster.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`);
      await cluster.end();
    }
    // Streams waited through the outage. Each run either finished or failed, and its stream says which.
    const ends = await Promise.all(rests);
    for (let i = 0; i < threads.length; i++) {
      const events = [...firsts[i]!, ...ends[i]!];
      const path = { thread_id: threads[i]!, run_id: streams[i]!.runId! };
      let run = (await api.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}', { params: { path } })).data!;
      // A run whose settle could not reach the database is settled by a sweep once its lease expires.
      for (let j = 0; j < 3_000 && (run.status === 'running' || run.status === 'pending'); j++) {
        await new Promise((r) => setTimeout(r, 10));
        run = (await api.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}', { params: { path } })).data!;
      }
      const last = events.at(-1)!;
      if (run.status === 'success') expect(lastAiText(lastValues(events))).toBe(`You said: ${WORDS}`);
      else {
        expect(run.status).toBe('error');
        expect(last.event).toBe('error');
        expect(JSON.stringify(last.data)).not.toContain(name);
      }
      expect(events.map((e) => Number(e.id))).toEqual(events.map((_, j) => j + 1));
      const thread = (await api.client.GET('/v1/deepagents/threads/{thread_id}', { params: { path: { thread_id: threads[i]! } } })).data!;
      expect(thread.status).not.toBe('busy');
    }
    // Every thread takes a new run, which completes.
    for (const t of threads) {
      const next = await start(api, t, { agent_id: agentId, messages: [{ role: 'user', content: 'back' }] });
      expect(next.status).toBe(200);
      expect(lastAiText(lastValues(await collect(next)))).toBe('You said: back');
    }
  }, 120_000);
});
