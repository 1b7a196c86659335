// Resumable streams, cancellation, multitask strategies and the usage report, end to end. A saved
// model configuration slows the scripted model so a run is still going while the test acts; the test
// waits on events and statuses, never on time.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { collect, joinRun, type RunStream, type SseEvent } from '../../src/client/stream.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent, createThread, run, start } from '../runtime/support.js';

let server: TestServer;
let slowAgentId: string;

beforeAll(async () => {
  server = await startTestServer();
  const config = await server.client.POST('/v1/deepagents/model-configs', { body: { name: 'slow', model_id: 'scripted:slow', parameters: { delay_ms: 40 } } });
  expect(config.response.status).toBe(201);
  slowAgentId = await createAgent(server, { runtime: { model: { model_id: 'slow' } } });
});
afterAll(async () => {
  await server?.close();
});

const LONG = Array.from({ length: 60 }, (_, i) => `word${i}`).join(' ');
const threadPath = (threadId: string) => ({ params: { path: { thread_id: threadId } } });

async function threadStatus(threadId: string): Promise<string> {
  return (await server.client.GET('/v1/deepagents/threads/{thread_id}', threadPath(threadId))).data!.status;
}
async function runRecord(threadId: string, runId: string) {
  return (await server.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}', { params: { path: { thread_id: threadId, run_id: runId } } })).data!;
}
/** Read `n` events of an open stream. */
async function take(stream: RunStream, n: number): Promise<SseEvent[]> {
  const out: SseEvent[] = [];
  for await (const e of stream.events) {
    out.push(e);
    if (out.length === n) break;
  }
  return out;
}
async function startLong(threadId: string, extra: Record<string, unknown> = {}, abort?: AbortController): Promise<RunStream> {
  const stream = await (abort
    ? import('../../src/client/stream.js').then(({ streamRun }) =>
        streamRun({ baseUrl: server.url, apiKey: server.adminKey, threadId, body: { agent_id: slowAgentId, messages: [{ role: 'user', content: LONG }], stream_mode: ['messages-tuple'], ...extra } as never, signal: abort.signal }),
      )
    : start(server, threadId, { agent_id: slowAgentId, messages: [{ role: 'user', content: LONG }], stream_mode: ['messages-tuple'], ...extra } as never));
  expect(stream.status).toBe(200);
  return stream;
}
const join = (threadId: string, runId: string, lastEventId?: string) =>
  joinRun({ baseUrl: server.url, apiKey: server.adminKey, threadId, runId, ...(lastEventId ? { lastEventId } : {}) });

describe('resumable streams', () => {
  it('a client that drops mid-stream reconnects with Last-Event-ID and gets exactly the missing events', async () => {
    const threadId = await createThread(server, slowAgentId);
    const abort = new AbortController();
    const stream = await startLong(threadId, {}, abort);
    const seen = await take(stream, 10);
    abort.abort();
    const rest = await collect(await join(threadId, stream.runId!, seen.at(-1)!.id));
    const full = await collect(await join(threadId, stream.runId!));
    expect([...seen, ...rest].map((e) => e.id)).toEqual(full.map((e) => e.id));
    expect([...seen, ...rest]).toEqual(full);
    expect(full.map((e) => Number(e.id))).toEqual(full.map((_, i) => i + 1));
    expect((await runRecord(threadId, stream.runId!)).status).toBe('success');
  });

  it('on_disconnect cancel stops the run when its client goes away; the thread is idle', async () => {
    const threadId = await createThread(server, slowAgentId);
    const abort = new AbortController();
    const stream = await startLong(threadId, { on_disconnect: 'cancel' }, abort);
    await take(stream, 3);
    abort.abort();
    const after = await collect(await join(threadId, stream.runId!));
    expect(after.length).toBeGreaterThan(0);
    const record = await runRecord(threadId, stream.runId!);
    expect(record.status).toBe('interrupted');
    expect(await threadStatus(threadId)).toBe('idle');
  });

  it('POST …/cancel interrupts a running run and frees the thread; a second cancel answers the run as it ended', async () => {
    const threadId = await createThread(server, slowAgentId);
    const stream = await startLong(threadId);
    await take(stream, 3);
    const cancelled = await server.client.POST('/v1/deepagents/threads/{thread_id}/runs/{run_id}/cancel', {
      params: { path: { thread_id: threadId, run_id: stream.runId! } },
    });
    expect(cancelled.response.status).toBe(200);
    expect(cancelled.data!.status).toBe('interrupted');
    await collect(stream); // the stream ends with the run
    expect(await threadStatus(threadId)).toBe('idle');
    const again = await server.client.POST('/v1/deepagents/threads/{thread_id}/runs/{run_id}/cancel', {
      params: { path: { thread_id: threadId, run_id: stream.runId! } },
    });
    // An ended run is answered as it is (as the LangGraph server does), untouched.
    expect(again.response.status).toBe(200);
    expect(again.data).toMatchObject({ run_id: stream.runId, status: 'interrupted' });
  });
});

