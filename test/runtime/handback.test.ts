// A rolling restart of replicas on one database: stopping a process does not fail the runs it
// executes or the streams it serves.
// - A worker-only `hangar serve` child stopped with SIGTERM in the middle of a run that outlasts its
//   drain, while another worker is alive: the run is handed back to the queue (as a sweep hands back
//   a dead worker's run), the other worker continues it from its checkpoint (attempt 2) and it ends
//   `success`. The client's stream, served by the stopping child, ends without an error; joining
//   again on another process with Last-Event-ID reads on to the run's answer, every event once.
// - An API-only process stopped while it streams a run executing in another process: the stream
//   ends (no error, not cut off), and joining again on another process reads on to the answer; a
//   client waiting there for the run's result (`…/join`) is answered 503 `server_stopping`.
// - A start accepted by a `hangar serve` child just as it begins stopping (its statement, which claims
//   the run for the child's free worker, held on the thread's row lock until the stop has begun): the
//   run is put back in the queue at once, and another worker executes it as attempt 1 while the
//   child's lease on it would still be live (it used to stay held until that lease expired). The
//   stream the child serves says, after its first `metadata` (`running`, written by the start), that
//   the run is `pending` again (it used to say nothing more).
// Waits on events, statuses and exits, never on time.
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { collect, joinRun, type RunStream, type SseEvent } from '../../src/client/stream.js';
import type { Hangar } from '../../src/server.js';
import { spawnHangar, type RunningHangar } from '../support/cli.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent, createThread, lastAiText, lastValues, start, startWorker } from './support.js';

const WORDS = Array.from({ length: 30 }, (_, i) => `word${i}`).join(' ');

let api: TestServer;
let agentId: string;
let child: RunningHangar | undefined;
let helper: Hangar | undefined;

beforeAll(async () => {
  // The API process executes nothing.
  api = await startTestServer({ env: { HANGAR_ROLE: 'api' } });
  // Long enough (about 6 s of tokens) to outlast a drain of 300 ms by far.
  const config = await api.client.POST('/v1/deepagents/model-configs', { body: { name: 'slow', model_id: 'scripted:slow', parameters: { delay_ms: 100 } } });
  expect(config.response.status).toBe(201);
  agentId = await createAgent(api, { runtime: { model: { model_id: 'slow' } } });
});
afterEach(async () => {
  await helper?.close();
  helper = undefined;
  if (child) {
    child.child.kill('SIGTERM');
    await child.exited;
    child = undefined;
  }
});
afterAll(async () => {
  await api?.close();
});

/** Read a stream until its first token: the run is executing. */
async function untilToken(stream: RunStream): Promise<SseEvent[]> {
  const out: SseEvent[] = [];
  for (;;) {
    const next = await stream.events.next();
    if (next.done) throw new Error(`the stream ended before a token: ${JSON.stringify(out)}`);
    out.push(next.value);
    if (next.value.event === 'messages') return out;
  }
}

async function getRun(threadId: string, runId: string) {
  const { data, response } = await api.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}', { params: { path: { thread_id: threadId, run_id: runId } } });
  expect(response.status).toBe(200);
  return data!;
}

/** The rest of a stream, or how reading it failed (a connection cut off). */
function rest(stream: RunStream): Promise<{ events: SseEvent[]; failure: string | undefined }> {
  return collect(stream).then(
    (events) => ({ events, failure: undefined }),
    (error: unknown) => ({ events: [], failure: String(error) }),
  );
}

/**
 * What a client that lost its stream does: join again on `api` with the last event id it saw, and
 * check that the run went on to its answer with every event once, in order.
 */
async function rejoinAndCheck(threadId: string, runId: string, seen: SseEvent[]): Promise<SseEvent[]> {
  const joined = await collect(await joinRun({ baseUrl: api.url, apiKey: api.adminKey, threadId, runId, lastEventId: seen.at(-1)!.id! }));
  const ids = [...seen, ...joined].map((e) => Number(e.id));
  expect(ids).toEqual(Array.from({ length: ids.length }, (_, i) => i + 1));
  expect(joined.filter((e) => e.event === 'error')).toEqual([]);
  const values = lastValues(joined);
  expect(lastAiText(values)).toBe(`You said: ${WORDS}`);
  // Continued from its checkpoint: the question is not asked twice.
  expect((values.messages as { type: string }[]).map((m) => m.type)).toEqual(['human', 'ai']);
  return joined;
}

