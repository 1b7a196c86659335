// Crash safety with real processes: `hangar serve` children on one PostgreSQL. A server killed with
// SIGKILL in the middle of 20 runs and started again leaves no run pending or running and no thread
// busy; every event a client saw is still in the log; agents, memories and checkpoints are intact.
// Two servers sharing the database execute each run exactly once between them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { createHangarClient } from '../../src/client/index.js';
import { joinRun, streamRun, collect, type RunStream, type SseEvent } from '../../src/client/stream.js';
import { spawnHangar, type RunningHangar } from '../support/cli.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent, createThread, lastAiText, lastValues, run } from '../runtime/support.js';

const RUNS = 20;
const LONG = Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ');
let setup: TestServer;
let slowAgentId: string;
let fastAgentId: string;
const children: RunningHangar[] = [];

beforeAll(async () => {
  setup = await startTestServer();
  const config = await setup.client.POST('/v1/deepagents/model-configs', { body: { name: 'slow', model_id: 'scripted:slow', parameters: { delay_ms: 60 } } });
  expect(config.response.status).toBe(201);
  slowAgentId = await createAgent(setup, { runtime: { model: { model_id: 'slow' } } });
  fastAgentId = await createAgent(setup);
  // A memory written before the crash must survive it.
  const memThread = await createThread(setup, fastAgentId, { skip_memory_write_protection: true });
  await run(setup, memThread, { agent_id: fastAgentId, messages: [{ role: 'user', content: '/call write_file {"file_path": "/memories/keep.md", "content": "survives"}' }] });
  // From here on only the child processes serve the database.
  await setup.close();
}, 120_000);
afterAll(async () => {
  for (const c of children) if (c.child.exitCode === null) c.child.kill('SIGKILL');
  await Promise.all(children.map((c) => c.exited));
});

async function serve(env: Record<string, string> = {}): Promise<{ running: RunningHangar; url: string }> {
  const running = spawnHangar(['serve', '--port', '0', '--data-dir', setup.dataDir, '--database-url', setup.databaseUrl, '--log-level', 'warn'], {
    HANGAR_BOOTSTRAP_API_KEY: setup.adminKey,
    HANGAR_RUN_LEASE_MS: '1500',
    ...env,
  });
  children.push(running);
  const [, url] = await running.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
  return { running, url: url! };
}

async function startRuns(url: string, agentId: string, n: number): Promise<{ threadId: string; stream: RunStream }[]> {
  const server = { url, adminKey: setup.adminKey, client: createHangarClient({ baseUrl: url, apiKey: setup.adminKey }) } as TestServer;
  return Promise.all(
    Array.from({ length: n }, async () => {
      const threadId = await createThread(server, agentId);
      const stream = await streamRun({ baseUrl: url, apiKey: setup.adminKey, threadId, body: { agent_id: agentId, messages: [{ role: 'user', content: LONG }], stream_mode: ['messages-tuple'] } });
      expect(stream.status).toBe(200);
      return { threadId, stream };
    }),
  );
}

/** Read events until `n` arrived or the stream ended (the connection dies with the server). */
async function readSome(stream: RunStream, n: number): Promise<SseEvent[]> {
  const out: SseEvent[] = [];
  try {
    for await (const e of stream.events) {
      out.push(e);
      if (out.length >= n) break;
    }
  } catch {
    // the server went away mid-stream
  }
  return out;
}

