// Ingestion edge cases found in the second bug bash: what a key confined to one project may touch,
// secrets in run updates, and runs that never end under the OTLP exporter.
import { randomUUID } from 'node:crypto';
import { Client } from 'langsmith';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

async function send(apiKey: string, method: string, path: string, body: unknown) {
  const res = await fetch(`${server.url}/langsmith${path}`, { method, headers: { 'x-api-key': apiKey, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function getRun(id: string) {
  return server.client.GET('/v1/tracing/runs/{run_id}', { params: { path: { run_id: id } } });
}

describe('a key confined to one tracing project (a deployed application’s)', () => {
  it('cannot take over another project’s run by reporting its id, nor graft runs onto another project’s trace', async () => {
    const victim = randomUUID();
    expect((await send(server.adminKey, 'POST', '/runs', { id: victim, name: 'private-run', run_type: 'chain', session_name: 'team-private', inputs: { q: 'confidential' } })).status).toBe(202);
    const { key: appKey } = await server.hangar.services.workspaces.createKey({ workspace: 'default', role: 'member', tracesProject: 'some-app' });

    const takeover = await send(appKey, 'POST', '/runs', { id: victim, name: 'mine-now', run_type: 'chain', inputs: { q: 'overwritten' } });
    expect(takeover.status).toBe(403);
    expect(String(takeover.body.detail)).toContain('may only send traces to project "some-app"');

    const batch = await send(appKey, 'POST', '/runs/batch', { post: [{ id: victim, name: 'mine-now', run_type: 'chain' }] });
    expect(batch.status).toBe(403);

    const graft = randomUUID();
    const grafted = await send(appKey, 'POST', '/runs', { id: graft, name: 'grafted', run_type: 'tool', trace_id: victim, parent_run_id: victim });
    expect(grafted.status).toBe(403);
    const patched = await send(appKey, 'PATCH', `/runs/${graft}`, { trace_id: victim, parent_run_id: victim, end_time: Date.now() });
    expect(patched.status).toBe(403);

    const stored = await getRun(victim);
    expect(stored.response.status).toBe(200);
    expect(stored.data).toMatchObject({ name: 'private-run', inputs: { q: 'confidential' }, child_runs: [] });
    const project = (await server.client.GET('/v1/tracing/projects')).data!.items.find((p) => p.name === 'team-private')!;
    expect(stored.data!.project_id).toBe(project.id);
    expect((await getRun(graft)).response.status).toBe(404);

    // Its own traces, parents and all, are still taken, through the official client as the app sends them.
    const client = new Client({ apiUrl: `${server.url}/langsmith`, apiKey: appKey, autoBatchTracing: false });
    const root = randomUUID();
    const child = randomUUID();
    await client.createRun({ id: root, name: 'app-root', run_type: 'chain', inputs: {}, project_name: 'some-app', start_time: Date.now() });
    await client.createRun({ id: child, name: 'app-child', run_type: 'tool', inputs: {}, project_name: 'some-app', parent_run_id: root, trace_id: root, start_time: Date.now() });
    await client.updateRun(child, { outputs: { ok: true }, end_time: Date.now(), trace_id: root, parent_run_id: root });
    await client.updateRun(root, { outputs: { ok: true }, end_time: Date.now() });
    const own = await getRun(root);
    expect(own.data).toMatchObject({ name: 'app-root', status: 'success' });
    expect((await getRun(child)).data).toMatchObject({ name: 'app-child', parent_run_id: root, trace_id: root, project_id: own.data!.project_id, status: 'success' });
  });
});

describe('secrets in run updates', () => {
  it('redacts tags set by a patch, as it does tags of a create', async () => {
    const id = randomUUID();
    expect((await send(server.adminKey, 'POST', '/runs', { id, name: 'tagged', run_type: 'chain', tags: ['Bearer createdTagToken0123456789'] })).status).toBe(202);
    expect((await getRun(id)).data!.tags).toEqual(['Bearer [redacted]']);

    const patched = await send(server.adminKey, 'PATCH', `/runs/${id}`, { tags: ['Bearer patchedTagToken0123456789', 'sk-patchedProviderKey0123456789'], end_time: Date.now() });
    expect(patched.status).toBe(202);
    const run = await getRun(id);
    expect(run.data!.tags).toEqual(['Bearer [redacted]', '[redacted]']);
    expect(JSON.stringify(run.data)).not.toContain('patchedTagToken');
  });
});

describe('tool server secrets', () => {
  it('redacts the header values of a tool server added a moment ago, even right after another trace was stored', async () => {
    const warm = randomUUID();
    expect((await send(server.adminKey, 'POST', '/runs', { id: warm, name: 'before-the-server', run_type: 'chain' })).status).toBe(202);
    const header = 'fresh-tool-server-header-4b7f2a';
    const created = await server.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'JustAdded', url: 'https://just-added.example.com/mcp', headers: [{ key: 'X-Team', value: header }] } });
    expect(created.response.status).toBe(201);
    const id = randomUUID();
    expect((await send(server.adminKey, 'POST', '/runs', { id, name: 'after-the-server', run_type: 'tool', inputs: { note: `sent ${header}` }, tags: [header] })).status).toBe(202);
    const run = await getRun(id);
    expect(run.data).toMatchObject({ inputs: { note: 'sent [redacted]' }, tags: ['[redacted]'] });
  });
});

describe('children reported with only parent_run_id', () => {
  it('are placed in their parent’s trace and tree, whether the parent came earlier in the batch or in an earlier request', async () => {
    // What older clients (and the REST examples) send: no trace_id, no dotted_order.
    const root = randomUUID();
    const step = randomUUID();
    const leaf = randomUUID();
    expect((await send(server.adminKey, 'POST', '/runs', { id: root, name: 'root', run_type: 'chain', start_time: '2026-03-01T10:00:00Z' })).status).toBe(202);
    const batch = await send(server.adminKey, 'POST', '/runs/batch', {
      post: [
        { id: step, name: 'step', run_type: 'chain', parent_run_id: root, start_time: '2026-03-01T10:00:01Z' },
        { id: leaf, name: 'leaf', run_type: 'tool', parent_run_id: step, start_time: '2026-03-01T10:00:02Z', end_time: '2026-03-01T10:00:03Z' },
      ],
    });
    expect(batch.status).toBe(202);
    const tree = await getRun(root);
    expect(tree.response.status).toBe(200);
    expect(tree.data!.child_runs.map((c) => c.name)).toEqual(['step']);
    expect(tree.data!.child_runs[0]!.child_runs.map((c) => c.name)).toEqual(['leaf']);
    const leafRun = (await getRun(leaf)).data!;
    expect(leafRun).toMatchObject({ trace_id: root, parent_run_id: step });
    expect(leafRun.dotted_order.startsWith(`${tree.data!.dotted_order}.`)).toBe(true);

    // A child whose parent Hangar never saw stands as its own trace rather than failing.
    const orphan = randomUUID();
    expect((await send(server.adminKey, 'POST', '/runs', { id: orphan, name: 'orphan', run_type: 'chain', parent_run_id: randomUUID() })).status).toBe(202);
    expect((await getRun(orphan)).data).toMatchObject({ trace_id: orphan, name: 'orphan' });

    // A confined key sending such a child of its own run is fine too.
    const { key: appKey } = await server.hangar.services.workspaces.createKey({ workspace: 'default', role: 'member', tracesProject: 'placing-app' });
    const appRoot = randomUUID();
    const appChild = randomUUID();
    expect((await send(appKey, 'POST', '/runs', { id: appRoot, name: 'app-root', run_type: 'chain' })).status).toBe(202);
    expect((await send(appKey, 'POST', '/runs', { id: appChild, name: 'app-child', run_type: 'tool', parent_run_id: appRoot })).status).toBe(202);
    expect((await getRun(appRoot)).data!.child_runs.map((c) => c.name)).toEqual(['app-child']);
  });
});