describe('a cancelled run', () => {
  it("has a trace that is not an error (tagged cancelled), and usage names the agent's model", async () => {
    const agentId = await createAgent(server, { runtime: { model: { model_id: 'slow' } } });
    const threadId = await createThread(server, agentId);
    const stream = await start(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: LONG }], stream_mode: ['messages-tuple'] } as never);
    expect(stream.status).toBe(200);
    await take(stream, 3);
    const cancelled = await server.client.POST('/v1/deepagents/threads/{thread_id}/runs/{run_id}/cancel', { params: { path: { thread_id: threadId, run_id: stream.runId! } } });
    expect(cancelled.data!.status).toBe('interrupted');
    await collect(stream);
    // The worker stops the run after the cancel settled it: wait (on state, not time) for its trace to end.
    type Root = { status: string; error: string | null; tags: string[]; child_runs: { status: string; error: string | null; tags: string[] }[] };
    const root = await vi.waitFor(
      async () => {
        const res = await server.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}/trace', { params: { path: { thread_id: threadId, run_id: stream.runId! } } });
        const data = res.data as unknown as Root | undefined;
        if (!data || data.status === 'pending') throw new Error('trace not ended yet');
        return data;
      },
      { timeout: 30_000, interval: 50 },
    );
    expect(root.status).not.toBe('error');
    expect(root.error).toBeNull();
    expect(root.tags).toContain('cancelled');
    const flat = (r: Root | Root['child_runs'][number]): { status: string; error: string | null }[] => [r, ...((r as Root).child_runs ?? []).flatMap(flat)];
    expect(flat(root).filter((r) => r.status === 'error')).toEqual([]);
    const usage = await vi.waitFor(
      async () => {
        const items = (await server.client.GET('/v1/deepagents/usage', { params: { query: { agent_id: agentId } } })).data!.items;
        if (items.some((i) => i.model === 'unknown')) throw new Error('usage not kept yet');
        return items;
      },
      { timeout: 30_000, interval: 50 },
    );
    // No tokens: the one model call was stopped before it reported its usage.
    expect(usage).toEqual([expect.objectContaining({ agent_id: agentId, model: 'slow', runs: 1, errors: 0 })]);
  });
});

describe('multitask strategies', () => {
  it('reject (default) is a 409; enqueue runs after the active run', async () => {
    const threadId = await createThread(server, slowAgentId);
    const first = await startLong(threadId);
    await take(first, 2);
    const refused = await start(server, threadId, { agent_id: slowAgentId, messages: [{ role: 'user', content: 'second' }] });
    expect(refused.status).toBe(409);
    const queued = await start(server, threadId, { agent_id: slowAgentId, messages: [{ role: 'user', content: 'second' }], multitask_strategy: 'enqueue' } as never);
    expect(queued.status).toBe(200);
    await collect(first);
    await collect(queued);
    const a = await runRecord(threadId, first.runId!);
    const b = await runRecord(threadId, queued.runId!);
    expect([a.status, b.status]).toEqual(['success', 'success']);
    expect(new Date(b.started_at!).getTime()).toBeGreaterThanOrEqual(new Date(a.ended_at!).getTime());
    const state = await server.client.GET('/v1/deepagents/threads/{thread_id}/state', threadPath(threadId));
    const humans = (state.data!.values.messages as { type: string; content: string }[]).filter((m) => m.type === 'human').map((m) => m.content);
    expect(humans).toEqual([LONG, 'second']);
    expect(await threadStatus(threadId)).toBe('idle');
  });

  it('interrupt cancels the active run and starts the new one; rollback also deletes it', async () => {
    for (const strategy of ['interrupt', 'rollback'] as const) {
      const threadId = await createThread(server, slowAgentId);
      const first = await startLong(threadId);
      await take(first, 2);
      const next = await start(server, threadId, { agent_id: slowAgentId, messages: [{ role: 'user', content: 'instead' }], multitask_strategy: strategy } as never);
      expect(next.status).toBe(200);
      await collect(next);
      expect((await runRecord(threadId, next.runId!)).status).toBe('success');
      const old = await server.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}', { params: { path: { thread_id: threadId, run_id: first.runId! } } });
      if (strategy === 'interrupt') expect(old.data!.status).toBe('interrupted');
      else expect(old.response.status).toBe(404);
      expect(await threadStatus(threadId)).toBe('idle');
    }
  });
});

describe('usage', () => {
  it('counts runs, tokens and errors per agent and model, without test runs', async () => {
    const agentId = await createAgent(server);
    const real = await createThread(server, agentId);
    await run(server, real, { agent_id: agentId, messages: [{ role: 'user', content: 'one two three' }] });
    await run(server, real, { agent_id: agentId, messages: [{ role: 'user', content: 'four' }] });
    const test = await createThread(server, agentId, { test_run: true });
    await run(server, test, { agent_id: agentId, messages: [{ role: 'user', content: 'not counted' }] });
    const res = await server.client.GET('/v1/deepagents/usage', { params: { query: { agent_id: agentId } } });
    expect(res.response.status).toBe(200);
    expect(res.data!.items).toHaveLength(1);
    const row = res.data!.items[0]!;
    expect(row).toMatchObject({ agent_id: agentId, model: 'demo', runs: 2, errors: 0 });
    expect(row.input_tokens).toBeGreaterThan(0);
    expect(row.output_tokens).toBeGreaterThan(0);
    const future = await server.client.GET('/v1/deepagents/usage', { params: { query: { agent_id: agentId, start: new Date(Date.now() + 3600_000).toISOString(), end: new Date(Date.now() + 7200_000).toISOString() } } });
    expect(future.data!.items).toEqual([]);
    const bad = await server.client.GET('/v1/deepagents/usage', { params: { query: { start: '2026-01-02T00:00:00Z', end: '2026-01-01T00:00:00Z' } } });
    expect(bad.response.status).toBe(422);
  });
});
