// Least privilege for deployed applications (issue 14): the key a running revision gets can only
// send traces into its deployment's project (403 everywhere else), is new for every revision, and
// is revoked when the revision stops (redeploy or delete).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { hangarAppTracing } from '../../src/deploy/app-tracing.js';
import type { DriverTarget } from '../../src/deploy/driver.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

function call(key: string, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${server.url}${path}`, { method, headers: { 'x-api-key': key, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
}

function batch(project: string) {
  const id = randomUUID();
  const start = new Date();
  const stamp = start.toISOString().replace(/[-:]/g, '').replace('.', '').replace('Z', '000Z');
  return { id, body: { post: [{ id, trace_id: id, dotted_order: `${stamp}${id}`, name: 'app-run', run_type: 'chain', session_name: project, start_time: start.toISOString(), inputs: {} }] } };
}

it("a deployed app's key sends traces to its own project and can do nothing else", async () => {
  const workspace = (await server.hangar.services.workspaces.listWorkspaces()).find((w) => w.isDefault)!;
  const tracing = hangarAppTracing({ db: server.hangar.database.db, workspaces: server.hangar.services.workspaces, publicUrl: () => server.url });
  const deployment = { id: randomUUID(), workspaceId: workspace.id, name: 'shop-app' };
  const target = (seq: number) => ({ deployment, revision: { id: randomUUID(), seq } }) as unknown as DriverTarget;

  const first = await tracing.envFor(target(1));
  const key = first.env.LANGSMITH_API_KEY!;
  expect(first.env.LANGSMITH_PROJECT).toBe('shop-app');

  // Its own project: accepted (also without a project name, and the later patch of its own run).
  const own = batch('shop-app');
  expect((await call(key, 'POST', '/langsmith/runs/batch', own.body)).status).toBe(202);
  expect((await call(key, 'POST', '/langsmith/runs/batch', { patch: [{ id: own.id, trace_id: own.id, dotted_order: own.body.post[0]!.dotted_order, end_time: new Date().toISOString(), outputs: { ok: true } }] })).status).toBe(202);

  // Anything else: 403.
  const other = batch('someone-else');
  const elsewhere = await call(key, 'POST', '/langsmith/runs/batch', other.body);
  expect(elsewhere.status).toBe(403);
  expect(await elsewhere.text()).toMatch(/only send traces to project \\"shop-app\\", not \\"someone-else\\"/);
  const admin = batch('someone-else');
  expect((await call(server.adminKey, 'POST', '/langsmith/runs/batch', admin.body)).status).toBe(202);
  expect((await call(key, 'POST', '/langsmith/runs/batch', { patch: [{ id: admin.id, trace_id: admin.id, dotted_order: admin.body.post[0]!.dotted_order, outputs: { tampered: true } }] })).status).toBe(403);
  for (const [method, path, body] of [
    ['POST', '/v1/deepagents/agents', { name: 'x', runtime: { model: { model_id: 'scripted:echo' } } }],
    ['GET', '/v1/deepagents/mcp-servers', undefined],
    ['GET', '/v1/tracing/projects', undefined],
    ['GET', '/v2/deployments', undefined],
  ] as const) {
    const res = await call(key, method, path, body);
    expect(res.status, `${method} ${path}`).toBe(403);
  }

  // A redeploy runs a new revision with a new key; the old revision's key dies with it.
  const second = await tracing.envFor(target(2));
  expect(second.env.LANGSMITH_API_KEY).not.toBe(key);
  await first.release();
  expect((await call(key, 'POST', '/langsmith/runs/batch', batch('shop-app').body)).status).toBe(401);
  expect((await call(second.env.LANGSMITH_API_KEY!, 'POST', '/langsmith/runs/batch', batch('shop-app').body)).status).toBe(202);
  // Deleting the deployment stops its last revision, which revokes that key too.
  await second.release();
  expect((await call(second.env.LANGSMITH_API_KEY!, 'POST', '/langsmith/runs/batch', batch('shop-app').body)).status).toBe(401);
});
