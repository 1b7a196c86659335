// The hosted SDK's thread list (`GET /threads?agent_id=…`), driven through the typed client: one
// agent's threads, latest activity first, in cursor pages, with the hosted filters.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent, createThread, run } from '../runtime/support.js';

let server: TestServer;
let agentId: string;
let threads: string[];
let testThread: string;
let paused: string;

beforeAll(async () => {
  server = await startTestServer();
  agentId = await createAgent(server, { tools: { tools: [], interrupt_config: { write_file: true } } });
  const other = await createAgent(server);
  await createThread(server, other);
  threads = [];
  for (let i = 0; i < 4; i++) threads.push(await createThread(server, agentId));
  testThread = await createThread(server, agentId, { test_run: true });
  // The oldest thread gets a run: its activity is now the latest.
  await run(server, threads[0]!, { agent_id: agentId, messages: [{ role: 'user', content: 'hi' }] });
  paused = threads[1]!;
  await run(server, paused, { agent_id: agentId, messages: [{ role: 'user', content: '/call write_file {"file_path": "/a.txt", "content": "a"}' }] });
});
afterAll(async () => {
  await server?.close();
});

const list = (query: Record<string, string | number>) => server.client.GET('/v1/deepagents/threads', { params: { query: query as never } });

describe('GET /threads', () => {
  it('pages an agent’s threads, latest activity first, without test runs', async () => {
    const first = await list({ agent_id: agentId, page_size: 3 });
    expect(first.response.status).toBe(200);
    expect(first.data!.items.map((t) => t.id)).toEqual([paused, threads[0], threads[3]]);
    expect(first.data!.items[1]!.values).toHaveProperty('messages');
    expect(first.data!.next_cursor).toEqual(expect.any(String));
    const second = await list({ agent_id: agentId, page_size: 3, cursor: first.data!.next_cursor! });
    expect(second.data!.items.map((t) => t.id)).toEqual([threads[2]]);
    expect(second.data!.next_cursor).toBeNull();
    const all = await list({ agent_id: agentId });
    expect(all.data!.items).toHaveLength(4);
  });

  it('filters: test runs, status, needs_action, pinned', async () => {
    expect((await list({ agent_id: agentId, test_run: 'true' })).data!.items.map((t) => t.id)).toEqual([testThread]);
    expect((await list({ agent_id: agentId, needs_action: 'true' })).data!.items.map((t) => t.id)).toEqual([paused]);
    expect((await list({ agent_id: agentId, status: 'interrupted' })).data!.items.map((t) => t.id)).toEqual([paused]);
    expect((await list({ agent_id: agentId, status: 'idle' })).data!.items).toHaveLength(3);
    expect((await list({ agent_id: agentId, pinned: 'true' })).data!.items).toEqual([]);
    expect((await list({ agent_id: agentId, pinned: 'false' })).data!.items).toHaveLength(4);
  });

  it('refuses what it cannot honour, naming it', async () => {
    const both = await list({ agent_id: agentId, needs_action: 'true', status: 'idle' });
    expect(both.response.status).toBe(422);
    expect(JSON.stringify(both.error)).toContain('needs_action');
    const cursor = await list({ agent_id: agentId, cursor: 'bm9wZQ' });
    expect(cursor.response.status).toBe(422);
    expect(JSON.stringify(cursor.error)).toContain('cursor');
    expect((await list({ agent_id: agentId, page_size: 21 })).response.status).toBe(422);
    const missing = await fetch(`${server.url}/v1/deepagents/threads`, { headers: { 'x-api-key': server.adminKey } });
    expect(missing.status).toBe(422);
    expect(await missing.text()).toContain('agent_id');
  });
});
