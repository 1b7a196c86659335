// The hosted REST contract in its current form beside the first one: `input.messages` as well as
// top-level `messages` (both and different: 422 naming both), resumes with or without placeholder
// messages, and the background run (`POST …/runs`) joinable on the existing stream.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect, joinRun } from '../../src/client/stream.js';
import { startBearerToolServer, type ToolServerFixture } from '../support/mcp.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent, createThread, lastAiText, lastValues, run } from '../runtime/support.js';

const TOKEN = 'hosted-forms-token';
let server: TestServer;
let tools: ToolServerFixture;
let agentId: string;

beforeAll(async () => {
  [server, tools] = await Promise.all([startTestServer(), startBearerToolServer(TOKEN)]);
  await server.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'calc', url: tools.url, headers: [{ key: 'Authorization', value: `Bearer ${TOKEN}` }] } });
  agentId = await createAgent(server, { tools: { tools: [{ name: 'add', mcp_server_url: tools.url }], interrupt_config: { [`${tools.url}::add`]: true } } });
});
afterAll(async () => {
  await Promise.all([server?.close(), tools?.close()]);
});

const post = (path: string, body: unknown) =>
  fetch(`${server.url}/v1/deepagents${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': server.adminKey }, body: JSON.stringify(body) });
const runsOf = async (threadId: string) => (await server.client.GET('/v1/deepagents/threads/{thread_id}/runs', { params: { path: { thread_id: threadId } } })).data!;

describe('hosted run bodies, current form', () => {
  it('input.messages runs like messages; sending both the same is fine', async () => {
    const threadId = await createThread(server, agentId);
    const nested = await run(server, threadId, { agent_id: agentId, input: { messages: [{ role: 'user', content: 'nested form' }] } });
    expect(lastAiText(lastValues(nested.events))).toBe('You said: nested form');
    const same = [{ role: 'user' as const, content: 'both forms' }];
    const both = await run(server, threadId, { agent_id: agentId, messages: same, input: { messages: same } });
    expect(lastAiText(lastValues(both.events))).toBe('You said: both forms');
  });

  it('both forms that differ are a 422 naming both, and nothing starts', async () => {
    const threadId = await createThread(server, agentId);
    const res = await post(`/threads/${threadId}/runs/stream`, {
      agent_id: agentId,
      messages: [{ role: 'user', content: 'one' }],
      input: { messages: [{ role: 'user', content: 'two' }] },
    });
    expect(res.status).toBe(422);
    const body = (await res.json()) as { detail: string };
    expect(body.detail).toContain('both `messages` and `input.messages`');
    expect(await runsOf(threadId)).toEqual([]);
  });

  it('resumes with a placeholder message, or with none', async () => {
    for (const placeholder of [{ messages: [{ role: 'system', content: '' }] }, { input: { messages: [{ role: 'system', content: '' }] } }, {}]) {
      const threadId = await createThread(server, agentId);
      const paused = await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: '/call add {"a": 1, "b": 2}' }], stream_mode: ['values'] });
      expect(lastValues(paused.events).__interrupt__).toBeDefined();
      const resumed = await run(server, threadId, { agent_id: agentId, ...placeholder, command: { resume: { decisions: [{ type: 'approve' }] } } } as never);
      expect(lastAiText(lastValues(resumed.events))).toBe('Done.\nadd: 3');
    }
  });

  it('POST …/runs starts a run in the background: answered at once, joinable, readable', async () => {
    const threadId = await createThread(server, agentId);
    const res = await post(`/threads/${threadId}/runs`, { agent_id: agentId, input: { messages: [{ role: 'user', content: 'in the background' }] } });
    expect(res.status).toBe(200);
    const started = (await res.json()) as { run_id: string; status: string };
    expect(['pending', 'running', 'success']).toContain(started.status);
    expect(res.headers.get('content-location')).toBe(`/v1/deepagents/threads/${threadId}/runs/${started.run_id}`);
    const events = await collect(await joinRun({ baseUrl: server.url, apiKey: server.adminKey, threadId, runId: started.run_id }));
    expect(lastAiText(lastValues(events))).toBe('You said: in the background');
    const read = await server.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}', { params: { path: { thread_id: threadId, run_id: started.run_id } } });
    expect(read.data!.status).toBe('success');
  });
});
