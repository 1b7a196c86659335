// A resume cancelled before any worker took it: nothing of it ran, so the pause is still there to be
// answered. An API-only server takes the resume (it executes nothing) and a worker-only server, started
// only when wanted, runs the pausing run and then the new answer.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { collect } from '../../src/client/stream.js';
import type { Hangar } from '../../src/server.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent, createThread, lastValues, run, start, startWorker, take } from '../runtime/support.js';

let api: TestServer;
let worker: Hangar | undefined;

beforeAll(async () => {
  api = await startTestServer({ env: { HANGAR_ROLE: 'api' } });
});
afterEach(async () => {
  await worker?.close();
  worker = undefined;
});
afterAll(async () => {
  await api?.close();
});

const path = (threadId: string) => ({ params: { path: { thread_id: threadId } } });

describe('a resume cancelled before it ran', () => {
  it('leaves the thread interrupted, its pause pending: it can be answered again, and the answer runs', async () => {
    const agent = await createAgent(api, { tools: { tools: [], interrupt_config: { write_file: true } } });
    const threadId = await createThread(api, agent);
    worker = await startWorker(api);
    const paused = await run(api, threadId, { agent_id: agent, messages: [{ role: 'user', content: '/call write_file {"file_path": "/a.txt", "content": "a"}' }] });
    expect(lastValues(paused.events).__interrupt__).toBeDefined();
    await worker.close();
    worker = undefined;
    const thread = async () => (await api.client.GET('/v1/deepagents/threads/{thread_id}', path(threadId))).data!;
    expect((await thread()).status).toBe('interrupted');

    // Approved, then cancelled while no worker has taken the run.
    const approve = { decisions: [{ type: 'approve' }] };
    const resumed = await start(api, threadId, { agent_id: agent, command: { resume: approve } } as never);
    expect(resumed.status).toBe(200);
    await take(resumed, 1);
    const cancelled = await api.client.POST('/v1/deepagents/threads/{thread_id}/runs/{run_id}/cancel', { params: { path: { thread_id: threadId, run_id: resumed.runId! } } });
    expect(cancelled.response.status).toBeLessThan(300);
    await collect(resumed);

    // Nothing ran: the thread still waits for the answer.
    const after = await thread();
    expect(after.status).toBe('interrupted');
    expect(Object.values(after.interrupts).flat()).toHaveLength(1);
    expect(Object.keys((after.values as { files?: Record<string, unknown> }).files ?? {})).toEqual([]);

    // Answered again (the same answer, a person may also change it): a new run, which writes the file.
    worker = await startWorker(api);
    const again = await run(api, threadId, { agent_id: agent, command: { resume: approve } } as never);
    expect(again.stream.runId).not.toBe(resumed.runId);
    const done = await thread();
    expect(done.status).toBe('idle');
    expect(Object.keys((done.values as { files?: Record<string, unknown> }).files ?? {})).toEqual(['/a.txt']);
  }, 60_000);
});
