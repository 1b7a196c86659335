// Human approval of tool calls end to end: an agent whose tools.json asks for approval of a real MCP
// tool pauses before calling it; resumes approve, edit, reject and respond; resolve-interrupt; wrong
// answers are refused and leave the thread waiting.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SseEvent } from '../../src/client/stream.js';
import { startBearerToolServer, type ToolServerFixture } from '../support/mcp.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent, createThread, lastAiText, lastValues, run, start } from '../runtime/support.js';

const TOKEN = 'approval-test-token';
let server: TestServer;
let tools: ToolServerFixture;
let agentId: string;

beforeAll(async () => {
  [server, tools] = await Promise.all([startTestServer(), startBearerToolServer(TOKEN)]);
  const reg = await server.client.POST('/v1/deepagents/mcp-servers', {
    body: { name: 'calc', url: tools.url, headers: [{ key: 'Authorization', value: `Bearer ${TOKEN}` }] },
  });
  expect(reg.response.status).toBe(201);
  agentId = await createAgent(server, {
    tools: {
      tools: [
        { name: 'add', mcp_server_url: tools.url },
        { name: 'whoami', mcp_server_url: tools.url },
      ],
      // A trailing slash and a display-name part: both ignored when matching.
      interrupt_config: { [`${tools.url}/::add::calc`]: true, [`${tools.url}::whoami`]: false },
    },
  });
});
afterAll(async () => {
  await Promise.all([server?.close(), tools?.close()]);
});

const path = (threadId: string) => ({ params: { path: { thread_id: threadId } } });

/** A thread paused before `add {a: 2, b: 40}`; returns its id and the events of the pausing run. */
async function pausedThread(): Promise<{ threadId: string; events: SseEvent[]; runId: string }> {
  const threadId = await createThread(server, agentId);
  const { stream, events } = await run(server, threadId, {
    agent_id: agentId,
    messages: [{ role: 'user', content: '/call add {"a": 2, "b": 40}' }],
    stream_mode: ['updates', 'values'],
  });
  return { threadId, events, runId: stream.runId! };
}

const expectedRequest = (url: string) => ({
  action_requests: [{ name: 'add', args: { a: 2, b: 40 }, description: expect.stringContaining(`add of ${url}`) }],
  review_configs: [{ action_name: 'add', allowed_decisions: ['approve', 'edit', 'reject', 'respond'] }],
});

async function resume(threadId: string, decisions: unknown[], agent = agentId) {
  return run(server, threadId, { agent_id: agent, messages: [{ role: 'user', content: 'placeholder' }], command: { resume: { decisions } } } as never);
}

