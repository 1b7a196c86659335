// HANGAR_EXECUTOR=thread: one server process whose runs execute on a worker thread of their own. The
// client sees the same contract as with runs executed inline: the stream, a cancel, the metrics of
// the runs in the process's scrape, and the thread's log lines in the server's log.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isMainThread } from 'node:worker_threads';
import { collect } from '../../src/client/stream.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent, createThread, lastAiText, lastValues, run, start, take } from './support.js';

let server: TestServer;

beforeAll(async () => {
  // A short lease, so that a run of a thread that died is retried within the test.
  server = await startTestServer({ env: { HANGAR_EXECUTOR: 'thread', HANGAR_RUN_LEASE_MS: '3000' } });
  // A slowed scripted model, so that a run is still going while a test acts on it.
  const config = await server.client.POST('/v1/deepagents/model-configs', { body: { name: 'slow', model_id: 'scripted:slow', parameters: { delay_ms: 25 } } });
  expect(config.response.status).toBe(201);
});
afterAll(async () => {
  await server?.close();
});

async function scrape(): Promise<string> {
  return (await fetch(`${server.url}/metrics`)).text();
}

describe('runs on an executor thread', () => {
  it('the main thread serves HTTP only: it has no worker pool, and the executor announced itself', () => {
    expect(isMainThread).toBe(true);
    expect(server.hangar.workers).toBeUndefined();
    // A line logged on the executor thread (its own startup) reached the server's log.
    const lines = server.logs().split('\n').filter(Boolean).map((l) => JSON.parse(l) as { msg?: string });
    expect(lines.filter((l) => l.msg === 'outbound policy')).toHaveLength(2); // main thread and executor thread
    expect(lines.some((l) => l.msg === 'runs execute on an executor thread')).toBe(true);
  });

  it('a streamed run is executed on the thread and streamed back in order; the scrape counts it', async () => {
    const before = /^hangar_runs_finished_total\{status="success"\} (\d+)/m.exec(await scrape());
    const agentId = await createAgent(server);
    const threadId = await createThread(server, agentId);
    const { stream, events } = await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: 'on a thread' }], stream_mode: ['values', 'messages-tuple'] });
    expect(events[0]).toMatchObject({ event: 'metadata', data: { run_id: stream.runId } });
    expect(lastAiText(lastValues(events))).toBe('You said: on a thread');
    const ids = events.map((e) => Number(e.id));
    expect(ids).toEqual(ids.map((_, i) => i + 1));
    // The run's own counters live in the executor thread's registry; the scrape adds them up.
    const after = /^hangar_runs_finished_total\{status="success"\} (\d+)/m.exec(await scrape());
    expect(Number(after?.[1])).toBe(Number(before?.[1] ?? 0) + 1);
    // Node's process metrics come once (from the main thread), not once per thread.
    expect((await scrape()).match(/^process_cpu_user_seconds_total /gm)).toHaveLength(1);
  });

  it('a cancel sent over HTTP stops the run on the thread; the thread takes the next run', async () => {
    const agentId = await createAgent(server, { runtime: { model: { model_id: 'slow' } } });
    const threadId = await createThread(server, agentId);
    const long = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');
    const stream = await start(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: long }], stream_mode: ['messages-tuple'] });
    await take(stream, 5);
    // The main thread follows the thread's writer of this run (its stream reads no table).
    expect(server.hangar.runtime.hub.activeWriters).toBe(1);
    const cancelled = await server.client.POST('/v1/deepagents/threads/{thread_id}/runs/{run_id}/cancel', { params: { path: { thread_id: threadId, run_id: stream.runId! } } });
    expect(cancelled.data!.status).toBe('interrupted');
    await collect(stream);
    expect(server.hangar.runtime.hub.activeWriters).toBe(0);
    const thread = await server.client.GET('/v1/deepagents/threads/{thread_id}', { params: { path: { thread_id: threadId } } });
    expect(thread.data!.status).toBe('idle');
    const next = await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: 'again' }], stream_mode: ['values'] });
    expect(lastAiText(lastValues(next.events))).toBe('You said: again');
  });

  it('the thread dies mid-run: it is started again, the run is retried, and its open stream completes', async () => {
    const agentId = await createAgent(server, { runtime: { model: { model_id: 'slow' } } });
    const threadId = await createThread(server, agentId);
    const long = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');
    const stream = await start(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: long }], stream_mode: ['values'] });
    const first = await take(stream, 2);
    expect(first[0]).toMatchObject({ event: 'metadata', data: { run_id: stream.runId } });
    await server.hangar.executor!.kill();
    // The stream stays open across the crash: the new thread's sweep retries the run once its lease
    // expired, and what it writes reaches this stream.
    const events = [...first, ...(await collect(stream))];
    expect(events.at(-1)!.event).not.toBe('error');
    expect(lastAiText(lastValues(events))).toBe(`You said: ${long}`);
    const ids = events.map((e) => Number(e.id));
    expect(ids).toEqual(ids.map((_, i) => i + 1));
    const runInfo = await server.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}', { params: { path: { thread_id: threadId, run_id: stream.runId! } } });
    expect(runInfo.data!.status).toBe('success');
    expect(server.logs()).toContain('executor thread exited; starting a new one');
    // The new thread takes new runs.
    const next = await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: 'after the crash' }], stream_mode: ['values'] });
    expect(lastAiText(lastValues(next.events))).toBe('You said: after the crash');
  });
});
