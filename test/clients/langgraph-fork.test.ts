// Running from a past checkpoint (LangGraph's `checkpoint` / `checkpointId` on a run): what chat UIs
// do to edit a message and regenerate from it. Driven through the official `@langchain/langgraph-sdk`
// against a real server and database (the model is Hangar's built-in `scripted` one).
import { Client, type ThreadState } from '@langchain/langgraph-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent } from '../runtime/support.js';
import { failure, human } from './sdk-support.js';

let server: TestServer;
let client: Client;
let agentId: string;

beforeAll(async () => {
  server = await startTestServer();
  agentId = await createAgent(server);
  client = new Client({ apiUrl: `${server.url}/v1/deepagents`, defaultHeaders: { 'X-Api-Key': server.adminKey }, callerOptions: { maxRetries: 0 } });
});
afterAll(async () => {
  await server?.close();
});

type Values = { messages?: { type: string; content: unknown }[] };
const humans = (state: { values: unknown }) => ((state.values as Values).messages ?? []).filter((m) => m.type === 'human').map((m) => m.content);

/** The oldest state of `history` (newest first) holding a human message `content`: useStream's `firstSeenState`. */
function firstSeen(history: ThreadState[], content: string): ThreadState {
  const state = history.findLast((s) => humans(s).includes(content));
  if (!state) throw new Error(`no state holds ${content}`);
  return state;
}

describe('LangGraph SDK: runs from a past checkpoint', () => {
  it('editing an earlier message forks the thread there; the history holds both branches', async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, agentId, human('one'));
    await client.runs.wait(thread.thread_id, agentId, human('two'));
    const before = await client.threads.getHistory(thread.thread_id);
    const edited = firstSeen(before, 'two');
    expect(edited.parent_checkpoint).not.toBeNull();

    // Edit "two": run from the state before it (what useStream's submit(values, {checkpoint}) sends).
    const result = (await client.runs.wait(thread.thread_id, agentId, { ...human('two, edited'), checkpoint: edited.parent_checkpoint! })) as Values;
    expect(humans({ values: result })).toEqual(['one', 'two, edited']);
    const state = await client.threads.getState(thread.thread_id);
    expect(humans(state)).toEqual(['one', 'two, edited']);
    expect(state.parent_checkpoint?.checkpoint_id).toBe(edited.parent_checkpoint!.checkpoint_id);

    // Both branches stay: the old "two" and the new one share their parent.
    const after = await client.threads.getHistory(thread.thread_id);
    expect(after).toHaveLength(before.length + 1);
    const siblings = after.filter((s) => s.parent_checkpoint?.checkpoint_id === edited.parent_checkpoint!.checkpoint_id);
    expect(siblings.map(humans)).toEqual([
      ['one', 'two, edited'],
      ['one', 'two'],
    ]);
    // The old branch is still readable as it was.
    expect(humans(await client.threads.getState(thread.thread_id, edited.checkpoint.checkpoint_id!))).toEqual(['one', 'two']);
  });

  it('the first message of a thread can be edited too (its state has a parent), by checkpoint or by checkpointId', async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, agentId, human('first'));
    await client.runs.wait(thread.thread_id, agentId, human('second'));
    const history = await client.threads.getHistory(thread.thread_id);
    const root = firstSeen(history, 'first').parent_checkpoint;
    expect(root).not.toBeNull();
    expect((await client.threads.getState(thread.thread_id, root!.checkpoint_id!)).values).toEqual({});

    const chunks: { event: string; data: unknown }[] = [];
    for await (const chunk of client.runs.stream(thread.thread_id, agentId, { ...human('first, edited'), checkpointId: root!.checkpoint_id!, streamMode: 'values' })) chunks.push(chunk);
    expect(chunks.map((c) => c.event)).not.toContain('error');
    expect(humans(await client.threads.getState(thread.thread_id))).toEqual(['first, edited']);
    const after = await client.threads.getHistory(thread.thread_id);
    expect(after.filter((s) => s.parent_checkpoint?.checkpoint_id === root!.checkpoint_id).map(humans)).toEqual([['first, edited'], ['first']]);
  });

  it('a bad checkpoint is refused before any run starts', async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, agentId, human('hello'));
    const head = await client.threads.getState(thread.thread_id);
    const runsBefore = (await client.runs.list(thread.thread_id)).length;
    const missing = await failure(client.runs.wait(thread.thread_id, agentId, { ...human('x'), checkpointId: '1f000000-0000-6000-8000-000000000000' }));
    expect(missing).toMatchObject({ status: 404, message: expect.stringContaining('checkpoint') });
    const subgraph = await failure(client.runs.wait(thread.thread_id, agentId, { ...human('x'), checkpoint: { checkpoint_id: head.checkpoint.checkpoint_id!, checkpoint_ns: 'tools:abc', checkpoint_map: null } }));
    expect(subgraph).toMatchObject({ status: 422, message: expect.stringContaining('checkpoint_ns') });
    // Nothing waits at the end of a run: input null there would run nothing.
    const atRest = await failure(client.runs.wait(thread.thread_id, agentId, { input: null, checkpointId: head.checkpoint.checkpoint_id! }));
    expect(atRest).toMatchObject({ status: 422, message: expect.stringContaining('nothing next') });
    const command = await failure(client.runs.wait(thread.thread_id, agentId, { command: { resume: { decisions: [{ type: 'approve' }] } }, checkpointId: head.checkpoint.checkpoint_id! }));
    expect(command).toMatchObject({ status: 422, message: expect.stringContaining('command') });
    expect((await client.runs.list(thread.thread_id)).length).toBe(runsBefore);
    expect((await client.threads.getState(thread.thread_id)).checkpoint.checkpoint_id).toBe(head.checkpoint.checkpoint_id);
  });
});
