// Database connections cut while runs execute, in two set-ups on one database each: an API-only
// process with two worker-only processes (one executing inline, one on its executor thread), and one
// whole process (the laptop set-up: its streams are fed by its own run writers).
// - Every backend of the database but the test's own terminated (`pg_terminate_backend`, as a
//   failover or an operator would) three times while twelve runs stream: pools, the checkpointer,
//   the store, the notification bus, in the middle of statements or between them. No process
//   crashes (an error of a pooled connection used to be thrown as an uncaught exception), every
//   stream is complete (its events contiguous, ending with the run's answer), every run succeeds and
//   every thread is free and takes a new run.
// - The database closed to connections while eight runs stream: a request answers 503, every run
//   settles and its stream says how (the answer, or the run's error event), no thread stays busy, and
//   all is served again once it reopens.
// Waits on events and statuses, never on time.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { collect, type RunStream, type SseEvent } from '../../src/client/stream.js';
import type { Hangar } from '../../src/server.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent, createThread, lastAiText, lastValues, start, startWorker } from './support.js';

const WORDS = Array.from({ length: 30 }, (_, i) => `word${i}`).join(' ');

/** A set-up under test: the server clients talk to, and a connection of the test's own. */
interface SetUp {
  server: TestServer;
  admin: pg.Client;
  agentId: string;
}

async function prepare(server: TestServer): Promise<SetUp> {
  const admin = new pg.Client({ connectionString: server.databaseUrl });
  await admin.connect();
  const config = await server.client.POST('/v1/deepagents/model-configs', { body: { name: 'slow', model_id: 'scripted:slow', parameters: { delay_ms: 15 } } });
  expect(config.response.status).toBe(201);
  return { server, admin, agentId: await createAgent(server, { runtime: { model: { model_id: 'slow' } } }) };
}

