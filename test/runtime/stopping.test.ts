// A run cancelled while the worker executing it is stalled: a worker-only `hangar serve` child process
// stopped with SIGSTOP, as a long pause, a starved CPU or a suspended VM would stop it. The cancel is
// recorded at once, but the worker is still inside the run and will go on writing its thread's state
// when it wakes. Until it has stopped the run (it gives back its lease):
// - the thread's next run (multitask `interrupt`) waits, though another worker is free;
// - a cancel with `wait=true` does not answer;
// - a start with multitask `rollback` does not delete the run and its state.
// The checks are orderings against the moment the child is resumed (SIGCONT), never durations.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { collect, type RunStream, type SseEvent } from '../../src/client/stream.js';
import type { Hangar } from '../../src/server.js';
import { spawnHangar, type RunningHangar } from '../support/cli.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent, createThread, lastAiText, lastValues, start, startWorker } from './support.js';

const WORDS = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');
/** How long the child stays stopped: time enough for a free worker elsewhere to take a waiting run. */
const STALL_MS = 1_500;

let api: TestServer;
let agentId: string;
let child: RunningHangar | undefined;
let helper: Hangar | undefined;

beforeAll(async () => {
  // The API process executes nothing: runs go to the child, or to the in-process helper worker.
  api = await startTestServer({ env: { HANGAR_ROLE: 'api' } });
  const config = await api.client.POST('/v1/deepagents/model-configs', { body: { name: 'slow', model_id: 'scripted:slow', parameters: { delay_ms: 20 } } });
  expect(config.response.status).toBe(201);
  agentId = await createAgent(api, { runtime: { model: { model_id: 'slow' } } });
});
afterEach(async () => {
  await helper?.close();
  helper = undefined;
  if (child) {
    child.child.kill('SIGCONT');
    child.child.kill('SIGTERM');
    await child.exited;
    child = undefined;
  }
});
afterAll(async () => {
  await api?.close();
});

/** A worker-only server in a child process, one run at a time. */
async function startChildWorker(): Promise<RunningHangar> {
  const c = spawnHangar(['serve', '--port', '0', '--database-url', api.databaseUrl, '--data-dir', api.dataDir, '--worker-concurrency', '1'], {
    HANGAR_ROLE: 'worker',
    HANGAR_BOOTSTRAP_API_KEY: api.adminKey,
    LOG_LEVEL: 'info',
  });
  await c.waitFor(/Hangar is listening on/);
  return c;
}

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

/** A run under way in the child process on a new thread, and the child stopped in the middle of it. */
async function runStalledInChild(): Promise<{ threadId: string; runId: string; rest: Promise<SseEvent[]> }> {
  child = await startChildWorker();
  const threadId = await createThread(api, agentId);
  const stream = await start(api, threadId, { agent_id: agentId, messages: [{ role: 'user', content: WORDS }], stream_mode: ['messages-tuple', 'values'] });
  expect(stream.status).toBe(200);
  await untilToken(stream);
  const run = await getRun(threadId, stream.runId!);
  expect(run.status).toBe('running');
  // The child is the only worker so far: it executes the run.
  expect(run.metadata).toMatchObject({ attempt: 1 });
  child.child.kill('SIGSTOP');
  return { threadId, runId: stream.runId!, rest: collect(stream) };
}

/** Resume the child after `STALL_MS`; resolves with the moment it was resumed. */
async function resumeLater(): Promise<number> {
  await sleep(STALL_MS);
  const at = Date.now();
  child!.child.kill('SIGCONT');
  return at;
}

async function getRun(threadId: string, runId: string) {
  const { data, response } = await api.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}', { params: { path: { thread_id: threadId, run_id: runId } } });
  expect(response.status).toBe(200);
  return data!;
}

describe('a run cancelled while its worker is stalled', () => {
  it('the next run of its thread starts only once that worker has stopped it, though another worker is free', async () => {
    const stalled = await runStalledInChild();
    helper = await startWorker(api);
    const next = await start(api, stalled.threadId, { agent_id: agentId, messages: [{ role: 'user', content: 'next' }], multitask_strategy: 'interrupt' });
    expect(next.status).toBe(200);
    // The cancel is recorded at once.
    expect((await getRun(stalled.threadId, stalled.runId)).status).toBe('interrupted');
    const resumedAt = await resumeLater();
    const events = await collect(next);
    expect(lastAiText(lastValues(events))).toBe('You said: next');
    const run = await getRun(stalled.threadId, next.runId!);
    expect(run.status).toBe('success');
    expect(Date.parse(run.started_at!)).toBeGreaterThanOrEqual(resumedAt);
    // The stalled run's stream ended (when it was cancelled), without an error.
    expect((await stalled.rest).filter((e) => e.event === 'error')).toEqual([]);
  }, 60_000);

  it('a cancel with wait=true answers once the worker has stopped the run', async () => {
    const stalled = await runStalledInChild();
    const answered = api.client
      .POST('/v1/deepagents/threads/{thread_id}/runs/{run_id}/cancel', { params: { path: { thread_id: stalled.threadId, run_id: stalled.runId }, query: { wait: 'true' } } })
      .then((r) => ({ ...r, at: Date.now() }));
    const resumedAt = await resumeLater();
    const { response, data, at } = await answered;
    expect(response.status).toBe(200);
    expect(data?.status).toBe('interrupted');
    expect(at).toBeGreaterThanOrEqual(resumedAt);
  }, 60_000);

  it('a rollback deletes the run and what it wrote only once its worker has stopped it', async () => {
    const stalled = await runStalledInChild();
    helper = await startWorker(api);
    const starting = start(api, stalled.threadId, { agent_id: agentId, messages: [{ role: 'user', content: 'instead' }], multitask_strategy: 'rollback' }).then((s) => ({ s, at: Date.now() }));
    const resumedAt = await resumeLater();
    const { s: next, at } = await starting;
    expect(next.status).toBe(200);
    expect(at).toBeGreaterThanOrEqual(resumedAt);
    const events = await collect(next);
    // Only the new run's conversation: the rolled-back run's message is gone.
    const messages = (lastValues(events).messages as { type: string; content: unknown }[]).map((m) => [m.type, m.content]);
    expect(messages).toEqual([
      ['human', 'instead'],
      ['ai', 'You said: instead'],
    ]);
    const { response } = await api.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}', { params: { path: { thread_id: stalled.threadId, run_id: stalled.runId } } });
    expect(response.status).toBe(404);
  }, 60_000);
});
