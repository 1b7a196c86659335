// A run's stream ends when the run is settled; the last write of its trace (the whole tree) follows,
// off the run's path. A read of the trace right after the stream's end still gets the whole tree:
// it waits for the write, in the process that writes it (same services) and in another process
// (an API-only server while a worker-only one runs the run).
//
// The trace's last write is held back by a row lock the test takes on the trace's root: the stream
// must end while the lock is held, and the reads must answer only after it is released, with the
// finished tree.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect } from '../../src/client/stream.js';
import type { Hangar } from '../../src/server.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent, createThread, start, startWorker, take } from '../runtime/support.js';

type Tree = { id: string; status: string; run_type: string; child_runs: Tree[] };

/** Run one slowed run; lock its trace's root once stored; return what the test needs. */
async function runWithTraceHeld(server: TestServer, agentId: string) {
  const threadId = await createThread(server, agentId);
  const stream = await start(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: 'hello there, how are you today?' }] });
  expect(stream.status).toBe(200);
  const first = await take(stream, 1);
  expect(first[0]!.event).toBe('metadata');
  const runId = stream.runId!;
  const db = new pg.Client({ connectionString: server.databaseUrl });
  await db.connect();
  // The root is stored when the run starts; its link to the run with it.
  let root: string | undefined;
  for (let i = 0; i < 400 && !root; i++) {
    root = (await db.query<{ root_run_id: string }>('SELECT root_run_id FROM tracing_run_links WHERE run_id = $1', [runId])).rows[0]?.root_run_id;
    if (!root) await new Promise((r) => setTimeout(r, 25));
  }
  expect(root).toBeDefined();
  await db.query('BEGIN');
  await db.query('SELECT 1 FROM tracing_runs WHERE id = $1 FOR UPDATE', [root]);
  const held = await db.query<{ status: string }>('SELECT status FROM runs WHERE id = $1', [runId]);
  // Still running when the lock was taken: the trace's last write comes after it.
  expect(held.rows[0]!.status).toBe('running');
  return { threadId, runId, root: root!, stream, db };
}

describe('a trace read right after the stream ends', () => {
  let server: TestServer;
  let agentId: string;

  beforeAll(async () => {
    server = await startTestServer();
    const config = await server.client.POST('/v1/deepagents/model-configs', { body: { name: 'slow', model_id: 'scripted:slow', parameters: { delay_ms: 30 } } });
    expect(config.response.status).toBe(201);
    agentId = await createAgent(server, { runtime: { model: { model_id: 'slow' } } });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('the stream ends while the trace is still being written, and the read waits for the whole tree (one process)', async () => {
    const { threadId, runId, stream, db } = await runWithTraceHeld(server, agentId);
    try {
      const events = await collect(stream);
      expect(events.some((e) => e.event === 'error')).toBe(false);
      // The run was settled before its stream ended, with its trace's last write still held.
      expect((await db.query('SELECT status FROM runs WHERE id = $1', [runId])).rows[0]!.status).toBe('success');

      let answered = false;
      const read = server.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}/trace', { params: { path: { thread_id: threadId, run_id: runId } } }).finally(() => {
        answered = true;
      });
      // A read of the trace before it is stored (a pending root, no model call) must not answer.
      await new Promise((r) => setTimeout(r, 300));
      expect(answered).toBe(false);
      await db.query('COMMIT');
      const res = await read;
      expect(res.response.status).toBe(200);
      const tree = res.data as unknown as Tree;
      expect(tree.status).toBe('success');
      expect(tree.child_runs.length).toBeGreaterThan(0);
    } finally {
      await db.end();
    }
  });
});

describe('a trace read in an API-only process while a worker-only process writes the trace', () => {
  let api: TestServer;
  let worker: Hangar;
  let agentId: string;

  beforeAll(async () => {
    api = await startTestServer({ env: { HANGAR_ROLE: 'api' } });
    worker = await startWorker(api);
    const config = await api.client.POST('/v1/deepagents/model-configs', { body: { name: 'slow', model_id: 'scripted:slow', parameters: { delay_ms: 30 } } });
    expect(config.response.status).toBe(201);
    agentId = await createAgent(api, { runtime: { model: { model_id: 'slow' } } });
  });
  afterAll(async () => {
    await worker?.close();
    await api?.close();
  });

  it('waits for the whole tree, by the agent run and by the trace root id', async () => {
    const { threadId, runId, root, stream, db } = await runWithTraceHeld(api, agentId);
    try {
      const events = await collect(stream);
      expect(events.some((e) => e.event === 'error')).toBe(false);
      expect((await db.query('SELECT status FROM runs WHERE id = $1', [runId])).rows[0]!.status).toBe('success');

      const answered = { byRun: false, byRoot: false };
      const byRun = api.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}/trace', { params: { path: { thread_id: threadId, run_id: runId } } }).finally(() => {
        answered.byRun = true;
      });
      const byRoot = api.client.GET('/v1/tracing/runs/{run_id}', { params: { path: { run_id: root } } }).finally(() => {
        answered.byRoot = true;
      });
      await new Promise((r) => setTimeout(r, 300));
      expect(answered).toEqual({ byRun: false, byRoot: false });
      await db.query('COMMIT');
      for (const res of [await byRun, await byRoot]) {
        expect(res.response.status).toBe(200);
        const tree = res.data as unknown as Tree;
        expect(tree.status).toBe('success');
        expect(tree.child_runs.length).toBeGreaterThan(0);
      }
    } finally {
      await db.end();
    }
  });
});
