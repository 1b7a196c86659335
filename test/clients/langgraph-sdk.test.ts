// The LangGraph Agent Server protocol, driven only through the official `@langchain/langgraph-sdk`
// Client pointed at `{server}/v1/deepagents`: assistants, threads, state, history, streamed runs with
// every stream mode, resumes with `command`, background runs, waits, joins, and bad input refused.
import { Client } from '@langchain/langgraph-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBearerToolServer, type ToolServerFixture } from '../support/mcp.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent } from '../runtime/support.js';

const TOKEN = 'langgraph-sdk-test-token';
let server: TestServer;
let tools: ToolServerFixture;
let client: Client;
let agentId: string;
let otherAgentId: string;
const AGENT_NAME = `sdk-agent-${Math.random().toString(36).slice(2, 8)}`;

beforeAll(async () => {
  [server, tools] = await Promise.all([startTestServer(), startBearerToolServer(TOKEN)]);
  const reg = await server.client.POST('/v1/deepagents/mcp-servers', {
    body: { name: 'calc', url: tools.url, headers: [{ key: 'Authorization', value: `Bearer ${TOKEN}` }] },
  });
  expect(reg.response.status).toBe(201);
  agentId = await createAgent(server, {
    name: AGENT_NAME,
    tools: { tools: [{ name: 'add', mcp_server_url: tools.url }], interrupt_config: { [`${tools.url}::add`]: true } },
  });
  otherAgentId = await createAgent(server);
  // As the SDK's documentation has it: only the URL and the key are Hangar's.
  client = new Client({ apiUrl: `${server.url}/v1/deepagents`, defaultHeaders: { 'X-Api-Key': server.adminKey }, callerOptions: { maxRetries: 0 } });
});
afterAll(async () => {
  await Promise.all([server?.close(), tools?.close()]);
});

type Chunk = { event: string; data: unknown };
async function drain(stream: AsyncIterable<Chunk>): Promise<Chunk[]> {
  const out: Chunk[] = [];
  for await (const chunk of stream) out.push(chunk);
  return out;
}

/** The HTTP status of what `promise` rejects with (the SDK's HTTPError). */
async function statusOf(promise: Promise<unknown>): Promise<number> {
  try {
    await promise;
  } catch (error) {
    return (error as { status?: number }).status ?? -1;
  }
  return 200;
}

type Message = { type: string; content: unknown; tool_calls?: unknown[] };
const lastAi = (values: { messages?: Message[] }) => values.messages!.filter((m) => m.type === 'ai').at(-1)!.content;

