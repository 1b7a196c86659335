// The tracing read API: projects, root-run filters and cursor pages, run trees, stats, bad input,
// roles and workspace isolation. Traces are seeded through the JSON batch ingestion endpoint.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

async function postBatch(body: unknown, apiKey = server.adminKey): Promise<Response> {
  return fetch(`${server.url}/langsmith/runs/batch`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': apiKey }, body: JSON.stringify(body) });
}

async function countRuns(): Promise<number> {
  const client = new pg.Client({ connectionString: server.databaseUrl });
  await client.connect();
  try {
    return Number((await client.query('SELECT count(*) FROM tracing_runs')).rows[0].count);
  } finally {
    await client.end();
  }
}

/** A root run with one model child, `ms` long, started at `start`. */
function trace(opts: { project: string; name: string; start: Date; ms: number; error?: string; tokens?: [number, number] }) {
  const root = randomUUID();
  const llm = randomUUID();
  const end = new Date(opts.start.getTime() + opts.ms);
  const stamp = (d: Date) => d.toISOString().replace(/[-:]/g, '').replace('.', '').replace('Z', '000Z');
  return {
    root,
    post: [
      { id: root, trace_id: root, dotted_order: `${stamp(opts.start)}${root}`, name: opts.name, run_type: 'chain', session_name: opts.project, start_time: opts.start.toISOString(), end_time: end.toISOString(), inputs: { q: opts.name }, outputs: opts.error ? undefined : { a: 1 }, error: opts.error },
      {
        id: llm, trace_id: root, parent_run_id: root, dotted_order: `${stamp(opts.start)}${root}.${stamp(opts.start)}${llm}`, name: 'model', run_type: 'llm', session_name: opts.project,
        start_time: opts.start.toISOString(), end_time: end.toISOString(),
        outputs: { llm_output: { token_usage: { prompt_tokens: opts.tokens?.[0] ?? 10, completion_tokens: opts.tokens?.[1] ?? 5, total_tokens: (opts.tokens?.[0] ?? 10) + (opts.tokens?.[1] ?? 5) } } },
      },
    ],
  };
}

describe('tracing read API', () => {
  it('lists the default project and creates named ones (409 on a taken name)', async () => {
    const list = await server.client.GET('/v1/tracing/projects');
    expect(list.data!.items.filter((p) => p.is_default).map((p) => p.name)).toEqual(['default']);
    const created = await server.client.POST('/v1/tracing/projects', { body: { name: 'support-bot', description: 'prod' } });
    expect(created.response.status).toBe(201);
    expect(created.data).toMatchObject({ name: 'support-bot', description: 'prod', is_default: false });
    const again = await server.client.POST('/v1/tracing/projects', { body: { name: 'support-bot' } });
    expect(again.response.status).toBe(409);
    expect(again.error).toMatchObject({ code: 'tracing_project_name_taken', status: 409 });
    // What deployments call: the existing project is returned, a missing one is created.
    const tracing = server.hangar.services.tracing;
    expect((await tracing.ensureProject(await workspaceId(), 'support-bot')).id).toBe(created.data!.id);
    const made = await tracing.ensureProject(await workspaceId(), 'deployment-a');
    expect((await server.client.GET('/v1/tracing/projects/{project_id}', { params: { path: { project_id: made.id } } })).data!.name).toBe('deployment-a');
  });

  it('filters root runs by time, status, name, error and latency, pages with a cursor, and computes stats', async () => {
    const base = new Date('2026-03-01T10:00:00.000Z');
    const at = (min: number) => new Date(base.getTime() + min * 60_000);
    const traces = [
      trace({ project: 'filters', name: 'fast-ok', start: at(0), ms: 100 }),
      trace({ project: 'filters', name: 'slow-ok', start: at(1), ms: 5000, tokens: [100, 50] }),
      trace({ project: 'filters', name: 'failing', start: at(2), ms: 300, error: 'boom' }),
      trace({ project: 'filters', name: 'late-ok', start: at(60), ms: 200 }),
    ];
    const res = await postBatch({ post: traces.flatMap((t) => t.post) });
    expect(res.status).toBe(202);
    const project = (await server.client.GET('/v1/tracing/projects')).data!.items.find((p) => p.name === 'filters')!;
    const list = async (query: Record<string, string | number>) => {
      const r = await server.client.GET('/v1/tracing/projects/{project_id}/runs', { params: { path: { project_id: project.id }, query } });
      expect(r.response.status).toBe(200);
      return r.data!;
    };
    expect((await list({})).items.map((r) => r.name)).toEqual(['late-ok', 'failing', 'slow-ok', 'fast-ok']);
    expect((await list({ start_time_gte: at(1).toISOString(), start_time_lt: at(3).toISOString() })).items.map((r) => r.name)).toEqual(['failing', 'slow-ok']);
    expect((await list({ status: 'error' })).items.map((r) => r.name)).toEqual(['failing']);
    expect((await list({ error: 'false' })).items).toHaveLength(3);
    expect((await list({ name: 'OK' })).items.map((r) => r.name)).toEqual(['late-ok', 'slow-ok', 'fast-ok']);
    expect((await list({ min_latency_ms: 1000 })).items.map((r) => r.name)).toEqual(['slow-ok']);
    expect((await list({ name: 'slow' })).items[0]).toMatchObject({ prompt_tokens: 100, completion_tokens: 50, total_tokens: 150, latency_ms: 5000 });

    const seen: string[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await list({ page_size: 3, ...(cursor ? { cursor } : {}) });
      seen.push(...page.items.map((r) => r.name));
      if (!page.next_cursor) break;
      cursor = page.next_cursor;
    }
    expect(seen).toEqual(['late-ok', 'failing', 'slow-ok', 'fast-ok']);

    const stats = await server.client.GET('/v1/tracing/projects/{project_id}/stats', { params: { path: { project_id: project.id } } });
    expect(stats.data).toMatchObject({ run_count: 4, error_count: 1, error_rate: 0.25, prompt_tokens: 130, completion_tokens: 65, total_tokens: 195 });
    expect(stats.data!.latency_p50_ms).toBe(250);
    expect(stats.data!.latency_p99_ms).toBeGreaterThan(4800);
    const windowed = await server.client.GET('/v1/tracing/projects/{project_id}/stats', { params: { path: { project_id: project.id }, query: { start_time_gte: at(30).toISOString() } } });
    expect(windowed.data).toMatchObject({ run_count: 1, error_count: 0 });
  });

  it('stores a batch larger than one SQL statement can carry', async () => {
    const start = new Date('2026-04-01T00:00:00.000Z');
    const post = Array.from({ length: 2500 }, (_, i) => trace({ project: 'big-batch', name: `r${i}`, start, ms: 1 }).post).flat();
    expect(await postBatch({ post })).toHaveProperty('status', 202);
    const project = (await server.client.GET('/v1/tracing/projects')).data!.items.find((p) => p.name === 'big-batch')!;
    const stats = await server.client.GET('/v1/tracing/projects/{project_id}/stats', { params: { path: { project_id: project.id } } });
    expect(stats.data).toMatchObject({ run_count: 2500, total_tokens: 2500 * 15 });
  });

  it('returns a run with its children, and 404 for unknown runs and projects', async () => {
    const t = trace({ project: 'tree', name: 'root', start: new Date(), ms: 10 });
    await postBatch({ post: t.post });
    const got = await server.client.GET('/v1/tracing/runs/{run_id}', { params: { path: { run_id: t.root } } });
    expect(got.data!.child_runs.map((c) => c.name)).toEqual(['model']);
    expect(got.data!.total_tokens).toBe(15);
    const missing = await server.client.GET('/v1/tracing/runs/{run_id}', { params: { path: { run_id: randomUUID() } } });
    expect(missing.response.status).toBe(404);
    expect(missing.error).toMatchObject({ code: 'tracing_run_not_found' });
    const noProject = await server.client.GET('/v1/tracing/projects/{project_id}/runs', { params: { path: { project_id: randomUUID() } } });
    expect(noProject.error).toMatchObject({ code: 'tracing_project_not_found', status: 404 });
  });

  it('rejects bad input without writing anything', async () => {
    const before = await countRuns();
    const id = randomUUID();
    const cases: { name: string; send: () => Promise<Response>; status: number; code?: string }[] = [
      { name: 'no key', send: () => fetch(`${server.url}/langsmith/runs/batch`, { method: 'POST', body: '{}' }), status: 401 },
      { name: 'invalid JSON', send: () => fetch(`${server.url}/langsmith/runs/batch`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': server.adminKey }, body: '{' }), status: 400, code: 'invalid_json' },
      { name: 'run id not a UUID', send: () => postBatch({ post: [{ id: 'nope', name: 'x', run_type: 'chain' }] }), status: 422, code: 'validation_failed' },
      { name: 'missing name', send: () => postBatch({ post: [{ id, run_type: 'chain' }] }), status: 422, code: 'validation_failed' },
      {
        name: 'multipart part with broken JSON',
        send: () => {
          const form = new FormData();
          form.append(`post.${id}`, JSON.stringify({ id, name: 'x', run_type: 'chain', trace_id: id, dotted_order: `20260101T000000000000Z${id}` }));
          form.append(`post.${id}.inputs`, '{not json');
          return fetch(`${server.url}/langsmith/runs/multipart`, { method: 'POST', headers: { 'x-api-key': server.adminKey }, body: form });
        },
        status: 422,
        code: 'validation_failed',
      },
      {
        name: 'multipart field without its run',
        send: () => {
          const form = new FormData();
          form.append(`patch.${id}.outputs`, '{}');
          return fetch(`${server.url}/langsmith/runs/multipart`, { method: 'POST', headers: { 'x-api-key': server.adminKey }, body: form });
        },
        status: 422,
        code: 'validation_failed',
      },
    ];
    for (const c of cases) {
      const res = await c.send();
      expect(res.status, c.name).toBe(c.status);
      const body = (await res.json()) as Record<string, unknown>;
      if (c.code) expect(body, c.name).toMatchObject({ code: c.code, status: c.status });
      else expect(body, c.name).toMatchObject({ error: 'Unauthorized' });
    }
    const badQuery = await fetch(`${server.url}/v1/tracing/runs/not-a-uuid`, { headers: { 'x-api-key': server.adminKey } });
    expect(badQuery.status).toBe(422);
    const project = (await server.client.GET('/v1/tracing/projects')).data!.items[0]!;
    const badCursor = await server.client.GET('/v1/tracing/projects/{project_id}/runs', { params: { path: { project_id: project.id }, query: { cursor: 'garbage' } } });
    expect(badCursor.response.status).toBe(422);
    expect(badCursor.error).toMatchObject({ code: 'validation_failed' });
    // A cursor edited to hold a time JavaScript reads but PostgreSQL cannot hold: refused, not a 500.
    for (const time of ['-271821-04-20T00:00:00.000Z', '+275760-09-13T00:00:00.000Z']) {
      const forged = Buffer.from(`${time}|${randomUUID()}`).toString('base64url');
      const res = await server.client.GET('/v1/tracing/projects/{project_id}/runs', { params: { path: { project_id: project.id }, query: { cursor: forged } } });
      expect(res.response.status, time).toBe(422);
      expect(res.error).toMatchObject({ code: 'validation_failed' });
    }
    expect(await countRuns()).toBe(before);
  });

  it('lets a viewer read but not ingest, and keeps workspaces apart', async () => {
    const t = trace({ project: 'private', name: 'mine', start: new Date(), ms: 5 });
    await postBatch({ post: t.post });
    const viewerKey = await server.createKey({ role: 'viewer' });
    const denied = await postBatch({ post: trace({ project: 'x', name: 'x', start: new Date(), ms: 1 }).post }, viewerKey);
    expect(denied.status).toBe(403);
    const viewer = server.clientFor(viewerKey);
    expect((await viewer.GET('/v1/tracing/runs/{run_id}', { params: { path: { run_id: t.root } } })).response.status).toBe(200);

    const other = await server.createWorkspace('other-team');
    expect((await other.client.GET('/v1/tracing/runs/{run_id}', { params: { path: { run_id: t.root } } })).response.status).toBe(404);
    const theirProjects = (await other.client.GET('/v1/tracing/projects')).data!.items;
    expect(theirProjects.map((p) => p.name)).toEqual(['default']);
    // The same run id sent by another workspace is another run: it cannot overwrite ours.
    const hijack = trace({ project: 'private', name: 'theirs', start: new Date(), ms: 5 });
    hijack.post[0]!.id = t.root;
    hijack.post[0]!.trace_id = t.root;
    expect((await postBatch({ post: [hijack.post[0]] }, other.adminKey)).status).toBe(202);
    expect((await server.client.GET('/v1/tracing/runs/{run_id}', { params: { path: { run_id: t.root } } })).data!.name).toBe('mine');
  });
});

describe('retention', () => {
  it('the sweeper deletes runs older than the retention period and keeps the rest', async () => {
    const t = trace({ project: 'retention', name: 'old', start: new Date(), ms: 5 });
    await postBatch({ post: t.post });
    const tracing = server.hangar.services.tracing;
    expect(await tracing.sweep(30)).toBe(0);
    const before = await countRuns();
    expect(before).toBeGreaterThanOrEqual(2);
    // Thirty-one days later, everything stored now is past a 30-day retention.
    const deleted = await tracing.sweep(30, new Date(Date.now() + 31 * 86_400_000));
    expect(deleted).toBe(before);
    expect(await countRuns()).toBe(0);
    expect((await server.client.GET('/v1/tracing/runs/{run_id}', { params: { path: { run_id: t.root } } })).response.status).toBe(404);
  });
});

async function workspaceId(): Promise<string> {
  return (await server.hangar.services.workspaces.authenticate(server.adminKey))!.workspaceId;
}
