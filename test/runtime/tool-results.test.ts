// What the model reads of a tool's answer when the answer is more than text: embedded resources,
// resource links, binary data and structured content, from a real MCP server (@modelcontextprotocol/sdk).
// The OpenAI model provider is the stand-in of test/fixtures/model-providers.ts (external SaaS); the
// request is built by the real ChatOpenAI, as in production.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect } from '../../src/client/stream.js';
import { startProviderStandIn, type ProviderStandIn } from '../fixtures/model-providers.js';
import { startResultKindsToolServer, type ToolServerFixture } from '../support/mcp.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent, createThread, lastAiText, lastValues, run, start } from './support.js';

let server: TestServer;
let provider: ProviderStandIn;
let tools: ToolServerFixture;

beforeAll(async () => {
  [server, provider, tools] = await Promise.all([startTestServer(), startProviderStandIn(), startResultKindsToolServer()]);
  const res = await server.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'result kinds', url: tools.url } });
  expect(res.response.status).toBe(201);
});
afterAll(async () => {
  await Promise.all([server?.close(), provider?.close(), tools?.close()]);
});

const ALL = ['add', 'read_note', 'read_blob', 'weather', 'weather_text'];

/** The content of the tool message a `/call` on the scripted model produced. */
async function toolMessage(call: string): Promise<unknown> {
  const agentId = await createAgent(server, { tools: { tools: ALL.map((name) => ({ name, mcp_server_url: tools.url })) } });
  const { events } = await run(server, await createThread(server, agentId), { agent_id: agentId, messages: [{ role: 'user', content: `/call ${call}` }] });
  const messages = lastValues(events).messages as { type: string; content: unknown }[];
  return messages.find((m) => m.type === 'tool')!.content;
}

describe('tool results beyond text', () => {
  it('an embedded text resource is read by the model, with its URI', async () => {
    expect(await toolMessage('read_note {}')).toBe('Resource (notes://today, text/markdown):\n# Today\nShip the fix.');
  });

  it('a resource link, binary data and structured content are said in words', async () => {
    expect(await toolMessage('add {"a": 1, "b": 2}')).toBe('sum 3\n\nResource link: ledger://sums/latest, text/csv');
    expect(await toolMessage('read_blob {}')).toBe('Resource (files://logo.png, image/png): 10 bytes of binary data, not shown');
    expect(await toolMessage('weather {}')).toBe('{"temperature":21,"conditions":"Sunny"}');
    expect(await toolMessage('weather_text {}')).toBe('It is sunny, 21 degrees.');
  });

  it('an OpenAI model reads a result with a resource link: the run and the next run of the thread succeed', async () => {
    const name = 'openai-links';
    const config = await server.client.POST('/v1/deepagents/model-configs', {
      body: { name, model_id: 'openai:ok', parameters: { base_url: provider.openaiUrl }, api_key: 'sk-stand-in' },
    });
    expect(config.response.status).toBe(201);
    const agentId = await createAgent(server, { runtime: { model: { model_id: name } }, tools: { tools: [{ name: 'add', mcp_server_url: tools.url }] } });
    const threadId = await createThread(server, agentId);
    for (const text of ['add please', 'and again']) {
      const stream = await start(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: text }] });
      expect(stream.status).toBe(200);
      const events = await collect(stream);
      expect(events.find((e) => e.event === 'error')).toBeUndefined();
      expect(lastAiText(lastValues(events))).toMatch(/^The tool said: sum 42\n\nResource link: ledger:\/\/sums\/latest, text\/csv|^Hello from the stand-in\.$/);
    }
    const sent = provider.requestsFor('ok').at(-1)!.body.messages as { role: string; content: unknown }[];
    expect(sent.find((m) => m.role === 'tool')!.content).toBe('sum 42\n\nResource link: ledger://sums/latest, text/csv');
  });
});
