// Tool names as MCP servers write them (dots, up to 128 characters, the same name on two servers)
// against what model providers take (letters, digits, `_` and `-`, at most 64 characters, each name
// once). Real MCP servers (@modelcontextprotocol/sdk); the model providers are the stand-in of
// test/fixtures/model-providers.ts (external SaaS), which refuses such names with a 400 as the real APIs do.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect } from '../../src/client/stream.js';
import { startProviderStandIn, type ProviderStandIn } from '../fixtures/model-providers.js';
import { startNamedToolServer, type ToolServerFixture } from '../support/mcp.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent, createThread, lastAiText, lastValues, run, start } from './support.js';

const LONG = `reports.${'quarterly_revenue_by_region_'.repeat(4)}v2`; // 117 characters
let server: TestServer;
let provider: ProviderStandIn;
let dotted: ToolServerFixture;
let other: ToolServerFixture;

beforeAll(async () => {
  [server, provider, dotted, other] = await Promise.all([
    startTestServer(),
    startProviderStandIn(),
    startNamedToolServer(['math.add', 'math_add', LONG, 'lookup']),
    startNamedToolServer(['lookup']),
  ]);
  for (const url of [dotted.url, other.url]) {
    const res = await server.client.POST('/v1/deepagents/mcp-servers', { body: { name: `srv-${url}`, url } });
    expect(res.response.status).toBe(201);
  }
});
afterAll(async () => {
  await Promise.all([server?.close(), provider?.close(), dotted?.close(), other?.close()]);
});

const TOOLS = () => [
  { name: 'math.add', mcp_server_url: dotted.url },
  { name: 'math_add', mcp_server_url: dotted.url },
  { name: LONG, mcp_server_url: dotted.url },
  // Two servers given the same display name: prefixed, both would be `Tools__lookup`.
  { name: 'lookup', mcp_server_url: dotted.url, mcp_server_name: 'Tools' },
  { name: 'lookup', mcp_server_url: other.url, mcp_server_name: 'Tools' },
];

describe('MCP tool names a model provider refuses', () => {
  it.each(['openai', 'anthropic'] as const)('every tool is offered to %s under a name it takes, each once: the run succeeds', async (api) => {
    const name = `${api}-names`;
    const config = await server.client.POST('/v1/deepagents/model-configs', {
      body: { name, model_id: `${api}:ok`, parameters: { base_url: api === 'openai' ? provider.openaiUrl : provider.anthropicUrl }, api_key: 'sk-stand-in' },
    });
    expect(config.response.status).toBe(201);
    const agentId = await createAgent(server, { runtime: { model: { model_id: name } }, tools: { tools: TOOLS() } });
    const threadId = await createThread(server, agentId);
    const stream = await start(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: 'hello' }] });
    expect(stream.status).toBe(200);
    const events = await collect(stream);
    expect(events.find((e) => e.event === 'error')).toBeUndefined();
    expect(lastAiText(lastValues(events))).toBe('Hello from the stand-in.');
    const offered = provider.requestsFor('ok').at(-1)!.body.tools as { name?: string; function?: { name: string } }[];
    const names = offered.map((t) => t.function?.name ?? t.name!);
    expect(new Set(names).size).toBe(names.length);
    const mcpNames = names.filter((n) => /add|reports|lookup/.test(n));
    expect(mcpNames).toHaveLength(5);
    expect(mcpNames).toContain('math_add');
    for (const n of mcpNames) expect(n).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
  });

  it('a call under the offered name reaches the tool under its own MCP name', async () => {
    const agentId = await createAgent(server, { tools: { tools: TOOLS() } });
    const threadId = await createThread(server, agentId);
    const { events } = await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: '/call math_add {"a": 2, "b": 40}' }] });
    const names = (lastValues(events).tools as { name: string }[]).map((t) => t.name);
    const long = names.find((n) => n.startsWith('reports_'))!;
    expect(long).toHaveLength(64);
    const lookups = names.filter((n) => n.startsWith('Tools__lookup'));
    expect(lookups).toHaveLength(2);
    // `math.add` would meet `math_add`: the tool that really is `math_add` keeps its name.
    expect(names).toContain('math_add');
    const dottedName = names.find((n) => /^math_add_[0-9a-f]{8}$/.test(n))!;
    expect(dottedName).toBeDefined();
    expect(lastAiText(lastValues(events))).toBe('Done.\nmath_add: math_add {"a":2,"b":40}');

    const again = await run(server, await createThread(server, agentId), {
      agent_id: agentId,
      messages: [{ role: 'user', content: `/call ${long} {"a": 1}` }],
    });
    expect(lastAiText(lastValues(again.events))).toBe(`Done.\n${long}: ${LONG} {"a":1}`);
    const third = await run(server, await createThread(server, agentId), {
      agent_id: agentId,
      messages: [{ role: 'user', content: `/call ${dottedName} {"a": 3, "b": 4}` }],
    });
    expect(lastAiText(lastValues(third.events))).toBe(`Done.\n${dottedName}: math.add {"a":3,"b":4}`);
    expect(dotted.calls).toEqual([
      { name: 'math_add', args: { a: 2, b: 40 } },
      { name: LONG, args: { a: 1 } },
      { name: 'math.add', args: { a: 3, b: 4 } },
    ]);
    expect(names.every((n) => /^[a-zA-Z0-9_-]{1,64}$/.test(n))).toBe(true);
    expect(events.some((e) => e.event === 'error')).toBe(false);
  });
});
