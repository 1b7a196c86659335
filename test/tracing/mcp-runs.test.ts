// MCP tools in traces: a call to a real bearer-protected tool server is traced with its arguments and
// result, tools the server does not offer are listed on the root run, and the stored bearer header
// never reaches the trace store.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBearerToolServer, type ToolServerFixture } from '../support/mcp.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent, createThread, run } from '../runtime/support.js';

const TOKEN = 'mcp-bearer-secret-for-tracing-91c2';
let server: TestServer;
let bearer: ToolServerFixture;

beforeAll(async () => {
  [server, bearer] = await Promise.all([startTestServer(), startBearerToolServer(TOKEN)]);
});
afterAll(async () => {
  await Promise.all([server?.close(), bearer?.close()]);
});

type Tree = { name: string; run_type: string; inputs: unknown; outputs: unknown; metadata: Record<string, unknown>; child_runs: Tree[] };
const flatten = (t: Tree): Tree[] => [t, ...t.child_runs.flatMap(flatten)];

describe('traced MCP tool calls', () => {
  it('traces the call with arguments and result, lists dropped tools, and never stores the header', async () => {
    await server.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'Adder', url: bearer.url, headers: [{ key: 'Authorization', value: `Bearer ${TOKEN}` }] } });
    const agentId = await createAgent(server, { tools: { tools: [{ name: 'add', mcp_server_url: bearer.url }, { name: 'not_offered', mcp_server_url: bearer.url }] } });
    const threadId = await createThread(server, agentId);
    const { stream } = await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: `/call add {"a": 2, "b": 40, "note": "${TOKEN}"}` }] });
    expect(bearer.calls.length).toBe(1);

    const trace = await server.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}/trace', { params: { path: { thread_id: threadId, run_id: stream.runId! } } });
    const root = trace.data as unknown as Tree;
    expect(root.metadata.dropped_tools).toEqual([{ name: 'not_offered', mcp_server_url: bearer.url, reason: expect.stringContaining('not_offered') }]);
    const add = flatten(root).find((r) => r.run_type === 'tool' && r.name === 'add')!;
    expect(JSON.stringify(add.inputs)).toContain('40');
    expect(JSON.stringify(add.outputs)).toContain('42');

    const client = new pg.Client({ connectionString: server.databaseUrl });
    await client.connect();
    try {
      const stored = JSON.stringify((await client.query('SELECT * FROM tracing_runs')).rows);
      expect(stored).toContain('not_offered');
      expect(stored).not.toContain(TOKEN);
    } finally {
      await client.end();
    }
  });
});