describe('approval of tool calls', () => {
  it('an approval is applied once: a retried resume gets the run the first one started, the tool runs once', async () => {
    const before = tools.calls.length;
    const { threadId } = await pausedThread();
    const first = await resume(threadId, [{ type: 'approve' }]);
    // The client lost the answer and sends the same resume again.
    const retry = await resume(threadId, [{ type: 'approve' }]);
    expect(retry.stream.runId).toBe(first.stream.runId);
    expect(retry.events).toEqual(first.events);
    expect(tools.calls.slice(before)).toEqual([{ name: 'add', args: { a: 2, b: 40 } }]);
    const runs = await server.client.GET('/v1/deepagents/threads/{thread_id}/runs', path(threadId));
    expect(runs.data!).toHaveLength(2);
    // A different answer to the same (already answered) pause is refused.
    const other = await start(server, threadId, { agent_id: agentId, command: { resume: { decisions: [{ type: 'reject' }] } } } as never);
    expect(other.status).toBe(409);
    expect(other.error).toMatchObject({ code: 'thread_not_interrupted' });
    const recorded = await server.hangar.database.pool.query('SELECT run_id FROM run_approvals WHERE thread_id = $1', [threadId]);
    expect(recorded.rows).toEqual([{ run_id: first.stream.runId }]);
  });

  it('a retried resume keyed by interrupt id gets the run the first one started, even when that run paused again', async () => {
    // The main agent's `add` pauses; once approved, the subagent its `task` call starts pauses on its own `add`.
    const agent = await createAgent(server, {
      tools: { tools: [{ name: 'add', mcp_server_url: tools.url }], interrupt_config: { [`${tools.url}::add`]: true } },
      subagents: [{ name: 'careful', description: 'Adds with approval', instructions: 'Add.', tools: { tools: [{ name: 'add', mcp_server_url: tools.url }], interrupt_config: {} } }],
    } as never);
    const threadId = await createThread(server, agent);
    const task = `/call task ${JSON.stringify({ description: '/call add {"a": 3, "b": 4}', subagent_type: 'careful' })}`;
    await run(server, threadId, { agent_id: agent, messages: [{ role: 'user', content: `/call add {"a": 2, "b": 40}\n${task}` }] });
    const pending = async () => {
      const thread = await server.client.GET('/v1/deepagents/threads/{thread_id}', path(threadId));
      expect(thread.data!.status).toBe('interrupted');
      return Object.values(thread.data!.interrupts as Record<string, { id: string; value: { action_requests: { args: unknown }[] } }[]>).flat();
    };
    const [first] = await pending();
    expect(first!.value.action_requests[0]!.args).toEqual({ a: 2, b: 40 });
    const before = tools.calls.length;
    const answer = { [first!.id]: { decisions: [{ type: 'approve' }] } };
    const resumed = await run(server, threadId, { agent_id: agent, command: { resume: answer } } as never);
    // The first resume's run went on and paused on the subagent's call: a new pause, not yet answered.
    const [second] = await pending();
    expect(second!.id).not.toBe(first!.id);
    expect(second!.value.action_requests[0]!.args).toEqual({ a: 3, b: 4 });

    // The client lost the first answer and sends the same resume again: the run it started, not a 422.
    const retry = await run(server, threadId, { agent_id: agent, command: { resume: answer } } as never);
    expect(retry.stream.status).toBe(200);
    expect(retry.stream.runId).toBe(resumed.stream.runId);
    expect(retry.events).toEqual(resumed.events);
    expect(tools.calls.slice(before)).toEqual([{ name: 'add', args: { a: 2, b: 40 } }]);
    expect((await pending()).map((i) => i.id)).toEqual([second!.id]);
    const runs = await server.client.GET('/v1/deepagents/threads/{thread_id}/runs', path(threadId));
    expect(runs.data!).toHaveLength(2);
  });

  it('pauses before the tool: __interrupt__ in updates and values, run success, thread interrupted; approve runs it', async () => {
    const before = tools.calls.length;
    const { threadId, events, runId } = await pausedThread();
    const update = events.find((e) => e.event === 'updates' && '__interrupt__' in (e.data as object));
    expect((update!.data as { __interrupt__: { value: unknown }[] }).__interrupt__[0]!.value).toEqual(expectedRequest(tools.url));
    const values = lastValues(events);
    expect((values.__interrupt__ as { value: unknown }[])[0]!.value).toEqual(expectedRequest(tools.url));
    expect(tools.calls.length).toBe(before);

    const runRecord = await server.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}', { params: { path: { thread_id: threadId, run_id: runId } } });
    expect(runRecord.data!.status).toBe('success');
    const thread = await server.client.GET('/v1/deepagents/threads/{thread_id}', path(threadId));
    expect(thread.data!.status).toBe('interrupted');
    // LangGraph's shape: interrupts by task id.
    expect(Object.values(thread.data!.interrupts).flat().map((i) => i.value)).toEqual([expectedRequest(tools.url)]);
    const state = await server.client.GET('/v1/deepagents/threads/{thread_id}/state', path(threadId));
    expect(state.data!.interrupts.map((i) => i.value)).toEqual([expectedRequest(tools.url)]);

    const resumed = await resume(threadId, [{ type: 'approve' }]);
    expect(lastAiText(lastValues(resumed.events))).toBe('Done.\nadd: 42');
    expect(tools.calls.slice(before)).toEqual([{ name: 'add', args: { a: 2, b: 40 } }]);
    const after = await server.client.GET('/v1/deepagents/threads/{thread_id}', path(threadId));
    expect(after.data!.status).toBe('idle');
    expect(after.data!.interrupts).toEqual({});
  });

  it('edit runs the tool with the edited arguments', async () => {
    const before = tools.calls.length;
    const { threadId } = await pausedThread();
    const resumed = await resume(threadId, [{ type: 'edit', edited_action: { args: { a: 1, b: 1 } } }]);
    expect(lastAiText(lastValues(resumed.events))).toBe('Done.\nadd: 2');
    expect(tools.calls.slice(before)).toEqual([{ name: 'add', args: { a: 1, b: 1 } }]);
  });

  it('an edit may name another tool of the agent; one it lacks is a 422 naming the tool, and the thread stays interrupted', async () => {
    const before = tools.calls.length;
    const { threadId } = await pausedThread();
    const refused = await start(server, threadId, { agent_id: agentId, command: { resume: { decisions: [{ type: 'edit', edited_action: { name: 'no_such_tool', args: {} } }] } } } as never);
    expect(refused.status).toBe(422);
    expect(refused.error).toMatchObject({ detail: expect.stringContaining('"no_such_tool"') });
    expect(JSON.stringify(refused.error)).toContain('decisions');
    expect((await server.client.GET('/v1/deepagents/threads/{thread_id}', path(threadId))).data!.status).toBe('interrupted');
    expect(tools.calls.length).toBe(before);
    // A tool the agent has may be named instead of the one asked about.
    const resumed = await resume(threadId, [{ type: 'edit', edited_action: { name: 'whoami', args: {} } }]);
    expect(lastAiText(lastValues(resumed.events))).toContain('a caller with the right token');
    expect(tools.calls.slice(before)).toEqual([{ name: 'whoami', args: {} }]);
  });

  it('an edit whose arguments do not fit the tool comes back as an error with the message only: no stack, no server paths, in thread or trace', async () => {
    const before = tools.calls.length;
    const { threadId } = await pausedThread();
    const resumed = await resume(threadId, [{ type: 'edit', edited_action: { args: { a: 'forty', b: 2 } } }]);
    expect(tools.calls.length).toBe(before);
    const reply = (lastValues(resumed.events).messages as { type: string; content: string; status: string }[]).filter((m) => m.type === 'tool').at(-1)!;
    expect(reply.status).toBe('error');
    expect(reply.content).toContain("Error invoking tool 'add'");
    expect(reply.content).toContain('did not match expected schema');
    const leaks = [/\bat \S+ \(/, /node_modules/, /file:\/\//, /\.js:\d+/, /\n\s+at /];
    for (const leak of leaks) expect(reply.content).not.toMatch(leak);
    const trace = await server.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}/trace', {
      params: { path: { thread_id: threadId, run_id: resumed.stream.runId! } },
    });
    expect(trace.response.status).toBe(200);
    const traced = JSON.stringify(trace.data);
    expect(traced).toContain('did not match expected schema');
    for (const leak of [/node_modules/, /file:\/\//, /\.js:\d+/]) expect(traced).not.toMatch(leak);
  });

  it('reject gives the model the rejection message and never calls the tool', async () => {
    const before = tools.calls.length;
    const { threadId } = await pausedThread();
    const resumed = await resume(threadId, [{ type: 'reject', message: 'not today' }]);
    expect(lastAiText(lastValues(resumed.events))).toBe('Done.\nadd: not today');
    const reply = (lastValues(resumed.events).messages as { type: string; status: string }[]).filter((m) => m.type === 'tool').at(-1)!;
    expect(reply.status).toBe('error');
    expect(tools.calls.length).toBe(before);
  });

  it("respond gives the model the reviewer's text as the tool result", async () => {
    const before = tools.calls.length;
    const { threadId } = await pausedThread();
    const resumed = await resume(threadId, [{ type: 'respond', message: '41, by hand' }]);
    const values = lastValues(resumed.events);
    expect(lastAiText(values)).toBe('Done.\nadd: 41, by hand');
    expect(tools.calls.length).toBe(before);
    // A successful tool reply (a reject is an error one), in the state as the model saw it.
    const reply = (values.messages as { type: string; content: string; status: string }[]).filter((m) => m.type === 'tool').at(-1)!;
    expect(reply).toMatchObject({ content: '41, by hand', status: 'success' });
    // No event of the run shows the in-between form.
    expect(JSON.stringify(resumed.events)).not.toContain('hangar:respond');
  });

  it('each decision of a batch applies to its own call; calls needing no approval run too', async () => {
    for (const [decisions, replies] of [
      [[{ type: 'approve' }, { type: 'respond', message: 'five' }], ['2', 'a caller with the right token', 'five']],
      [[{ type: 'reject', message: 'nope' }, { type: 'approve' }], ['nope', 'a caller with the right token', '4']],
      [[{ type: 'edit', edited_action: { args: { a: 5, b: 5 } } }, { type: 'reject' }], ['10', 'a caller with the right token', expect.stringContaining('rejected')]],
    ] as const) {
      const before = tools.calls.length;
      const threadId = await createThread(server, agentId);
      await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: '/call add {"a": 1, "b": 1}\n/call whoami {}\n/call add {"a": 2, "b": 2}' }] });
      const resumed = await resume(threadId, [...decisions]);
      const messages = lastValues(resumed.events).messages as { type: string; content: string; tool_call_id?: string; tool_calls?: { id: string }[] }[];
      const ai = messages.find((m) => m.type === 'ai')!;
      // One reply per call of the model's message, in its order, and the model answered after them.
      const byCall = ai.tool_calls!.map((c) => messages.find((m) => m.type === 'tool' && m.tool_call_id === c.id)?.content);
      expect(byCall).toEqual([...replies]);
      expect(messages.at(-1)!.type).toBe('ai');
      // The approved or edited add and whoami (which needs no approval) ran; nothing else did.
      expect(tools.calls.length - before).toBe(2);
    }
  });

  it('a tool whose rule is false runs without a pause', async () => {
    const threadId = await createThread(server, agentId);
    const { events } = await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: '/call whoami {}' }] });
    expect(lastAiText(lastValues(events))).toBe('Done.\nwhoami: a caller with the right token');
    expect((await server.client.GET('/v1/deepagents/threads/{thread_id}', path(threadId))).data!.status).toBe('idle');
  });

  it('wrong answers are refused with what is wrong, and the thread stays interrupted', async () => {
    const { threadId } = await pausedThread();
    const cases: { decisions: unknown[]; status: number; says: string }[] = [
      { decisions: [], status: 422, says: 'expected 1 decision' },
      { decisions: [{ type: 'approve' }, { type: 'approve' }], status: 422, says: 'expected 1 decision (one per action request), got 2' },
      { decisions: [{ type: 'edit' }], status: 422, says: 'edit without edited_action' },
      { decisions: [{ type: 'respond' }], status: 422, says: 'respond without message' },
      { decisions: [{ type: 'maybe' }], status: 422, says: 'type' },
    ];
    for (const c of cases) {
      const res = await start(server, threadId, { agent_id: agentId, command: { resume: { decisions: c.decisions } } } as never);
      expect(res.status, JSON.stringify(c.decisions)).toBe(c.status);
      expect(JSON.stringify(res.error)).toContain(c.says);
      const thread = await server.client.GET('/v1/deepagents/threads/{thread_id}', path(threadId));
      expect(thread.data!.status).toBe('interrupted');
    }
    const runs = await server.client.GET('/v1/deepagents/threads/{thread_id}/runs', path(threadId));
    expect(runs.data!.length).toBe(1);

    const idle = await createThread(server, agentId);
    const res = await start(server, idle, { agent_id: agentId, command: { resume: { decisions: [{ type: 'approve' }] } } } as never);
    expect(res.status).toBe(409);
    expect(res.error).toMatchObject({ code: 'thread_not_interrupted' });
  });

  it('resolve-interrupt ends the pause without running the tool; 409 when nothing is pending', async () => {
    const before = tools.calls.length;
    const { threadId } = await pausedThread();
    const resolved = await server.client.POST('/v1/deepagents/threads/{thread_id}/resolve-interrupt', path(threadId));
    expect(resolved.response.status).toBe(204);
    const thread = await server.client.GET('/v1/deepagents/threads/{thread_id}', path(threadId));
    expect(thread.data!.status).toBe('idle');
    const state = await server.client.GET('/v1/deepagents/threads/{thread_id}/state', path(threadId));
    expect(state.data!.interrupts).toEqual([]);
    const messages = state.data!.values.messages as { type: string; content: string }[];
    expect(messages.at(-1)).toMatchObject({ type: 'tool', content: expect.stringContaining('Not run') });
    expect(tools.calls.length).toBe(before);
    const again = await server.client.POST('/v1/deepagents/threads/{thread_id}/resolve-interrupt', path(threadId));
    expect(again.response.status).toBe(409);
    // The conversation goes on normally afterwards.
    const next = await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: 'hello' }] });
    expect(lastAiText(lastValues(next.events))).toBe('You said: hello');
  });

  it('subagents inherit the rules unless their own tools.json says otherwise', async () => {
    const before = tools.calls.length;
    const withSubs = await createAgent(server, {
      tools: { tools: [], interrupt_config: { [`${tools.url}::add`]: true } },
      subagents: [
        { name: 'careful', description: 'Adds with approval', instructions: 'Add.', tools: { tools: [{ name: 'add', mcp_server_url: tools.url }], interrupt_config: {} } },
        { name: 'trusted', description: 'Adds freely', instructions: 'Add.', tools: { tools: [{ name: 'add', mcp_server_url: tools.url }], interrupt_config: { [`${tools.url}::add`]: false } } },
      ],
    } as never);
    const task = (subagent: string) => `/call task ${JSON.stringify({ description: '/call add {"a": 3, "b": 4}', subagent_type: subagent })}`;

    const trusted = await createThread(server, withSubs);
    const free = await run(server, trusted, { agent_id: withSubs, messages: [{ role: 'user', content: task('trusted') }] });
    expect(lastAiText(lastValues(free.events))).toContain('add: 7');
    expect(tools.calls.length).toBe(before + 1);

    const careful = await createThread(server, withSubs);
    const paused = await run(server, careful, { agent_id: withSubs, messages: [{ role: 'user', content: task('careful') }] });
    expect(lastValues(paused.events).__interrupt__).toBeDefined();
    const thread = await server.client.GET('/v1/deepagents/threads/{thread_id}', path(careful));
    expect(thread.data!.status).toBe('interrupted');
    expect(Object.values(thread.data!.interrupts).flat()[0]!.value).toMatchObject({ action_requests: [{ name: 'add', args: { a: 3, b: 4 } }] });
    expect(tools.calls.length).toBe(before + 1);
    const resumed = await resume(careful, [{ type: 'approve' }], withSubs);
    expect(lastAiText(lastValues(resumed.events))).toContain('add: 7');
    expect(tools.calls.length).toBe(before + 2);

    // A respond inside a subagent reaches its model as the tool's (successful) result, marker-free.
    const answered = await createThread(server, withSubs);
    await run(server, answered, { agent_id: withSubs, messages: [{ role: 'user', content: task('careful') }] });
    const responded = await resume(answered, [{ type: 'respond', message: 'seven, by hand' }], withSubs);
    expect(lastAiText(lastValues(responded.events))).toContain('add: seven, by hand');
    expect(lastAiText(lastValues(responded.events))).not.toContain('hangar:respond');
    expect(tools.calls.length).toBe(before + 2);
  });
});

