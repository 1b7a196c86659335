// Streamed runs end to end over real HTTP/SSE with the offline `scripted` model: event order and
// names per stream mode, files, memories across threads, subagents, continuation across runs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent, createThread, lastAiText, lastValues, run } from './support.js';

let server: TestServer;
let agentId: string;

beforeAll(async () => {
  server = await startTestServer();
  agentId = await createAgent(server);
});
afterAll(async () => {
  await server?.close();
});

describe('streamed runs', () => {
  it('default mode: metadata first, then values with messages, files and tools; ids increase', async () => {
    const threadId = await createThread(server, agentId);
    const { stream, events } = await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: 'hello there' }] });
    expect(stream.response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(stream.location).toBe(`/v1/deepagents/threads/${threadId}/runs/${stream.runId}`);
    expect(events[0]).toMatchObject({ event: 'metadata', data: { run_id: stream.runId, attempt: 1 } });
    expect(new Set(events.slice(1).map((e) => e.event))).toEqual(new Set(['values']));
    const ids = events.map((e) => Number(e.id));
    expect(ids).toEqual(ids.map((_, i) => i + 1));
    const values = lastValues(events);
    expect(values).toHaveProperty('files');
    expect(lastAiText(values)).toBe('You said: hello there');
    const tools = values.tools as { name: string; description: string }[];
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['ls', 'read_file', 'write_file', 'task']));
    // Every values event, including the first (before any model call), names the same tools.
    for (const e of events.filter((x) => x.event === 'values')) expect((e.data as { tools: unknown }).tools).toEqual(tools);

    const thread = await server.client.GET('/v1/deepagents/threads/{thread_id}', { params: { path: { thread_id: threadId } } });
    expect(thread.data!.status).toBe('idle');
    const runRecord = await server.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}', {
      params: { path: { thread_id: threadId, run_id: stream.runId! } },
    });
    expect(runRecord.data).toMatchObject({ status: 'success', attempt: 1, assistant_id: agentId });
  });

  it('updates and messages-tuple: node-keyed updates with usage, token chunks with metadata', async () => {
    const threadId = await createThread(server, agentId);
    const { stream, events } = await run(server, threadId, {
      agent_id: agentId,
      messages: [{ role: 'user', content: 'one two three' }],
      stream_mode: ['updates', 'messages-tuple'],
    });
    expect(events[0]!.event).toBe('metadata');
    expect(new Set(events.slice(1).map((e) => e.event))).toEqual(new Set(['updates', 'messages']));
    const model = events.filter((e) => e.event === 'updates' && (e.data as Record<string, unknown>).model_request);
    expect(model).toHaveLength(1);
    const reply = ((model[0]!.data as Record<string, { messages: Record<string, unknown>[] }>).model_request!.messages[0])!;
    expect(reply).toMatchObject({ type: 'ai', content: 'You said: one two three', usage_metadata: { output_tokens: 5 } });
    expect((reply.usage_metadata as { input_tokens: number }).input_tokens).toBeGreaterThan(3);
    expect(reply.response_metadata).toMatchObject({ model_name: 'demo' });
    // A node without a state change appears with null.
    expect(events.some((e) => e.event === 'updates' && Object.values(e.data as Record<string, unknown>).includes(null))).toBe(true);

    const tokens = events.filter((e) => e.event === 'messages').map((e) => e.data as [Record<string, unknown>, Record<string, unknown>]);
    const aiTokens = tokens.filter(([chunk]) => chunk.type === 'AIMessageChunk');
    expect(aiTokens.map(([chunk]) => chunk.content).join('')).toBe('You said: one two three');
    expect(aiTokens.length).toBe(5);
    expect(aiTokens[0]![1]).toMatchObject({
      langgraph_node: 'model_request',
      ls_provider: 'scripted',
      ls_model_name: 'demo',
      run_id: stream.runId,
      thread_id: threadId,
      assistant_id: agentId,
    });
  });

  it('all three modes interleave after metadata', async () => {
    const threadId = await createThread(server, agentId);
    const { events } = await run(server, threadId, {
      agent_id: agentId,
      messages: [{ role: 'user', content: 'hi' }],
      stream_mode: ['values', 'updates', 'messages-tuple'],
    });
    expect(events[0]!.event).toBe('metadata');
    expect(events.filter((e) => e.event === 'metadata')).toHaveLength(1);
    expect(new Set(events.map((e) => e.event))).toEqual(new Set(['metadata', 'values', 'updates', 'messages']));
    // The model's update comes after its tokens, and a values event follows the update.
    const lastToken = events.map((e) => e.event).lastIndexOf('messages');
    const update = events.findIndex((e) => e.event === 'updates' && (e.data as Record<string, unknown>).model_request);
    expect(update).toBeGreaterThan(lastToken);
    expect(events.slice(update).some((e) => e.event === 'values')).toBe(true);
  });

  it('a tool call and its answer; a file written by the agent appears in values.files', async () => {
    const threadId = await createThread(server, agentId);
    const { events } = await run(server, threadId, {
      agent_id: agentId,
      messages: [{ role: 'user', content: '/call write_file {"file_path": "/notes/today.txt", "content": "buy milk"}' }],
    });
    const values = lastValues(events);
    expect((values.files as Record<string, { content: unknown }>)['/notes/today.txt']).toMatchObject({ content: 'buy milk' });
    expect(lastAiText(values)).toMatch(/^Done\.\nwrite_file: /);
  });

  it('the definition tree is readable and read-only; the conversation continues across runs', async () => {
    const threadId = await createThread(server, agentId);
    const first = await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: '/call read_file {"file_path": "/agent/AGENTS.md"}' }] });
    expect(lastAiText(lastValues(first.events))).toContain('You are a test agent.');
    const second = await run(server, threadId, {
      agent_id: agentId,
      messages: [{ role: 'user', content: '/call write_file {"file_path": "/agent/AGENTS.md", "content": "evil"}' }],
    });
    const values = lastValues(second.events);
    expect(lastAiText(values)).toMatch(/read-only|denied|permission/i);
    // Both runs' messages are in the thread: 2 human, 2 tool calls, 2 tool results, 2 answers.
    expect((values.messages as unknown[]).length).toBe(8);
  });

  it('/memories/ written in one thread is read in another thread of the same agent', async () => {
    const a = await createThread(server, agentId, { skip_memory_write_protection: true });
    await run(server, a, { agent_id: agentId, messages: [{ role: 'user', content: '/call write_file {"file_path": "/memories/prefs.md", "content": "likes tea"}' }] });
    const b = await createThread(server, agentId);
    const { events } = await run(server, b, { agent_id: agentId, messages: [{ role: 'user', content: '/call read_file {"file_path": "/memories/prefs.md"}' }] });
    expect(lastAiText(lastValues(events))).toContain('likes tea');
  });

  it('a subagent runs through the task tool; with stream_subgraphs its events are named <mode>|<ns>', async () => {
    const withSub = await createAgent(server, {
      subagents: [{ name: 'researcher', description: 'Looks things up', instructions: 'You research.' }],
    });
    const threadId = await createThread(server, withSub);
    const { events } = await run(server, threadId, {
      agent_id: withSub,
      messages: [{ role: 'user', content: '/call task {"description": "find the answer", "subagent_type": "researcher"}' }],
      stream_mode: ['updates'],
      stream_subgraphs: true,
    });
    const sub = events.filter((e) => e.event.startsWith('updates|'));
    expect(sub.length).toBeGreaterThan(0);
    expect(sub[0]!.event).toMatch(/^updates\|tools:[0-9a-f-]+$/);
    // The last model update (the approval middleware's after-model node, a no-op here, may follow it).
    const last = events.filter((e) => e.event === 'updates' && 'model_request' in (e.data as object)).at(-1)!.data as { model_request: { messages: { content: string }[] } };
    expect(last.model_request.messages[0]!.content).toBe('Done.\ntask: You said: find the answer');

    // Without stream_subgraphs the subagent's events stay out of the stream.
    const quiet = await run(server, await createThread(server, withSub), {
      agent_id: withSub,
      messages: [{ role: 'user', content: '/call task {"description": "again", "subagent_type": "researcher"}' }],
      stream_mode: ['updates'],
    });
    expect(quiet.events.some((e) => e.event.includes('|'))).toBe(false);
  });
});
