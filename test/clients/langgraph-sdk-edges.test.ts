// Edges of the LangGraph protocol a tester found through the official SDK: bad state updates refused,
// threads findable by their agent, rollback, store namespaces, commands and options that must be
// refused rather than ignored. Driven through `@langchain/langgraph-sdk` (plus raw HTTP where the
// SDK cannot send the request), against a real server and database.
import { Client } from '@langchain/langgraph-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent } from '../runtime/support.js';
import { startProviderStandIn } from '../fixtures/model-providers.js';
import { failure, human } from './sdk-support.js';

let server: TestServer;
let client: Client;
let agentId: string;
let otherAgentId: string;
let slowAgentId: string;

beforeAll(async () => {
  server = await startTestServer();
  agentId = await createAgent(server);
  otherAgentId = await createAgent(server);
  await server.client.POST('/v1/deepagents/model-configs', { body: { name: 'slow', model_id: 'scripted:slow', parameters: { delay_ms: 40 } } });
  slowAgentId = await createAgent(server, { runtime: { model: { model_id: 'slow' } } });
  client = new Client({ apiUrl: `${server.url}/v1/deepagents`, defaultHeaders: { 'X-Api-Key': server.adminKey }, callerOptions: { maxRetries: 0 } });
});
afterAll(async () => {
  await server?.close();
});