describe('stopping a process hands its runs and streams on', () => {
  it('a worker stopped with SIGTERM mid-run hands the run to another worker, which finishes it', async () => {
    child = spawnHangar(['serve', '--port', '0', '--database-url', api.databaseUrl, '--data-dir', api.dataDir, '--worker-concurrency', '1'], {
      HANGAR_ROLE: 'worker',
      HANGAR_BOOTSTRAP_API_KEY: api.adminKey,
      HANGAR_DRAIN_TIMEOUT_MS: '300',
      LOG_LEVEL: 'info',
    });
    const [, childUrl] = await child.waitFor(/Hangar is listening on (\S+)/);
    const threadId = await createThread(api, agentId);
    // Streamed by the child, which also executes the run (the only worker so far).
    const stream = await start({ ...api, url: childUrl! }, threadId, { agent_id: agentId, messages: [{ role: 'user', content: WORDS }], stream_mode: ['messages-tuple', 'values'] });
    expect(stream.status).toBe(200);
    const first = await untilToken(stream);
    const runId = stream.runId!;
    expect(await getRun(threadId, runId)).toMatchObject({ status: 'running', metadata: { attempt: 1 } });

    helper = await startWorker(api);
    const reading = rest(stream);
    child.child.kill('SIGTERM');
    expect(await child.exited).toBe(0);
    const { events, failure } = await reading;
    // The stream ended cleanly, without an error: the run is not over.
    expect(failure).toBeUndefined();
    expect(events.filter((e) => e.event === 'error')).toEqual([]);
    expect(child.output()).toContain('run handed back to the queue');
    child = undefined;

    const joined = await rejoinAndCheck(threadId, runId, [...first, ...events]);
    // The log says the run waits for a worker once handed back (the stream from the stopping child may
    // have ended before reading it), then the next attempt announces itself, as after a crash.
    const metadata = [...first, ...events, ...joined].filter((e) => e.event === 'metadata').map((e) => e.data);
    expect(metadata).toMatchObject([
      { run_id: runId, attempt: 1, status: 'running' },
      { run_id: runId, attempt: 2, status: 'pending', queue_position: 0 },
      { run_id: runId, attempt: 2 },
    ]);
    expect(metadata[2]).not.toHaveProperty('status');
    expect(await getRun(threadId, runId)).toMatchObject({ status: 'success', metadata: { attempt: 2, handed_back: true } });
    const thread = await api.client.GET('/v1/deepagents/threads/{thread_id}', { params: { path: { thread_id: threadId } } });
    expect(thread.data!.status).toBe('idle');
  }, 90_000);

  it('a start accepted as the process begins stopping is put back in the queue at once, for another worker, and its stream says so', async () => {
    const leaseMs = 60_000;
    child = spawnHangar(['serve', '--port', '0', '--database-url', api.databaseUrl, '--data-dir', api.dataDir, '--worker-concurrency', '1'], {
      HANGAR_BOOTSTRAP_API_KEY: api.adminKey,
      HANGAR_RUN_LEASE_MS: String(leaseMs),
      HANGAR_DRAIN_TIMEOUT_MS: '300',
      LOG_LEVEL: 'info',
    });
    const [, childUrl] = await child.waitFor(/Hangar is listening on (\S+)/);
    helper = await startWorker(api);
    const threadId = await createThread(api, agentId);
    const db = new pg.Client({ connectionString: api.databaseUrl });
    const watcher = new pg.Client({ connectionString: api.databaseUrl });
    await db.connect();
    await watcher.connect();
    try {
      // Hold the thread's row: the child's start (which records the run claimed by its idle worker)
      // waits on it, as a statement in flight when the stop comes.
      await db.query('BEGIN');
      await db.query('SELECT 1 FROM threads WHERE id = $1 FOR UPDATE', [threadId]);
      const sentAt = Date.now();
      // Streamed by the child, as a client that started the run there.
      const starting = start({ ...api, url: childUrl! }, threadId, { agent_id: agentId, messages: [{ role: 'user', content: WORDS }], stream_mode: ['messages-tuple', 'values'] });
      // Until the child's statement waits on that lock.
      const holder = (await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      for (;;) {
        // (Not on `db`: a transaction sees one snapshot of the activity.)
        const { rows } = await watcher.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))', [holder]);
        if (rows[0]!.n > 0) break;
        await sleep(10);
      }
      child.child.kill('SIGTERM');
      await child.waitFor(/"msg":"draining requests and stopping"/);
      await db.query('COMMIT');
      const stream = await starting;
      expect(stream.status).toBe(200);
      const runId = stream.runId!;
      const { events, failure } = await rest(stream);
      expect(failure).toBeUndefined();
      expect(await child.exited).toBe(0);
      const output = child.output();
      child = undefined;
      // The first event was written by the statement that claimed the run for the child's worker; the
      // run was then put back in the queue, and its stream says so before anything else.
      expect(events[0]).toMatchObject({ event: 'metadata', data: { run_id: runId, attempt: 1, status: 'running', queue_position: 0 } });
      expect(events[1]).toMatchObject({ event: 'metadata', data: { run_id: runId, attempt: 1, status: 'pending' } });
      expect(typeof (events[1]!.data as { queue_position: unknown }).queue_position).toBe('number');

      // Joining again elsewhere reads on to the answer, every event once; no attempt announces itself
      // again (the run never ran on the child).
      const joined = await rejoinAndCheck(threadId, runId, events);
      expect(joined.filter((e) => e.event === 'metadata')).toEqual([]);
      const run = await getRun(threadId, runId);
      // Executed by the other worker, as a first attempt (it never ran on the child)…
      expect(run).toMatchObject({ status: 'success', metadata: { attempt: 1, worker: helper.runtime.queue.workerId } });
      // …and finished while the lease the child took on it (from its statement's start, after `sentAt`) would still hold.
      expect(Date.parse(run.ended_at!)).toBeLessThan(sentAt + leaseMs);
      expect(output).toContain('put back in the queue for another worker');
    } finally {
      await db.end();
      await watcher.end();
    }
  }, 150_000);

  it('an API-only process that stops ends its streams of runs executing elsewhere; a client joins again elsewhere', async () => {
    helper = await startWorker(api);
    const front = await startTestServer({ databaseUrl: api.databaseUrl, dataDir: api.dataDir, adminKey: api.adminKey, env: { HANGAR_ROLE: 'api', HANGAR_DRAIN_TIMEOUT_MS: '300' } });
    let closed = false;
    try {
      const threadId = await createThread(api, agentId);
      const stream = await start(front, threadId, { agent_id: agentId, messages: [{ role: 'user', content: WORDS }], stream_mode: ['messages-tuple', 'values'] });
      expect(stream.status).toBe(200);
      const first = await untilToken(stream);
      const reading = rest(stream);
      // A client waiting for the run's result on the same process (LangGraph's `runs.join`).
      const waiting = front.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}/join', { params: { path: { thread_id: threadId, run_id: stream.runId! } } });
      // Until it follows the run there (the stream and the wait), as a request in progress when the stop comes.
      while (front.hangar.runtime.hub.listenersOf(stream.runId!).size < 2) await sleep(10);
      await front.close();
      closed = true;
      const { events, failure } = await reading;
      expect(failure).toBeUndefined();
      expect(events.filter((e) => e.event === 'error')).toEqual([]);
      // Not the state of a run half done: told to wait again elsewhere.
      const waited = await waiting;
      expect(waited.response.status).toBe(503);
      expect(waited.error).toMatchObject({ code: 'server_stopping' });
      await rejoinAndCheck(threadId, stream.runId!, [...first, ...events]);
      expect(await getRun(threadId, stream.runId!)).toMatchObject({ status: 'success', metadata: { attempt: 1 } });
    } finally {
      if (!closed) await front.close();
    }
  }, 90_000);
});
