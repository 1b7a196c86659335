// resolve-interrupt on a thread whose run is still going: a 409 saying the thread is busy (it said
// "no pending interrupt", which sends a client looking for a pause that never was), and the run is
// left alone. The run is held inside a tool call that the test releases, so the order is certain.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { collect } from '../../src/client/stream.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent, createThread, lastAiText, lastValues, start } from '../runtime/support.js';

let server: TestServer;
let tools: Server;
let toolsUrl: string;
/** Resolved when the `hold` tool is called; the call returns once `release` is called. */
let called: () => void;
const reached = new Promise<void>((resolve) => (called = resolve));
let release: () => void;
const released = new Promise<void>((resolve) => (release = resolve));

beforeAll(async () => {
  tools = createServer(async (req, res) => {
    const mcp = new McpServer({ name: 'hold', version: '1.0.0' });
    mcp.registerTool('hold', { description: 'Wait until released', inputSchema: {} }, async () => {
      called();
      await released;
      return { content: [{ type: 'text', text: 'released' }] };
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => void transport.close());
    await mcp.connect(transport);
    await transport.handleRequest(req as IncomingMessage, res, await readJson(req));
  });
  await new Promise<void>((resolve) => tools.listen(0, '127.0.0.1', resolve));
  toolsUrl = `http://127.0.0.1:${(tools.address() as AddressInfo).port}/mcp`;
  server = await startTestServer();
  await server.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'hold', url: toolsUrl } });
});
afterAll(async () => {
  release();
  tools?.closeAllConnections();
  await Promise.all([server?.close(), new Promise((resolve) => tools?.close(resolve))]);
});

async function readJson(req: IncomingMessage): Promise<unknown> {
  if (req.method !== 'POST') return undefined;
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? undefined : JSON.parse(text);
}

it('resolve-interrupt on a busy thread is a 409 thread_busy, and the run goes on', async () => {
  const agentId = await createAgent(server, { tools: { tools: [{ name: 'hold', mcp_server_url: toolsUrl }] } });
  const threadId = await createThread(server, agentId);
  const stream = await start(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: '/call hold {}' }], stream_mode: ['values'] });
  expect(stream.status).toBe(200);
  await reached;
  const res = await server.client.POST('/v1/deepagents/threads/{thread_id}/resolve-interrupt', { params: { path: { thread_id: threadId } } });
  expect(res.response.status).toBe(409);
  expect(res.error).toMatchObject({ code: 'thread_busy' });
  expect(JSON.stringify(res.error)).toContain('active run');
  release();
  expect(lastAiText(lastValues(await collect(stream)))).toBe('Done.\nhold: released');
  const thread = await server.client.GET('/v1/deepagents/threads/{thread_id}', { params: { path: { thread_id: threadId } } });
  expect(thread.data!.status).toBe('idle');
});