describe('approval requests of parallel subagents', () => {
  /** A thread paused on two approval requests at once: two `task` calls whose subagents each write a file. */
  async function twoPending(): Promise<{ agent: string; threadId: string; ids: Record<string, string> }> {
    const agent = await createAgent(server, {
      tools: { tools: [], interrupt_config: { write_file: true } },
      subagents: [{ name: 'writer', description: 'Writes files', instructions: 'Write.' }],
    });
    const threadId = await createThread(server, agent);
    const write = (file_path: string) => `/call write_file ${JSON.stringify({ file_path, content: file_path })}`;
    const task = (description: string) => `/call task ${JSON.stringify({ description, subagent_type: 'writer' })}`;
    await run(server, threadId, { agent_id: agent, messages: [{ role: 'user', content: `${task(write('/one.txt'))}\n${task(write('/two.txt'))}` }] });
    const thread = await server.client.GET('/v1/deepagents/threads/{thread_id}', path(threadId));
    expect(thread.data!.status).toBe('interrupted');
    const pending = Object.values(thread.data!.interrupts as Record<string, { id: string; value: { action_requests: { args: { file_path: string } }[] } }[]>).flat();
    expect(pending).toHaveLength(2);
    const ids = Object.fromEntries(pending.map((i) => [i.value.action_requests[0]!.args.file_path, i.id]));
    return { agent, threadId, ids };
  }

  async function files(threadId: string): Promise<string[]> {
    const thread = await server.client.GET('/v1/deepagents/threads/{thread_id}', path(threadId));
    return Object.keys(((thread.data!.values as { files?: Record<string, unknown> }).files ?? {})).sort();
  }

  it('one list of decisions cannot answer two pending requests: a 422 listing them, nothing runs', async () => {
    const { agent, threadId, ids } = await twoPending();
    for (const decisions of [[{ type: 'approve' }], [{ type: 'approve' }, { type: 'approve' }]]) {
      const res = await start(server, threadId, { agent_id: agent, command: { resume: { decisions } } } as never);
      expect(res.status, JSON.stringify(decisions)).toBe(422);
      expect(JSON.stringify(res.error)).toContain(ids['/one.txt']!);
      expect(JSON.stringify(res.error)).toContain(ids['/two.txt']!);
    }
    // Nothing ran, and the thread still waits on both.
    expect(await files(threadId)).toEqual([]);
    const thread = await server.client.GET('/v1/deepagents/threads/{thread_id}', path(threadId));
    expect(thread.data!.status).toBe('interrupted');
  });

  it('decisions keyed by interrupt id answer each request on its own; a missing answer is a 422', async () => {
    const { agent, threadId, ids } = await twoPending();
    const partial = await start(server, threadId, { agent_id: agent, command: { resume: { [ids['/one.txt']!]: { decisions: [{ type: 'approve' }] } } } } as never);
    expect(partial.status).toBe(422);
    expect(JSON.stringify(partial.error)).toContain(ids['/two.txt']!);
    const malformed = await start(server, threadId, { agent_id: agent, command: { resume: { [ids['/one.txt']!]: { decisions: [null] }, [ids['/two.txt']!]: { decisions: [{ type: 'approve' }] } } } } as never);
    expect(malformed.status).toBe(422);
    expect(await files(threadId)).toEqual([]);

    const resume = { [ids['/one.txt']!]: { decisions: [{ type: 'approve' }] }, [ids['/two.txt']!]: { decisions: [{ type: 'reject', message: 'not this one' }] } };
    await run(server, threadId, { agent_id: agent, command: { resume } } as never);
    expect(await files(threadId)).toEqual(['/one.txt']);
    const thread = await server.client.GET('/v1/deepagents/threads/{thread_id}', path(threadId));
    expect(thread.data!.status).toBe('idle');
  });
});