/** Wait until no run of the database is pending or running (polling the database: nothing to await). */
async function settled(db: pg.Client): Promise<void> {
  for (;;) {
    const { rows } = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM runs WHERE status IN ('pending', 'running')");
    if (rows[0]!.n === 0) return;
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('crash safety', () => {
  it('SIGKILL with 20 runs in flight, restart: every run settles, no thread busy, seen events replay, data intact', async () => {
    const first = await serve({ HANGAR_WORKER_CONCURRENCY: String(RUNS) });
    const runs = await startRuns(first.url, slowAgentId, RUNS);
    const seen = await Promise.all(runs.map((r) => readSome(r.stream, 5)));
    first.running.child.kill('SIGKILL');
    await first.running.exited;

    const db = new pg.Client({ connectionString: setup.databaseUrl });
    await db.connect();
    try {
      const { rows: inFlight } = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM runs WHERE status IN ('pending', 'running')");
      expect(inFlight[0]!.n).toBe(RUNS);

      const second = await serve();
      await settled(db);
      const client = createHangarClient({ baseUrl: second.url, apiKey: setup.adminKey });
      for (const [i, r] of runs.entries()) {
        const record = (await client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}', { params: { path: { thread_id: r.threadId, run_id: r.stream.runId! } } })).data!;
        expect(['success', 'error']).toContain(record.status);
        if (record.status === 'success') {
          expect(record.attempt).toBeGreaterThanOrEqual(2);
          expect(record.metadata.attempt).toBe(record.attempt);
        } else {
          expect(record.error!.error).toBe('LeaseExpired');
        }
        const thread = (await client.GET('/v1/deepagents/threads/{thread_id}', { params: { path: { thread_id: r.threadId } } })).data!;
        expect(thread.status).not.toBe('busy');
        // Everything this client saw before the crash is in the log, unchanged, and ids keep increasing.
        const replay = await collect(await joinRun({ baseUrl: second.url, apiKey: setup.adminKey, threadId: r.threadId, runId: r.stream.runId! }));
        expect(replay.slice(0, seen[i]!.length)).toEqual(seen[i]);
        expect(replay.map((e) => Number(e.id))).toEqual(replay.map((_, k) => k + 1));
        // Each attempt announced itself; each retry was first said to wait for a worker (the sweep's `pending`).
        const metadata = replay.filter((e) => e.event === 'metadata').map((e) => e.data as { attempt: number; status?: string });
        expect(metadata.filter((m) => m.status !== 'pending').length).toBe(record.attempt);
        expect(metadata.filter((m) => m.status === 'pending').map((m) => m.attempt)).toEqual(Array.from({ length: record.attempt - 1 }, (_, k) => k + 2));
        if (record.status === 'success') {
          const state = (await client.GET('/v1/deepagents/threads/{thread_id}/state', { params: { path: { thread_id: r.threadId } } })).data!;
          const humans = (state.values.messages as { type: string; content: string }[]).filter((m) => m.type === 'human');
          expect(humans.map((m) => m.content)).toEqual([LONG]);
          expect(lastAiText(state.values)).toBe(`You said: ${LONG}`);
        }
      }
      const { rows: busy } = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM threads WHERE status = 'busy'");
      expect(busy[0]!.n).toBe(0);
      // Agents and memories survived.
      const agent = await client.GET('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: slowAgentId } } });
      expect(agent.response.status).toBe(200);
      const server = { url: second.url, adminKey: setup.adminKey, client } as TestServer;
      const memThread = await createThread(server, fastAgentId);
      const { events } = await run(server, memThread, { agent_id: fastAgentId, messages: [{ role: 'user', content: '/call read_file {"file_path": "/memories/keep.md"}' }] });
      expect(lastAiText(lastValues(events))).toContain('survives');
      second.running.child.kill('SIGTERM');
      await second.running.exited;
    } finally {
      await db.end();
    }
  }, 180_000);

  it('two servers on one database claim distinct runs and execute each exactly once', async () => {
    // Both processes stay alive here, so no lease may lapse: the crash tests' 1.5 s lease is too short
    // for a renewal on a loaded machine (a lapsed lease rightly hands the run to the other process).
    const a = await serve({ HANGAR_WORKER_CONCURRENCY: '6', HANGAR_RUN_LEASE_MS: '30000' });
    const b = await serve({ HANGAR_WORKER_CONCURRENCY: '6', HANGAR_RUN_LEASE_MS: '30000' });
    const runs = await startRuns(a.url, slowAgentId, RUNS);
    await Promise.all(runs.map((r) => collect(r.stream)));
    const db = new pg.Client({ connectionString: setup.databaseUrl });
    await db.connect();
    try {
      const ids = runs.map((r) => r.stream.runId!);
      const { rows } = await db.query<{ id: string; status: string; attempt: number; worker: string; starts: number }>(
        `SELECT r.id, r.status, r.attempt, r.metadata->>'worker' AS worker,
           (SELECT count(*)::int FROM run_events e WHERE e.run_id = r.id AND e.event = 'metadata') AS starts
         FROM runs r WHERE r.id = ANY($1::uuid[])`,
        [ids],
      );
      expect(rows).toHaveLength(RUNS);
      for (const r of rows) expect([r.status, r.attempt, r.starts]).toEqual(['success', 1, 1]);
      // With 6 slots each and 20 slow runs, both processes had to take a share.
      expect(new Set(rows.map((r) => r.worker)).size).toBe(2);
    } finally {
      await db.end();
    }
    a.running.child.kill('SIGTERM');
    b.running.child.kill('SIGTERM');
    await Promise.all([a.running.exited, b.running.exited]);
  }, 180_000);
});