describe('LangGraph SDK against Hangar', () => {
  it('the documented flow: thread, messages-tuple stream, interrupt approved with command.resume, history', async () => {
    const thread = await client.threads.create();
    expect(thread.thread_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(thread.status).toBe('idle');

    const paused = await drain(
      client.runs.stream(thread.thread_id, agentId, {
        input: { messages: [{ type: 'human', content: '/call add {"a": 2, "b": 40}' }] },
        streamMode: ['messages-tuple', 'values', 'updates'],
      }) as AsyncIterable<Chunk>,
    );
    expect(paused[0]!.event).toBe('metadata');
    const tuples = paused.filter((c) => c.event === 'messages');
    expect(tuples.length).toBeGreaterThan(0);
    const [chunk, meta] = tuples[0]!.data as [Message, Record<string, unknown>];
    expect(chunk.type).toBe('AIMessageChunk');
    expect(meta.langgraph_node).toBeDefined();
    const lastValues = paused.filter((c) => c.event === 'values').at(-1)!.data as { __interrupt__: { id: string; value: { action_requests: { name: string }[] } }[] };
    expect(lastValues.__interrupt__[0]!.value.action_requests[0]!.name).toBe('add');
    expect(tools.calls).toHaveLength(0);

    // The thread now belongs to the run's assistant, and waits in LangGraph's shapes.
    const waiting = await client.threads.get(thread.thread_id);
    expect(waiting.status).toBe('interrupted');
    expect((waiting as unknown as { agent_id: string }).agent_id).toBe(agentId);
    const byTask = Object.values(waiting.interrupts).flat();
    expect(byTask).toHaveLength(1);
    const state = await client.threads.getState(thread.thread_id);
    expect(state.tasks).toHaveLength(1);
    expect(state.tasks[0]!.interrupts[0]!.value).toMatchObject({ action_requests: [{ name: 'add', args: { a: 2, b: 40 } }] });
    expect(state.next.length).toBeGreaterThan(0);

    const resumed = await drain(
      client.runs.stream(thread.thread_id, agentId, { command: { resume: { decisions: [{ type: 'approve' }] } }, streamMode: ['values'] }) as AsyncIterable<Chunk>,
    );
    const final = resumed.filter((c) => c.event === 'values').at(-1)!.data as { messages: Message[] };
    expect(lastAi(final)).toBe('Done.\nadd: 42');
    expect(tools.calls).toEqual([{ name: 'add', args: { a: 2, b: 40 } }]);

    const history = await client.threads.getHistory(thread.thread_id, { limit: 50 });
    // One checkpoint per run at the server's default durability (exit): the pause, then the answer.
    expect(history.length).toBeGreaterThanOrEqual(2);
    expect(history.some((h) => h.tasks.some((t) => t.interrupts.length > 0))).toBe(true);
    expect(history[0]!.checkpoint.checkpoint_id).toBe((await client.threads.getState(thread.thread_id)).checkpoint.checkpoint_id);
    const after = await client.threads.get(thread.thread_id);
    expect(after.status).toBe('idle');
    expect(after.interrupts).toEqual({});
    expect((after.values as { messages: Message[] }).messages.length).toBe(final.messages.length);
  });

  it('tokens stream as messages-tuple chunks that add up to the answer; updates and custom are accepted', async () => {
    const thread = await client.threads.create({ metadata: { assistant_id: AGENT_NAME } });
    expect((thread as unknown as { agent_id: string }).agent_id).toBe(agentId);
    const chunks = await drain(
      client.runs.stream(thread.thread_id, AGENT_NAME, {
        input: { messages: [{ role: 'user', content: 'hello there friend' }] },
        streamMode: ['messages-tuple', 'updates', 'custom'],
      }) as AsyncIterable<Chunk>,
    );
    const tokens = chunks.filter((c) => c.event === 'messages').map((c) => (c.data as [Message])[0].content as string);
    expect(tokens.length).toBeGreaterThan(2);
    expect(tokens.join('')).toBe('You said: hello there friend');
    expect(chunks.some((c) => c.event === 'updates')).toBe(true);
  });

  it('assistants: search, get (by id and name), count, graph, schemas; no create', async () => {
    const found = await client.assistants.search({ limit: 100 });
    const mine = found.find((a) => a.assistant_id === agentId)!;
    expect(mine).toMatchObject({ graph_id: agentId, name: AGENT_NAME, version: 1 });
    expect((await client.assistants.search({ graphId: agentId })).map((a) => a.assistant_id)).toEqual([agentId]);
    expect((await client.assistants.get(AGENT_NAME)).assistant_id).toBe(agentId);
    expect(await client.assistants.count()).toBeGreaterThanOrEqual(2);
    const graph = (await client.assistants.getGraph(agentId)) as { nodes: { id: string }[]; edges: unknown[] };
    expect(graph.nodes.map((n) => n.id)).toEqual(expect.arrayContaining(['__start__', '__end__']));
    expect(graph.edges.length).toBeGreaterThan(0);
    const schemas = await client.assistants.getSchemas(agentId);
    expect(schemas.input_schema).toMatchObject({ properties: { messages: {} } });
    // Subagents run inside the `task` tool, not as subgraph nodes: none, as LangGraph answers.
    expect(await client.assistants.getSubgraphs(agentId)).toEqual({});
    expect(await client.assistants.getSubgraphs(AGENT_NAME, { namespace: 'tools', recurse: true })).toEqual({});
    expect(await statusOf(client.assistants.getSubgraphs('no-such-agent'))).toBe(404);
    expect(await statusOf(client.assistants.get('no-such-agent'))).toBe(404);
    expect(await statusOf(client.assistants.create({ graphId: 'x' }))).toBe(405);
  });

  it('threads: threadId and ifExists, metadata search and count, update, copy, updateState, delete', async () => {
    const threadId = crypto.randomUUID();
    const created = await client.threads.create({ threadId, metadata: { agent_id: otherAgentId, team: 'blue' } });
    expect(created.thread_id).toBe(threadId);
    expect(await statusOf(client.threads.create({ threadId }))).toBe(409);
    expect((await client.threads.create({ threadId, ifExists: 'do_nothing' })).thread_id).toBe(threadId);

    const found = await client.threads.search({ metadata: { team: 'blue' } });
    expect(found.map((t) => t.thread_id)).toEqual([threadId]);
    expect(await client.threads.count({ metadata: { team: 'blue' } })).toBe(1);
    const updated = await client.threads.update(threadId, { metadata: { team: 'red' } });
    expect(updated.metadata).toMatchObject({ team: 'red' });
    expect(await client.threads.count({ metadata: { team: 'blue' } })).toBe(0);

    await client.runs.wait(threadId, otherAgentId, { input: { messages: [{ role: 'user', content: 'first' }] } });
    await client.threads.updateState(threadId, { values: { files: { '/notes.md': { content: ['hi'], created_at: '2026-01-01T00:00:00Z', modified_at: '2026-01-01T00:00:00Z' } } } });
    const state = await client.threads.getState(threadId);
    expect((state.values as { files: Record<string, unknown> }).files['/notes.md']).toMatchObject({ content: ['hi'] });

    const copy = await client.threads.copy(threadId);
    expect(copy.thread_id).not.toBe(threadId);
    const copied = await client.threads.getState(copy.thread_id);
    expect(copied.values).toEqual(state.values);
    const second = await client.runs.wait(copy.thread_id, otherAgentId, { input: { messages: [{ role: 'user', content: 'second' }] } });
    expect(lastAi(second as { messages: Message[] })).toBe('You said: second');
    expect((await client.threads.getState(threadId)).values).toEqual(state.values); // the original is untouched

    await client.threads.delete(copy.thread_id);
    expect(await statusOf(client.threads.get(copy.thread_id))).toBe(404);
  });

  it('runs: create in the background, join, joinStream, get, list, wait, delete; ifNotExists creates the thread', async () => {
    const threadId = crypto.randomUUID();
    const run = await client.runs.create(threadId, otherAgentId, { input: { messages: [{ role: 'user', content: 'background' }] }, ifNotExists: 'create', metadata: { source: 'sdk' } });
    expect(run.thread_id).toBe(threadId);
    const joined = (await client.runs.join(threadId, run.run_id)) as { messages: Message[] };
    expect(lastAi(joined)).toBe('You said: background');
    const replay = await drain(client.runs.joinStream(threadId, run.run_id) as AsyncIterable<Chunk>);
    expect(replay[0]!.event).toBe('metadata');
    const got = await client.runs.get(threadId, run.run_id);
    expect(got.status).toBe('success');
    expect(got.metadata).toMatchObject({ source: 'sdk' });
    expect((await client.runs.list(threadId)).map((r) => r.run_id)).toEqual([run.run_id]);
    await client.runs.delete(threadId, run.run_id);
    expect(await client.runs.list(threadId)).toEqual([]);
    expect(await statusOf(client.runs.cancel(threadId, run.run_id))).toBe(404);
  });

  it('interruptBefore pauses at a breakpoint; input null continues from it', async () => {
    const thread = await client.threads.create({ metadata: { assistant_id: otherAgentId } });
    const pausedResult = (await client.runs.wait(thread.thread_id, otherAgentId, { input: { messages: [{ role: 'user', content: 'wait for it' }] }, interruptBefore: '*' })) as Record<string, unknown>;
    // As LangGraph answers a run that stopped at a breakpoint: a pause with no interrupt value.
    expect(pausedResult.__interrupt__).toEqual([]);
    expect(((await client.runs.join(thread.thread_id, (await client.runs.list(thread.thread_id))[0]!.run_id)) as Record<string, unknown>).__interrupt__).toEqual([]);
    const paused = await client.threads.getState(thread.thread_id);
    expect(paused.next.length).toBeGreaterThan(0);
    // The thread names the task it stopped before, with no interrupt value, as LangGraph's does.
    expect(paused.tasks.map((t) => t.name)).toEqual(paused.next);
    const stopped = await client.threads.get(thread.thread_id);
    expect(stopped.status).toBe('interrupted');
    expect(stopped.interrupts).toEqual(Object.fromEntries(paused.tasks.map((t) => [t.id, []])));
    const done = (await client.runs.wait(thread.thread_id, otherAgentId, { input: null })) as { messages: Message[]; __interrupt__?: unknown };
    expect(done.__interrupt__).toBeUndefined();
    expect(lastAi(done)).toBe('You said: wait for it');
    expect((await client.threads.getState(thread.thread_id)).next).toEqual([]);
  });

  it('bad input is refused with a 4xx that names it, and nothing starts', async () => {
    const thread = await client.threads.create({ metadata: { assistant_id: agentId } });
    const refused = async (promise: Promise<unknown>) => {
      try {
        await promise;
      } catch (error) {
        return { status: (error as { status: number }).status, message: (error as Error).message };
      }
      throw new Error('accepted');
    };
    const stream = (options: Record<string, unknown>, assistant = agentId) => drain(client.runs.stream(thread.thread_id, assistant, options as never) as AsyncIterable<Chunk>);
    const events = await refused(stream({ input: { messages: [{ role: 'user', content: 'x' }] }, streamMode: ['events'] }));
    expect(events.status).toBe(422);
    expect(events.message).toContain('stream mode \\"events\\" is not served');
    expect((await refused(stream({ input: { messages: [{ role: 'user', content: 'x' }] }, streamMode: ['nonsense'] }))).message).toContain('unknown stream mode');
    const wrong = await refused(stream({ input: { messages: [{ role: 'user', content: 'x' }] } }, otherAgentId));
    expect(wrong.status).toBe(422);
    expect(wrong.message).toContain("must be the thread's agent");
    const resume = await refused(stream({ command: { resume: { decisions: [{ type: 'approve' }] } } }));
    expect(resume.status).toBe(409);
    expect(resume.message).toContain('thread_not_interrupted');
    const unbound = await client.threads.create();
    expect((await refused(client.runs.wait(unbound.thread_id, 'no-such-agent', { input: { messages: [{ role: 'user', content: 'x' }] } }))).status).toBe(404);
    expect((await refused(client.runs.stream(thread.thread_id, agentId, { input: { messages: [], files: {} } } as never).next())).message).toContain('input.files');
    expect(await client.runs.list(thread.thread_id)).toEqual([]);
    expect((await client.threads.get(thread.thread_id)).status).toBe('idle');
    expect((await client.threads.get(unbound.thread_id) as unknown as { agent_id: string | null }).agent_id).toBeNull();
  });
});