/** Terminate every connection to the set-up's database except the test's own; returns how many. */
async function cutEverything({ admin }: SetUp): Promise<number> {
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

/**
 * `promise`, or a failure after `ms` that says where every run stands: a stuck run fails the test
 * with what it was doing instead of waiting out the test's timeout.
 */
async function within<T>(setUp: SetUp, ms: number, what: string, runs: { threadId: string; runId: string | null }[], promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      void Promise.all(runs.map(async (r) => (r.runId ? `${r.runId}: ${(await getRun(setUp, r.threadId, r.runId).catch(() => undefined))?.status ?? '?'}` : '-'))).then(
        (statuses) => reject(new Error(`${what}: not done after ${ms} ms; runs ${statuses.join(', ')}`)),
        reject,
      );
    }, ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Start `n` runs on threads of their own, each under way (its first token streamed). */
async function startRuns(setUp: SetUp, n: number) {
  const { server, agentId } = setUp;
  const threads = await Promise.all(Array.from({ length: n }, () => createThread(server, agentId)));
  const streams = await Promise.all(threads.map((t) => start(server, t, { agent_id: agentId, messages: [{ role: 'user', content: WORDS }], stream_mode: ['messages-tuple', 'values'] })));
  for (const s of streams) expect(s.status).toBe(200);
  const runs = streams.map((s, i) => ({ threadId: threads[i]!, runId: s.runId }));
  const firsts = await within(setUp, 40_000, 'first tokens', runs, Promise.all(streams.map((s) => untilToken(s))));
  for (const f of firsts) expect([f[0]!.event, f.at(-1)!.event]).toEqual(['metadata', 'messages']);
  // Read the streams to their ends meanwhile, as clients would.
  const rests = streams.map((s) => collect(s));
  const ends = () => within(setUp, 60_000, 'the streams', runs, Promise.all(rests));
  return { threads, streams, firsts, ends };
}

async function getRun({ server }: SetUp, threadId: string, runId: string) {
  return (await server.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}', { params: { path: { thread_id: threadId, run_id: runId } } })).data!;
}

async function threadStatus({ server }: SetUp, threadId: string): Promise<string> {
  return (await server.client.GET('/v1/deepagents/threads/{thread_id}', { params: { path: { thread_id: threadId } } })).data!.status;
}

/** Every thread takes a new run, which completes. */
async function newRunsComplete({ server, agentId }: SetUp, threads: string[]): Promise<void> {
  for (const t of threads) {
    const next = await start(server, t, { agent_id: agentId, messages: [{ role: 'user', content: 'again' }] });
    expect(next.status).toBe(200);
    expect(lastAiText(lastValues(await collect(next)))).toBe('You said: again');
  }
}

/** Cut every connection three times while twelve runs stream; returns the workers that executed them. */
async function cutWhileStreaming(setUp: SetUp): Promise<Set<string>> {
  const { threads, streams, firsts, ends: streamEnds } = await startRuns(setUp, 12);
  let cut = 0;
  for (let round = 0; round < 3; round++) {
    await new Promise((r) => setTimeout(r, 120)); // tokens flow between cuts
    cut += await cutEverything(setUp);
  }
  // At least the pools, the listeners and the store's connections.
  expect(cut).toBeGreaterThanOrEqual(3);
  const ends = await streamEnds();
  const executedBy = new Set<string>();
  for (let i = 0; i < threads.length; i++) {
    const events = [...firsts[i]!, ...ends[i]!];
    expect(events.map((e) => Number(e.id))).toEqual(events.map((_, j) => j + 1));
    expect(events.filter((e) => e.event === 'error')).toEqual([]);
    expect(lastAiText(lastValues(events))).toBe(`You said: ${WORDS}`);
    const run = await getRun(setUp, threads[i]!, streams[i]!.runId!);
    expect(run.status).toBe('success');
    executedBy.add(String((run.metadata as { worker?: unknown }).worker));
    expect(await threadStatus(setUp, threads[i]!)).toBe('idle');
  }
  await newRunsComplete(setUp, threads);
  return executedBy;
}

/** Close the database to connections while eight runs stream, for as long as a request takes to give up. */
async function outageWhileStreaming(setUp: SetUp): Promise<void> {
  const { server, admin } = setUp;
  const { rows } = await admin.query<{ name: string }>('SELECT current_database() AS name');
  const name = rows[0]!.name;
  const { threads, streams, firsts, ends: streamEnds } = await startRuns(setUp, 8);
  // Run from another database: a session cannot close its own database to connections.
  const cluster = new pg.Client({ connectionString: inject('pgAdminUrl') });
  await cluster.connect();
  await cluster.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS false`);
  try {
    await cutEverything(setUp);
    // Its reads are sent again meanwhile, then it answers.
    const refused = await server.client.GET('/v1/deepagents/threads/{thread_id}', { params: { path: { thread_id: threads[0]! } } });
    expect(refused.response.status).toBe(503);
    expect(refused.error).toMatchObject({ code: 'database_unavailable', type: 'unavailable' });
    expect(JSON.stringify(refused.error)).not.toContain(name);
    // The process is still up.
    expect((await fetch(`${server.url}/ok`)).status).toBe(200);
  } finally {
    await cluster.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`);
    await cluster.end();
  }
  // Streams waited through the outage. Each run either finished or failed, and its stream says which.
  const ends = await streamEnds();
  for (let i = 0; i < threads.length; i++) {
    const events = [...firsts[i]!, ...ends[i]!];
    let run = await getRun(setUp, threads[i]!, streams[i]!.runId!);
    // A run whose settle could not reach the database is settled by a sweep once its lease expires.
    for (let j = 0; j < 3_000 && (run.status === 'running' || run.status === 'pending'); j++) {
      await new Promise((r) => setTimeout(r, 10));
      run = await getRun(setUp, threads[i]!, streams[i]!.runId!);
    }
    const last = events.at(-1)!;
    if (run.status === 'success') expect(lastAiText(lastValues(events))).toBe(`You said: ${WORDS}`);
    else {
      expect(run.status).toBe('error');
      expect(last.event).toBe('error');
      expect(JSON.stringify(last.data)).not.toContain(name);
    }
    expect(events.map((e) => Number(e.id))).toEqual(events.map((_, j) => j + 1));
    expect(await threadStatus(setUp, threads[i]!)).not.toBe('busy');
  }
  await newRunsComplete(setUp, threads);
}

/** The processes of a set-up: the server clients talk to, and what closes them all. */
interface Topology {
  server: TestServer;
  close(): Promise<void>;
}

describe.each<[string, number, () => Promise<Topology>]>([
  [
    'an API process and two worker processes',
    2,
    async () => {
      const api = await startTestServer({ env: { HANGAR_ROLE: 'api', HANGAR_RUN_LEASE_MS: '3000' } });
      const workers: Hangar[] = [];
      for (const executor of ['inline', 'thread']) workers.push(await startWorker(api, { HANGAR_EXECUTOR: executor, HANGAR_WORKER_CONCURRENCY: '6', HANGAR_RUN_LEASE_MS: '3000' }));
      return {
        server: api,
        close: async () => {
          for (const worker of workers) await worker.close();
          await api.close();
        },
      };
    },
  ],
  [
    'one whole process',
    1,
    async () => {
      const server = await startTestServer({ env: { HANGAR_RUN_LEASE_MS: '3000' } });
      return { server, close: () => server.close() };
    },
  ],
])('database connections cut: %s', (_name, executors, start) => {
  let topology: Topology | undefined;
  let setUp: SetUp;
  beforeAll(async () => {
    topology = await start();
    setUp = await prepare(topology.server);
  });
  afterAll(async () => {
    await setUp?.admin.end();
    await topology?.close();
  });

  it('every connection cut three times: every stream complete, every run succeeded, every thread free', async () => {
    // Every process that executes runs executed some of them.
    expect((await cutWhileStreaming(setUp)).size).toBe(executors);
  }, 120_000);

  it('the database closed to connections: 503 meanwhile, every run settles and says how, all served again once it reopens', async () => {
    await outageWhileStreaming(setUp);
  }, 120_000);
});