/** Raw HTTP against the LangGraph surface, for what the SDK cannot send. */
async function api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}/v1/deepagents${path}`, {
    method,
    headers: { 'X-Api-Key': server.adminKey, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

async function drainStream(stream: AsyncIterable<{ event: string; data: unknown }>): Promise<{ event: string; data: unknown }[]> {
  const out: { event: string; data: unknown }[] = [];
  for await (const chunk of stream) out.push(chunk);
  return out;
}


describe('LangGraph SDK edges', () => {
  it('updateState refuses bad input with a 422 naming it, and writes nothing', async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, agentId, human('hi'));
    const before = await client.threads.getState(thread.thread_id);
    const bad: [Record<string, unknown>, string | undefined, string][] = [
      [{ messages: [{ type: 'ai', content: 'x' }] }, 'nope', 'as_node'],
      [{ files: 'nope' }, undefined, 'files'],
      [{ messages: 5 }, undefined, 'messages'],
      [{ messages: [{ foo: 1 }] }, undefined, 'messages'],
      [{ files: { '/a': 5 } }, undefined, '/a'],
      [{ messages: [{ type: 'tool', content: 'orphan', tool_call_id: 'no-such-call' }] }, undefined, 'tool_call_id'],
      [{ todos: 'x' }, undefined, 'todos'],
    ];
    for (const [values, asNode, named] of bad) {
      const result = await failure(client.threads.updateState(thread.thread_id, { values, ...(asNode ? { asNode } : {}) }));
      expect({ values, ...result }).toMatchObject({ values, status: 422, message: expect.stringContaining(named) });
    }
    const after = await client.threads.getState(thread.thread_id);
    expect(after.checkpoint.checkpoint_id).toBe(before.checkpoint.checkpoint_id);
    // A sound update still works, and a run after it too.
    await client.threads.updateState(thread.thread_id, { values: { files: { '/ok.txt': { content: ['fine'], created_at: '2026-01-01T00:00:00Z', modified_at: '2026-01-01T00:00:00Z' } } } });
    const run = await client.runs.wait(thread.thread_id, agentId, human('again'));
    expect((run as { files: Record<string, unknown> }).files['/ok.txt']).toBeDefined();
  });

  it('threads that get a run, and hosted threads made for an agent, are found by assistant_id and graph_id', async () => {
    const viaRun = await client.threads.create();
    await client.runs.wait(viaRun.thread_id, otherAgentId, human('hi'));
    const hosted = await api('POST', '/threads', { agent_id: otherAgentId });
    expect(hosted.status).toBeLessThan(300);
    const idle = await client.threads.create(); // no run: bound to nothing
    expect((await client.threads.get(viaRun.thread_id)).metadata).toMatchObject({ assistant_id: otherAgentId, graph_id: otherAgentId });
    for (const key of ['assistant_id', 'graph_id']) {
      const found = (await client.threads.search({ metadata: { [key]: otherAgentId }, limit: 100 })).map((t) => t.thread_id);
      expect(found.sort()).toEqual([viaRun.thread_id, hosted.body.id].sort());
      expect(await client.threads.count({ metadata: { [key]: otherAgentId } })).toBe(2);
    }
    expect((await client.threads.search({ metadata: { assistant_id: agentId }, limit: 100 })).map((t) => t.thread_id)).not.toContain(idle.thread_id);
  });

  it('rollback (multitask strategy, and cancel with action=rollback) leaves the state as if the run never started', async () => {
    const LONG = Array.from({ length: 60 }, (_, i) => `word${i}`).join(' ');
    const humans = async (threadId: string) =>
      ((await client.threads.getState(threadId)).values as { messages: { type: string; content: string }[] }).messages.filter((m) => m.type === 'human').map((m) => m.content);
    /** Start the doomed run and wait until it streams model output (its input is checkpointed by then). */
    const startDoomed = async (threadId: string) => {
      const stream = client.runs.stream(threadId, slowAgentId, { ...human(LONG), streamMode: ['messages-tuple'] });
      let runId = '';
      let seen = 0;
      for await (const chunk of stream) {
        if (chunk.event === 'metadata') runId = (chunk.data as { run_id: string }).run_id;
        if (chunk.event === 'messages' && ++seen === 3) break;
      }
      return runId;
    };
    for (const how of ['strategy', 'cancel'] as const) {
      const thread = await client.threads.create();
      await client.runs.wait(thread.thread_id, slowAgentId, human('first'));
      const before = await client.threads.getHistory(thread.thread_id, { limit: 100 });
      const doomed = await startDoomed(thread.thread_id);
      if (how === 'strategy') {
        const next = await client.runs.create(thread.thread_id, slowAgentId, { ...human('replacement'), multitaskStrategy: 'rollback' });
        await client.runs.join(thread.thread_id, next.run_id);
        expect(await humans(thread.thread_id)).toEqual(['first', 'replacement']);
      } else {
        await client.runs.cancel(thread.thread_id, doomed, true, 'rollback');
        expect(await humans(thread.thread_id)).toEqual(['first']);
        const after = await client.threads.getHistory(thread.thread_id, { limit: 100 });
        expect(after.map((h) => h.checkpoint.checkpoint_id)).toEqual(before.map((h) => h.checkpoint.checkpoint_id));
      }
      expect((await failure(client.runs.get(thread.thread_id, doomed))).status).toBe(404);
      const history = await client.threads.getHistory(thread.thread_id, { limit: 100 });
      expect(history.filter((h) => (h.metadata as { run_id?: string } | null)?.run_id === doomed)).toEqual([]);
    }
  });

  it('cancel of a run that already ended succeeds, as on a LangGraph server, and changes nothing (rollback included)', async () => {
    const thread = await client.threads.create();
    // The SDK's usual shape: start, read the stream, cancel in a `finally` whether or not the run ended.
    const run = await client.runs.create(thread.thread_id, agentId, human('hi'));
    await client.runs.join(thread.thread_id, run.run_id);
    const before = await client.threads.getState(thread.thread_id);
    await client.runs.cancel(thread.thread_id, run.run_id);
    await client.runs.cancel(thread.thread_id, run.run_id, true);
    await client.runs.cancel(thread.thread_id, run.run_id, true, 'rollback');
    expect(await client.runs.get(thread.thread_id, run.run_id)).toMatchObject({ run_id: run.run_id, status: 'success' });
    const after = await client.threads.getState(thread.thread_id);
    expect(after.checkpoint.checkpoint_id).toBe(before.checkpoint.checkpoint_id);
    expect((await client.threads.get(thread.thread_id)).status).toBe('idle');
    // A run that does not exist is still a 404.
    expect((await failure(client.runs.cancel(thread.thread_id, crypto.randomUUID()))).status).toBe(404);
  });

  it('a failed run leaves its error in the state’s tasks, as on a LangGraph server, so a reloaded useStream shows the error and no breakpoint', async () => {
    // A provider refusing the key: the model call fails, the run ends in error.
    const provider = await startProviderStandIn();
    const config = await api('POST', '/model-configs', { name: 'refused', model_id: 'openai:unauthorized', parameters: { base_url: provider.openaiUrl }, api_key: 'sk-refused-0123456789' });
    expect(config.status).toBe(201);
    const failing = await createAgent(server, { runtime: { model: { model_id: 'refused' } } });
    const thread = await client.threads.create();
    const out = await failure(client.runs.wait(thread.thread_id, failing, human('hi')));
    expect(out.message).toContain('API key');
    const [run] = await client.runs.list(thread.thread_id);
    expect(run!.status).toBe('error');
    const state = await client.threads.getState(thread.thread_id);
    expect(state.next).toEqual(['model_request']);
    expect(state.tasks).toHaveLength(1);
    const task = state.tasks[0]!;
    expect(task).toMatchObject({ name: 'model_request', interrupts: [] });
    // The run's own error (code, class, message for people), as JSON the SDK parses into its StreamError.
    expect(JSON.parse(task.error!)).toEqual((run as unknown as { error: Record<string, unknown> }).error);
    expect((await client.threads.getHistory(thread.thread_id, { limit: 1 }))[0]!.tasks[0]!.error).toBe(task.error);
    // What useStream shows after a reload: the error, and no `{when: "breakpoint"}` interrupt.
    const { extractInterrupts } = await import('@langchain/langgraph-sdk/ui');
    expect(extractInterrupts(state.values, { isLoading: false, threadState: state, error: JSON.parse(task.error!) })).toBeUndefined();
    await provider.close();
  });

  it('a run cut off by useStream’s stop (the client goes away, on_disconnect cancel) leaves its task failed, not a breakpoint', async () => {
    const thread = await client.threads.create();
    const stop = new AbortController();
    let runId = '';
    let tokens = 0;
    const LONG = Array.from({ length: 60 }, (_, i) => `word${i}`).join(' ');
    // As useStream submits without reconnectOnMount: the stream's end cancels the run.
    const stream = client.runs.stream(thread.thread_id, slowAgentId, { ...human(LONG), streamMode: ['values', 'messages-tuple'], onDisconnect: 'cancel', signal: stop.signal });
    await (async () => {
      for await (const chunk of stream) {
        if (chunk.event === 'metadata') runId = (chunk.data as { run_id: string }).run_id;
        if (chunk.event === 'messages' && ++tokens === 3) stop.abort();
      }
    })().catch((error: unknown) => {
      if ((error as Error).name !== 'AbortError') throw error;
    });
    await client.runs.join(thread.thread_id, runId);
    expect((await client.runs.get(thread.thread_id, runId)).status).toBe('interrupted');
    const [head] = await client.threads.getHistory(thread.thread_id, { limit: 10 });
    expect(head!.next).toEqual(['model_request']);
    expect(head!.tasks).toHaveLength(1);
    expect(head!.tasks[0]).toMatchObject({ name: 'model_request', interrupts: [] });
    expect(JSON.parse(head!.tasks[0]!.error!)).toMatchObject({ code: 'run_cancelled', error: 'RunCancelled' });
    expect((await client.threads.getState(thread.thread_id)).tasks).toEqual(head!.tasks);
    // useStream drops a cancelled task's error and its `next` after its stop; had the task not read
    // as failed, it would show the cut-off node as a breakpoint: `{when: "breakpoint"}`.
    const { extractInterrupts } = await import('@langchain/langgraph-sdk/ui');
    expect(extractInterrupts(head!.values, { isLoading: false, threadState: { ...head!, tasks: [] }, error: undefined })).toEqual({ when: 'breakpoint' });
    // A paused run's tasks are not failed: a breakpoint reads as one, with its task.
    await client.runs.wait(thread.thread_id, slowAgentId, { ...human('pause here'), interruptBefore: ['model_request'] });
    const paused = await client.threads.getState(thread.thread_id);
    expect(paused.tasks).toEqual([expect.objectContaining({ name: 'model_request', error: null, interrupts: [] })]);
    expect(extractInterrupts(paused.values, { isLoading: false, threadState: paused, error: undefined })).toEqual({ when: 'breakpoint' });
  });

  it('state values hold only the state the schemas describe: no empty internal channel (LangChain’s jumpTo)', async () => {
    const schema = (await client.assistants.getSchemas(agentId)).state_schema as { properties: Record<string, unknown> };
    const described = Object.keys(schema.properties);
    const thread = await client.threads.create();
    const waited = (await client.runs.wait(thread.thread_id, agentId, human('hi'))) as Record<string, unknown>;
    const run = (await client.runs.list(thread.thread_id))[0]!;
    const seen = {
      wait: Object.keys(waited),
      join: Object.keys((await client.runs.join(thread.thread_id, run.run_id)) as Record<string, unknown>),
      state: Object.keys((await client.threads.getState(thread.thread_id)).values as Record<string, unknown>),
      thread: Object.keys((await client.threads.get(thread.thread_id)).values as Record<string, unknown>),
      history: Object.keys((await client.threads.getHistory(thread.thread_id))[0]!.values as Record<string, unknown>),
    };
    for (const keys of Object.values(seen)) {
      expect(keys).toContain('messages');
      expect({ seen, described, keys: keys.filter((k) => !described.includes(k)) }).toMatchObject({ keys: [] });
    }
  });

  it('input null on a thread with no checkpoint yet is a 422 naming input: no run, the thread stays unbound, none is created', async () => {
    const thread = await client.threads.create();
    for (const attempt of [
      () => client.runs.wait(thread.thread_id, agentId, { input: null }),
      () => client.runs.create(thread.thread_id, agentId, { input: null }),
      () => drainStream(client.runs.stream(thread.thread_id, agentId, { input: null })),
    ]) {
      expect(await failure(attempt())).toMatchObject({ status: 422, message: expect.stringContaining('input') });
    }
    expect(await client.runs.list(thread.thread_id)).toEqual([]);
    expect((await client.threads.get(thread.thread_id)) as unknown as { agent_id: string | null; status: string }).toMatchObject({ agent_id: null, status: 'idle' });
    const unborn = crypto.randomUUID();
    expect(await failure(client.runs.wait(unborn, agentId, { input: null, ifNotExists: 'create' }))).toMatchObject({ status: 422 });
    expect((await failure(client.threads.get(unborn))).status).toBe(404);
    expect((await failure(client.runs.wait(crypto.randomUUID(), agentId, { input: null }))).status).toBe(404);
    // Once the thread has a checkpoint, input null goes on from it.
    await client.runs.wait(thread.thread_id, agentId, { ...human('hi'), interruptBefore: ['model_request'] });
    const done = (await client.runs.wait(thread.thread_id, agentId, { input: null })) as { messages: { type: string; content: string }[] };
    expect(done.messages.at(-1)).toMatchObject({ type: 'ai', content: 'You said: hi' });
  });

  it('store listNamespaces with maxDepth truncates deeper namespaces to that many labels', async () => {
    const root = `ns-${Math.random().toString(36).slice(2, 8)}`;
    await client.store.putItem([root, 'a', 'b', 'c'], 'k', { v: 1 });
    await client.store.putItem([root, 'a', 'x'], 'k', { v: 2 });
    await client.store.putItem([root, 'd'], 'k', { v: 3 });
    const list = async (maxDepth: number) => (await client.store.listNamespaces({ prefix: [root], maxDepth })).namespaces.map((ns) => ns.join('/')).sort();
    expect(await list(2)).toEqual([`${root}/a`, `${root}/d`]);
    expect(await list(3)).toEqual([`${root}/a/b`, `${root}/a/x`, `${root}/d`]);
    expect(await list(1)).toEqual([root]);
  });

  it('a command with nothing to do is a 422 at request time, and no run is made', async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, agentId, human('first'));
    for (const command of [{}, { goto: [] }, { update: {} }]) {
      const result = await failure(client.runs.wait(thread.thread_id, agentId, { command }));
      expect({ command, ...result }).toMatchObject({ command, status: 422, message: expect.stringContaining('command') });
    }
    expect(await client.runs.list(thread.thread_id)).toHaveLength(1);
  });

  it('options that would be ignored are refused (after_seconds, two agents) or honoured (joinStream streamMode)', async () => {
    const thread = await client.threads.create();
    const delayed = await failure(client.runs.create(thread.thread_id, agentId, { ...human('later'), afterSeconds: 30 }));
    expect(delayed).toMatchObject({ status: 422, message: expect.stringContaining('after_seconds') });
    const both = await api('POST', `/threads/${thread.thread_id}/runs/wait`, { agent_id: agentId, assistant_id: otherAgentId, ...human('which?') });
    expect(both.status).toBe(422);
    expect(JSON.stringify(both.body)).toContain('assistant_id');
    expect(await client.runs.list(thread.thread_id)).toEqual([]);
    // The same agent named twice is fine.
    const same = await api('POST', `/threads/${thread.thread_id}/runs/wait`, { agent_id: agentId, assistant_id: agentId, ...human('hi') });
    expect(same.status).toBe(200);
    const run = await client.runs.create(thread.thread_id, agentId, { ...human('again'), streamMode: ['values', 'updates'] });
    await client.runs.join(thread.thread_id, run.run_id);
    const all = new Set((await drainStream(client.runs.joinStream(thread.thread_id, run.run_id))).map((c) => c.event));
    expect([...all]).toEqual(expect.arrayContaining(['values', 'updates']));
    const only = new Set((await drainStream(client.runs.joinStream(thread.thread_id, run.run_id, { streamMode: ['updates'] }))).map((c) => c.event));
    expect(only.has('updates')).toBe(true);
    expect(only.has('values')).toBe(false);
    expect(only.has('metadata')).toBe(true);
  });

  it('user_timezone must be an IANA zone; client message ids are kept; a tool message or a message with tool calls cannot start a run', async () => {
    const thread = await client.threads.create();
    const mars = await failure(client.runs.wait(thread.thread_id, agentId, { ...human('hi'), config: { configurable: { user_timezone: 'Mars/Olympus' } } }));
    expect(mars).toMatchObject({ status: 422, message: expect.stringContaining('user_timezone') });
    const tool = await failure(client.runs.wait(thread.thread_id, agentId, { input: { messages: [{ role: 'tool', content: 'tool says hi' }] } }));
    expect(tool).toMatchObject({ status: 422, message: expect.stringContaining('tool') });
    // An ai message with tool calls (their results could not follow it) is refused, not stripped.
    const calls = await failure(
      client.runs.wait(thread.thread_id, agentId, {
        input: { messages: [{ type: 'ai', content: '', tool_calls: [{ id: 'c1', name: 'ls', args: {} }] }, { type: 'human', content: 'go on' }] },
      }),
    );
    expect(calls).toMatchObject({ status: 422, message: expect.stringContaining('tool_calls') });
    await client.runs.wait(thread.thread_id, agentId, { input: { messages: [{ type: 'human', content: 'mine', id: 'client-msg-1' }] }, config: { configurable: { user_timezone: 'Europe/Paris' } } });
    const messages = ((await client.threads.getState(thread.thread_id)).values as { messages: { type: string; id: string }[] }).messages;
    expect(messages.find((m) => m.type === 'human')!.id).toBe('client-msg-1');
  });

  it('history pages with before (a config, as the SDK types it, or an id), picks a checkpoint or metadata; getState reads a past checkpoint', async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, agentId, human('first'));
    await client.runs.wait(thread.thread_id, agentId, human('second'));
    const all = await client.threads.getHistory(thread.thread_id, { limit: 100 });
    const ids = all.map((s) => s.checkpoint.checkpoint_id!);
    expect(ids.length).toBeGreaterThanOrEqual(2);
    expect(all[0]!.checkpoint).toEqual({ thread_id: thread.thread_id, checkpoint_ns: '', checkpoint_id: ids[0], checkpoint_map: null });
    const page = await client.threads.getHistory(thread.thread_id, { limit: 100, before: { configurable: { checkpoint_id: ids[0] } } });
    expect(page.map((s) => s.checkpoint.checkpoint_id)).toEqual(ids.slice(1));
    const byId = await client.threads.getHistory(thread.thread_id, { limit: 1, before: ids[0] as never });
    expect(byId.map((s) => s.checkpoint.checkpoint_id)).toEqual(ids.slice(1, 2));
    expect((await client.threads.getHistory(thread.thread_id, { checkpoint: { checkpoint_id: ids[1] } })).map((s) => s.checkpoint.checkpoint_id)).toEqual([ids[1]]);
    const firstRun = (all[1]!.metadata as { run_id: string }).run_id;
    // The first run wrote two: its state at the end, and the empty root before it (so its input can be edited).
    expect((await client.threads.getHistory(thread.thread_id, { limit: 100, metadata: { run_id: firstRun } })).map((s) => s.checkpoint.checkpoint_id)).toEqual([ids[1], ids[2]]);
    // The state at the older checkpoint: the first exchange only.
    const past = await client.threads.getState(thread.thread_id, ids[1]);
    const humans = (s: { values: unknown }) => (s.values as { messages: { type: string; content: string }[] }).messages.filter((m) => m.type === 'human').map((m) => m.content);
    expect(humans(past)).toEqual(['first']);
    expect(humans(await client.threads.getState(thread.thread_id, { checkpoint_id: ids[1] } as never))).toEqual(['first']);
    expect(humans(await client.threads.getState(thread.thread_id))).toEqual(['first', 'second']);
    // Reads, so a viewer makes them too (the checkpoint form is a POST).
    const viewer = new Client({ apiUrl: `${server.url}/v1/deepagents`, defaultHeaders: { 'X-Api-Key': await server.createKey({ role: 'viewer' }) }, callerOptions: { maxRetries: 0 } });
    expect(humans(await viewer.threads.getState(thread.thread_id, { checkpoint_id: ids[1] } as never))).toEqual(['first']);
    expect(humans(await viewer.threads.getState(thread.thread_id, ids[1]))).toEqual(['first']);
    // A checkpoint the thread does not have, another thread's, or a subgraph's namespace.
    const other = await client.threads.create();
    await client.runs.wait(other.thread_id, agentId, human('elsewhere'));
    const otherId = (await client.threads.getState(other.thread_id)).checkpoint.checkpoint_id!;
    expect(await failure(client.threads.getState(thread.thread_id, otherId))).toMatchObject({ status: 404, message: expect.stringContaining('checkpoint_not_found') });
    expect((await client.threads.getHistory(thread.thread_id, { checkpoint: { checkpoint_id: otherId } })).length).toBe(0);
    expect(await failure(client.threads.getHistory(thread.thread_id, { checkpoint: { checkpoint_ns: 'tools:call_1' } }))).toMatchObject({ status: 422, message: expect.stringContaining('checkpoint_ns') });
    expect(await failure(client.threads.getHistory(thread.thread_id, { before: { configurable: {} } as never }))).toMatchObject({ status: 422, message: expect.stringContaining('before') });
  });

  it('runs carry multitask_strategy, as the SDK’s Run type says', async () => {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, agentId, { ...human('hi'), multitaskStrategy: 'enqueue' });
    expect(run.multitask_strategy).toBe('enqueue');
    await client.runs.join(thread.thread_id, run.run_id);
    expect((await client.runs.get(thread.thread_id, run.run_id)).multitask_strategy).toBe('enqueue');
    expect((await client.runs.list(thread.thread_id))[0]!.multitask_strategy).toBe('enqueue');
  });

  it('a run stopped before its tools (interruptBefore ["tools"], started by a Send) has them next, one task per call, and continues with input null', async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, agentId, { ...human('/call ls {"path": "/"}\n/call glob {"pattern": "*"}'), interruptBefore: ['tools'] });
    const state = await client.threads.getState(thread.thread_id);
    expect(state.next).toEqual(['tools', 'tools']);
    expect(state.tasks.map((t) => ({ name: t.name, error: t.error, interrupts: t.interrupts }))).toEqual([
      { name: 'tools', error: null, interrupts: [] },
      { name: 'tools', error: null, interrupts: [] },
    ]);
    const thread_ = await client.threads.get(thread.thread_id);
    expect(thread_.status).toBe('interrupted');
    expect(Object.keys(thread_.interrupts).sort()).toEqual(state.tasks.map((t) => t.id).sort());
    const done = (await client.runs.wait(thread.thread_id, agentId, { input: null })) as { messages: { type: string }[] };
    expect(done.messages.map((m) => m.type)).toEqual(['human', 'ai', 'tool', 'tool', 'ai']);
    expect((await client.threads.getState(thread.thread_id)).next).toEqual([]);
  });

  it('config.recursion_limit bounds a run’s steps (a run needing more fails, GraphRecursionError); one that is not a positive integer is a 422', async () => {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, agentId, { ...human('/call ls {"path": "/"}'), config: { recursion_limit: 3 } });
    await client.runs.join(thread.thread_id, run.run_id);
    const ended = (await api('GET', `/threads/${thread.thread_id}/runs/${run.run_id}`)).body;
    expect(ended).toMatchObject({ status: 'error', error: { code: 'run_failed', error: 'GraphRecursionError' } });
    const roomy = await client.threads.create();
    expect(((await client.runs.wait(roomy.thread_id, agentId, { ...human('/call ls {"path": "/"}'), config: { recursion_limit: 50 } })) as { messages: unknown[] }).messages).toHaveLength(4);
    for (const bad of [0, 2.5, 'ten']) {
      const result = await failure(client.runs.create(roomy.thread_id, agentId, { ...human('hi'), config: { recursion_limit: bad as number } }));
      expect({ bad, ...result }).toMatchObject({ bad, status: 422, message: expect.stringContaining('recursion_limit') });
    }
  });

  it('assistants.search and count filter by metadata (revision, model_id), as containment: another key matches none', async () => {
    const assistant = await client.assistants.get(agentId);
    const { revision, model_id } = assistant.metadata as { revision: string; model_id: string };
    const ids = async (metadata: Record<string, unknown>) => (await client.assistants.search({ metadata, limit: 100 })).map((a) => a.assistant_id);
    expect(await ids({ revision })).toEqual([agentId]);
    expect(await ids({ revision, model_id })).toEqual([agentId]);
    expect(await ids({ model_id: 'scripted:demo' })).toEqual(expect.arrayContaining([agentId, otherAgentId]));
    expect(await ids({ model_id: 'slow' })).toEqual([slowAgentId]);
    expect(await ids({ revision, model_id: 'slow' })).toEqual([]);
    expect(await ids({ created_by: 'system' })).toEqual([]);
    expect(await ids({ revision: 5 })).toEqual([]);
    expect(await client.assistants.count({ metadata: { model_id: 'slow' } })).toBe(1);
    expect(await client.assistants.count({ metadata: { nope: 'x' } })).toBe(0);
  });
});
