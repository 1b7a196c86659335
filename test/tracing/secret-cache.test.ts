// Trace redaction keeps each workspace's tool server header values in memory while the notification
// bus is up, instead of reading a digest of the records before every trace write. The database itself
// announces every change of a record (migration 1800), so a header changed through another replica is
// redacted in this replica's next trace; and after the bus connection drops, nothing cached before the
// drop is trusted. Two replicas on one database, real HTTP, the stored traces read from PostgreSQL.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUS_APPLICATION_NAME } from '../../src/db/bus.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent, createThread, run } from '../runtime/support.js';

let a: TestServer;
let b: TestServer;
let db: pg.Client;

beforeAll(async () => {
  a = await startTestServer();
  b = await startTestServer({ databaseUrl: a.databaseUrl, dataDir: a.dataDir, adminKey: a.adminKey });
  db = new pg.Client({ connectionString: a.databaseUrl });
  await db.connect();
});
afterAll(async () => {
  await db?.end();
  await b?.close();
  await a?.close();
});

/** Every stored trace row of `runId`'s trace, as text. */
async function storedTrace(threadId: string, runId: string): Promise<string> {
  const res = await a.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}/trace', { params: { path: { thread_id: threadId, run_id: runId } } });
  expect(res.response.status).toBe(200);
  const { rows } = await db.query('SELECT r.* FROM tracing_runs r WHERE r.trace_id = $1', [(res.data as { id: string }).id]);
  expect(rows.length).toBeGreaterThan(1);
  return JSON.stringify(rows);
}

/** A run on replica A whose input holds `secret`; returns its stored trace. */
async function traceOfRunSaying(agentId: string, secret: string): Promise<string> {
  const threadId = await createThread(a, agentId);
  const { stream } = await run(a, threadId, { agent_id: agentId, messages: [{ role: 'user', content: `the token is ${secret}, keep it` }] });
  return storedTrace(threadId, stream.runId!);
}

/** Resolves with the payload of the next notification of the tool server channel. */
async function nextToolServerNotice(): Promise<() => Promise<string>> {
  const listener = new pg.Client({ connectionString: a.databaseUrl });
  await listener.connect();
  const heard = new Promise<string>((resolve) => listener.on('notification', (n) => resolve(n.payload ?? '')));
  await listener.query('LISTEN hangar_tool_servers');
  return async () => {
    try {
      return await heard;
    } finally {
      await listener.end();
    }
  };
}

describe('tool server secrets in traces, across replicas', () => {
  it('redacts a header value changed through another replica in the next trace', async () => {
    const first = 'first-header-secret-7c1e9a';
    const second = 'second-header-secret-40bd2f';
    const server = await b.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'Vault', url: 'https://vault.example.com/mcp', headers: [{ key: 'X-Api-Key', value: first }] } });
    expect(server.response.status).toBe(201);
    const agentId = await createAgent(a);

    // Replica A reads the workspace's header values for this trace (and keeps them).
    const before = await traceOfRunSaying(agentId, first);
    expect(before).not.toContain(first);
    expect(before).toContain('[redacted]');

    // The header changes through replica B; the database announces it (with the workspace id).
    const heard = await nextToolServerNotice();
    const patched = await b.client.PATCH('/v1/deepagents/mcp-servers/{mcp_server_id}', {
      params: { path: { mcp_server_id: server.data!.id } },
      body: { headers: [{ key: 'X-Api-Key', value: second }] },
    });
    expect(patched.response.status).toBe(200);
    const { rows } = await db.query<{ workspace_id: string }>('SELECT workspace_id FROM mcp_servers WHERE id = $1', [server.data!.id]);
    expect(await heard()).toBe(rows[0]!.workspace_id);

    const after = await traceOfRunSaying(agentId, second);
    expect(after).not.toContain(second);
    expect(after).toContain('[redacted]');
  });

  it('trusts nothing it cached before its bus connection dropped', async () => {
    const agentId = await createAgent(a);
    const created = await b.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'Dropped', url: 'https://dropped.example.com/mcp', headers: [{ key: 'Authorization', value: 'cached-before-drop-55e0a1' }] } });
    expect(created.response.status).toBe(201);
    expect(await traceOfRunSaying(agentId, 'cached-before-drop-55e0a1')).not.toContain('cached-before-drop-55e0a1');

    // Cut every bus connection, then change the header at once: its notification may be lost to A.
    const buses = await db.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()', [BUS_APPLICATION_NAME]);
    expect(buses.rows.length).toBe(2);
    await db.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()', [BUS_APPLICATION_NAME]);
    const changed = 'changed-during-drop-93f2c4';
    const patched = await b.client.PATCH('/v1/deepagents/mcp-servers/{mcp_server_id}', { params: { path: { mcp_server_id: created.data!.id } }, body: { headers: [{ key: 'Authorization', value: changed }] } });
    expect(patched.response.status).toBe(200);
    // Whether A runs the next trace before or after its bus is back, the new value is redacted.
    expect(await traceOfRunSaying(agentId, changed)).not.toContain(changed);
    await waitForBuses(buses.rows.map((r) => r.pid));
    expect(await traceOfRunSaying(agentId, changed)).not.toContain(changed);
  });
});

/** Wait until both replicas' buses are connected again, on backends other than `old`. */
async function waitForBuses(old: number[]): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const { rows } = await db.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()', [BUS_APPLICATION_NAME]);
    if (rows.length === 2 && rows.every((r) => !old.includes(r.pid))) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('the notification buses did not reconnect');
}
