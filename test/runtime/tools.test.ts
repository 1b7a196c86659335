// MCP tools in runs, against real tool servers started by the test: one that demands the stored bearer
// header, the reference server-everything over Streamable HTTP, and a server that is down.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBearerToolServer, startEverythingServer, type ToolServerFixture } from '../support/mcp.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent, createThread, lastAiText, lastValues, run } from './support.js';

const TOKEN = 'tool-server-secret-7f3a';
let server: TestServer;
let bearer: ToolServerFixture;
let everything: { url: string; close(): Promise<void> };

beforeAll(async () => {
  [server, bearer, everything] = await Promise.all([
    startTestServer({ env: { HANGAR_TOOL_CONNECT_TIMEOUT_MS: '3000' } }),
    startBearerToolServer(TOKEN),
    startEverythingServer(),
  ]);
});
afterAll(async () => {
  await Promise.all([server?.close(), bearer?.close(), everything?.close()]);
});

async function register(url: string, headers: { key: string; value: string }[] = []): Promise<void> {
  const res = await server.client.POST('/v1/deepagents/mcp-servers', { body: { name: `srv-${url}`, url, headers } });
  expect(res.response.status).toBe(201);
}

describe('tools from tool servers', () => {
  it('calls a tool with the stored bearer header; a tool the server lacks is dropped', async () => {
    await register(bearer.url, [{ key: 'Authorization', value: `Bearer ${TOKEN}` }]);
    const agentId = await createAgent(server, {
      tools: {
        tools: [
          { name: 'add', mcp_server_url: `${bearer.url}/` },
          { name: 'not_offered', mcp_server_url: bearer.url },
        ],
      },
    });
    const threadId = await createThread(server, agentId);
    const { stream, events } = await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: '/call add {"a": 2, "b": 40}' }] });
    const record = await server.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}', { params: { path: { thread_id: threadId, run_id: stream.runId! } } });
    expect(record.data!.metadata.dropped_tools).toEqual([
      { name: 'not_offered', mcp_server_url: bearer.url, reason: expect.stringContaining('does not offer a tool named "not_offered"') },
    ]);
    const values = lastValues(events);
    expect(lastAiText(values)).toBe('Done.\nadd: 42');
    expect(bearer.calls).toEqual([{ name: 'add', args: { a: 2, b: 40 } }]);
    expect(bearer.seenAuthorization.length).toBeGreaterThan(0);
    expect(bearer.seenAuthorization.every((h) => h === `Bearer ${TOKEN}`)).toBe(true);
    const toolNames = (values.tools as { name: string }[]).map((t) => t.name);
    expect(toolNames).toContain('add');
    expect(toolNames).not.toContain('not_offered');
  });

  it('calls the reference server-everything over Streamable HTTP', async () => {
    await register(everything.url);
    const agentId = await createAgent(server, { tools: { tools: [{ name: 'echo', mcp_server_url: everything.url }] } });
    const threadId = await createThread(server, agentId);
    const { events } = await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: '/call echo {"message": "over the wire"}' }] });
    expect(lastAiText(lastValues(events))).toBe('Done.\necho: Echo: over the wire');
  });

  it('a tool server that is down becomes an error the model sees; the run still succeeds', async () => {
    const down = await startBearerToolServer('x');
    const url = down.url;
    await down.close();
    await register(url);
    const agentId = await createAgent(server, { tools: { tools: [{ name: 'add', mcp_server_url: url }] } });
    const threadId = await createThread(server, agentId);
    const { stream, events } = await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: '/call add {"a": 1, "b": 1}' }] });
    expect(events.some((e) => e.event === 'error')).toBe(false);
    expect(lastAiText(lastValues(events))).toMatch(/^Done\.\nadd: Error: add failed: tool server .* is unreachable or failing/);
    const record = await server.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}', { params: { path: { thread_id: threadId, run_id: stream.runId! } } });
    expect(record.data!.status).toBe('success');
  });

  it('a subagent runs with its own model and its own tools', async () => {
    const agentId = await createAgent(server, {
      subagents: [
        {
          name: 'calculator',
          description: 'Adds numbers',
          instructions: 'You add.',
          model_id: 'scripted:calc',
          tools: { tools: [{ name: 'add', mcp_server_url: bearer.url }] },
        },
      ],
    });
    const threadId = await createThread(server, agentId);
    const { events } = await run(server, threadId, {
      agent_id: agentId,
      messages: [{ role: 'user', content: '/call task {"description": "/call add {\\"a\\": 20, \\"b\\": 3}", "subagent_type": "calculator"}' }],
      stream_mode: ['values', 'messages-tuple'],
      stream_subgraphs: true,
    });
    expect(lastAiText(lastValues(events))).toBe('Done.\ntask: Done.\nadd: 23');
    const subTokens = events.filter((e) => e.event.startsWith('messages|')).map((e) => (e.data as [unknown, Record<string, unknown>])[1]);
    expect(subTokens.some((m) => m.ls_model_name === 'calc')).toBe(true);
    expect(bearer.calls).toContainEqual({ name: 'add', args: { a: 20, b: 3 } });
    // The parent does not get the subagent's tool.
    expect((lastValues(events).tools as { name: string }[]).map((t) => t.name)).not.toContain('add');
  });
});
