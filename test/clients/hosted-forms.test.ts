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

describe('tool servers, as the hosted SDK uses them', () => {
  it('lists a server’s tools with paste-ready tools.json entries', async () => {
    const servers = (await server.client.GET('/v1/deepagents/mcp-servers')).data!;
    const calc = servers.find((s) => s.url === tools.url)!;
    expect(calc).not.toHaveProperty('oauth_mode');
    const res = await fetch(`${server.url}/v1/deepagents/mcp-servers/${calc.id}/tools?force_refresh=true`, { headers: { 'x-api-key': server.adminKey } });
    expect(res.status).toBe(200);
    const listed = (await res.json()) as { tools: { name: string; description: string; input_schema: { properties?: object }; tools_json_entry: unknown }[] };
    const add = listed.tools.find((t) => t.name === 'add')!;
    expect(add.description).toBe('Add two numbers');
    expect(add.input_schema.properties).toMatchObject({ a: { type: 'number' }, b: { type: 'number' } });
    expect(add.tools_json_entry).toEqual({ name: 'add', mcp_server_url: tools.url, mcp_server_name: 'calc' });
    const viewer = await server.createKey({ role: 'viewer' });
    const refused = await fetch(`${server.url}/v1/deepagents/mcp-servers/${calc.id}/tools`, { headers: { 'x-api-key': viewer } });
    expect(refused.status).toBe(403);
  });

  it('oauth-provider answers 409 for a server without OAuth; per_user_dynamic_client is accepted; unknown servers are 404 (deleting one: 204)', async () => {
    const calc = (await server.client.GET('/v1/deepagents/mcp-servers')).data!.find((s) => s.url === tools.url)!;
    const attach = await post(`/mcp-servers/${calc.id}/oauth-provider`, {});
    expect(attach.status).toBe(409);
    expect(((await attach.json()) as { code: string }).code).toBe('mcp_server_not_oauth');
    const dynamic = await post('/mcp-servers', { name: 'dyn', url: 'https://dyn.example.test/mcp', auth_type: 'oauth', oauth_mode: 'per_user_dynamic_client' });
    // Registered as the hosted product documents it (test/oauth/dynamic-client.test.ts registers clients for it).
    expect(dynamic.status).toBe(201);
    expect(await dynamic.json()).toMatchObject({ auth_type: 'oauth', oauth_mode: 'per_user_dynamic_client', oauth_provider_id: null });
    const unknown = '00000000-0000-4000-8000-000000000000';
    expect((await post(`/mcp-servers/${unknown}/oauth-provider`, {})).status).toBe(404);
    const del = await fetch(`${server.url}/v1/deepagents/mcp-servers/${unknown}`, { method: 'DELETE', headers: { 'x-api-key': server.adminKey } });
    expect(del.status).toBe(204);
  });
});

describe('agents, as the hosted SDK uses them', () => {
  it('include_files and force_refresh take 1 and 0 as well as true and false, as the hosted contract does', async () => {
    const get = (flag: string) => fetch(`${server.url}/v1/deepagents/agents/${agentId}?include_files=${flag}`, { headers: { 'x-api-key': server.adminKey } });
    const one = await get('1');
    expect(one.status).toBe(200);
    expect(Object.keys(((await one.json()) as { files: object }).files)).toContain('agent.json');
    const zero = await get('0');
    expect(zero.status).toBe(200);
    expect((await zero.json()) as object).not.toHaveProperty('files');
    const created = await fetch(`${server.url}/v1/deepagents/agents?include_files=1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': server.adminKey },
      body: JSON.stringify({ name: 'flags', runtime: { model: { model_id: 'scripted:demo' } } }),
    });
    expect(created.status).toBe(201);
    expect(((await created.json()) as { files: object }).files).toHaveProperty('AGENTS.md');
    const calc = (await server.client.GET('/v1/deepagents/mcp-servers')).data!.find((s) => s.url === tools.url)!;
    const listed = await fetch(`${server.url}/v1/deepagents/mcp-servers/${calc.id}/tools?force_refresh=1`, { headers: { 'x-api-key': server.adminKey } });
    expect(listed.status).toBe(200);
    expect((await get('yes')).status).toBe(422);
  });

  it('clone makes a new agent with the same tree, renamed when asked', async () => {
    const original = (await server.client.GET('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: agentId }, query: { include_files: 'true' } } })).data!;
    const res = await post(`/agents/${agentId}/clone`, { name: 'the copy' });
    expect(res.status, await res.clone().text()).toBe(201);
    const copy = (await res.json()) as { id: string; name: string };
    expect(copy.id).not.toBe(agentId);
    expect(copy.name).toBe('the copy');
    const read = (await server.client.GET('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: copy.id }, query: { include_files: 'true' } } })).data!;
    expect(read.tools).toEqual(original.tools);
    expect(read.instructions).toBe(original.instructions);
    expect(Object.keys(read.files!).sort()).toEqual(Object.keys(original.files!).sort());
    expect((await post('/agents/00000000-0000-4000-8000-000000000000/clone', {})).status).toBe(404);
  });
});
