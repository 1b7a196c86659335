// useStream's subagent view (the SDK's headless StreamManager, the logic under the React hook) on
// Hangar's stream of a deep agent whose two subagents run in parallel and wait for approval: each
// subagent is matched to its `task` call from the `tools:<id>` namespaces, runs, and holds its own
// messages; the conversation holds only the main agent's, so the `task` calls are not completed.
import { Client } from '@langchain/langgraph-sdk';
import { MessageTupleManager, StreamManager } from '@langchain/langgraph-sdk/ui';
import { getToolCallsWithResults } from '@langchain/langgraph-sdk/utils';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent } from '../runtime/support.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

type State = { messages?: { type: string; id?: string; tool_calls?: { name: string; id?: string; args: Record<string, unknown> }[] }[] };

it('files each parallel subagent under its task call while both wait for approval', { timeout: 120_000 }, async () => {
  const agentId = await createAgent(server, {
    tools: { tools: [], interrupt_config: { write_file: true } },
    subagents: [{ name: 'writer', description: 'Writes files', instructions: 'Write.' }],
  });
  const client = new Client({ apiUrl: `${server.url}/v1/deepagents`, defaultHeaders: { 'X-Api-Key': server.adminKey }, callerOptions: { maxRetries: 0 } });
  const thread = await client.threads.create();
  const write = (file_path: string) => `/call write_file ${JSON.stringify({ file_path, content: file_path })}`;
  const task = (description: string) => `/call task ${JSON.stringify({ description, subagent_type: 'writer' })}`;

  const manager = new StreamManager(new MessageTupleManager(), { throttle: false, filterSubagentMessages: true });
  await manager.start(
    async (signal) =>
      client.runs.stream(thread.thread_id, agentId, {
        input: { messages: [{ type: 'human', content: `${task(write('/one.txt'))}\n${task(write('/two.txt'))}` }] },
        streamMode: ['values', 'messages-tuple', 'updates'],
        streamSubgraphs: true,
        signal,
      }) as never,
    {
      getMessages: (values: State) => values.messages ?? [],
      setMessages: (values: State, messages: State['messages']) => ({ ...values, messages }),
      initialValues: {},
      callbacks: {},
    } as never,
  );
  expect(manager.error).toBeUndefined();

  // The conversation: the request and the main agent's two `task` calls, not yet answered.
  const messages = ((manager.values as State | null)?.messages ?? []) as never[];
  const calls = getToolCallsWithResults(messages);
  expect(calls.map((c) => [c.call.name, c.state])).toEqual([
    ['task', 'pending'],
    ['task', 'pending'],
  ]);
  expect((messages as State['messages'])!.map((m) => m.type)).toEqual(['human', 'ai']);

  // Each subagent: matched to its own call, running, with its own write_file call.
  const subagents = manager.getSubagents();
  expect(subagents.size).toBe(2);
  for (const [i, file] of ['/one.txt', '/two.txt'].entries()) {
    const sub = subagents.get(calls[i]!.call.id!)!;
    expect(sub.status).toBe('running');
    expect(sub.namespace).toHaveLength(1);
    expect(sub.namespace[0]).not.toBe(calls[i]!.call.id); // a pregel task id, matched by description
    expect(sub.toolCalls.map((c) => [c.call.name, c.call.args.file_path])).toEqual([['write_file', file]]);
  }
});
