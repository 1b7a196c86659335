// Fail small (issue 14): one tool-server record whose headers cannot be decrypted is skipped with a
// warning and a counter; the workspace's traces are still stored, with the other secrets redacted.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
const SECRET = 'intact-header-secret-7f3a9c21';

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

it('an undecryptable tool-server record does not stop tracing for the workspace', async () => {
  await server.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'Good', url: 'https://good.example.com/mcp', headers: [{ key: 'Authorization', value: SECRET }] } });
  const broken = await server.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'Broken', url: 'https://broken.example.com/mcp', headers: [{ key: 'X', value: 'y' }] } });
  // As after a key rotation gone wrong or a damaged row: the stored ciphertext no longer decrypts.
  const db = new pg.Client({ connectionString: server.databaseUrl });
  await db.connect();
  try {
    await db.query("UPDATE mcp_servers SET headers_encrypted = 'v1:not-a-ciphertext' WHERE id = $1", [broken.data!.id]);
  } finally {
    await db.end();
  }

  const id = randomUUID();
  const start = new Date();
  const stamp = start.toISOString().replace(/[-:]/g, '').replace('.', '').replace('Z', '000Z');
  const res = await fetch(`${server.url}/langsmith/runs/batch`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': server.adminKey },
    body: JSON.stringify({ post: [{ id, trace_id: id, dotted_order: `${stamp}${id}`, name: 'leaky', run_type: 'chain', session_name: 'fail-small', start_time: start.toISOString(), end_time: start.toISOString(), inputs: { header: SECRET } }] }),
  });
  expect(res.status).toBe(202);

  const stored = await server.client.GET('/v1/tracing/runs/{run_id}', { params: { path: { run_id: id } } });
  expect(stored.response.status).toBe(200);
  expect(JSON.stringify(stored.data!.inputs)).not.toContain(SECRET);
  expect(server.logs()).toMatch(new RegExp(`"mcp_server_id":"${broken.data!.id}".*"undecryptable_secrets_total":1.*skipped a tool server whose headers cannot be decrypted`));
  expect(server.hangar.services.tracing.undecryptableSecrets).toBe(1);
});
