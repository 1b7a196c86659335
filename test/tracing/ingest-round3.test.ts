// Ingestion defects left by the second bug bash: a session_id naming no project, a run ending before
// it starts, a multipart part named for one run holding another; and `hangar traces` printing names
// with terminal escape sequences as sent.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runHangar } from '../support/cli.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

async function send(method: string, path: string, body: unknown) {
  const res = await fetch(`${server.url}/langsmith${path}`, { method, headers: { 'x-api-key': server.adminKey, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function sendMultipart(parts: Record<string, unknown>) {
  const form = new FormData();
  for (const [name, value] of Object.entries(parts)) form.append(name, JSON.stringify(value));
  const res = await fetch(`${server.url}/langsmith/runs/multipart`, { method: 'POST', headers: { 'x-api-key': server.adminKey }, body: form });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function status(id: string) {
  return (await server.client.GET('/v1/tracing/runs/{run_id}', { params: { path: { run_id: id } } })).response.status;
}

describe('a session_id naming no project of the workspace', () => {
  it('is a 404 naming the id, for a single post, a batch and multipart, and nothing is stored', async () => {
    const missing = randomUUID();
    const single = randomUUID();
    const one = await send('POST', '/runs', { id: single, name: 'lost', run_type: 'chain', session_id: missing });
    expect(one.status).toBe(404);
    expect(one.body).toMatchObject({ code: 'tracing_project_not_found' });
    expect(String(one.body.detail)).toContain(missing);

    const good = randomUUID();
    const inBatch = randomUUID();
    const batch = await send('POST', '/runs/batch', { post: [{ id: good, name: 'fine', run_type: 'chain' }, { id: inBatch, name: 'lost', run_type: 'chain', session_id: missing }] });
    expect(batch.status).toBe(404);
    expect(String(batch.body.detail)).toContain(missing);

    const inForm = randomUUID();
    const form = await sendMultipart({ [`post.${inForm}`]: { id: inForm, name: 'lost', run_type: 'chain', session_id: missing } });
    expect(form.status).toBe(404);
    expect(String(form.body.detail)).toContain(missing);

    for (const id of [single, good, inBatch, inForm]) expect(await status(id)).toBe(404);

    // A session_id of an existing project still files the run there.
    const project = (await server.client.POST('/v1/tracing/projects', { body: { name: `round3-${randomUUID()}` } })).data!;
    const filed = randomUUID();
    expect((await send('POST', '/runs', { id: filed, name: 'filed', run_type: 'chain', session_id: project.id })).status).toBe(202);
    const run = await server.client.GET('/v1/tracing/runs/{run_id}', { params: { path: { run_id: filed } } });
    expect(run.data!.project_id).toBe(project.id);
  });
});

describe('a run ending before it starts', () => {
  it('is a 422 naming the run, whether sent in a post, a batch, multipart or a later patch', async () => {
    const start = Date.parse('2026-11-24T12:00:00Z');
    const early = start - 60_000;

    const single = randomUUID();
    const one = await send('POST', '/runs', { id: single, name: 'backwards', run_type: 'chain', start_time: start, end_time: early });
    expect(one.status).toBe(422);
    expect(String(one.body.detail)).toContain(single);

    const inBatch = randomUUID();
    const batch = await send('POST', '/runs/batch', { post: [{ id: inBatch, name: 'backwards', run_type: 'chain', start_time: start, end_time: early }] });
    expect(batch.status).toBe(422);
    expect(String(batch.body.detail)).toContain(inBatch);

    const inForm = randomUUID();
    const form = await sendMultipart({ [`post.${inForm}`]: { id: inForm, name: 'backwards', run_type: 'chain', start_time: start, end_time: early } });
    expect(form.status).toBe(422);
    expect(String(form.body.detail)).toContain(inForm);
    for (const id of [single, inBatch, inForm]) expect(await status(id)).toBe(404);

    const patched = randomUUID();
    expect((await send('POST', '/runs', { id: patched, name: 'patched', run_type: 'chain', start_time: start })).status).toBe(202);
    const patch = await send('PATCH', `/runs/${patched}`, { end_time: early });
    expect(patch.status).toBe(422);
    expect(String(patch.body.detail)).toContain(patched);
    const stored = await server.client.GET('/v1/tracing/runs/{run_id}', { params: { path: { run_id: patched } } });
    expect(stored.data!.end_time ?? null).toBeNull();

    // Ending when it starts, or later, is fine.
    expect((await send('PATCH', `/runs/${patched}`, { end_time: start + 1500 })).status).toBe(202);
    const ended = await server.client.GET('/v1/tracing/runs/{run_id}', { params: { path: { run_id: patched } } });
    expect(ended.data!.end_time).toBe(new Date(start + 1500).toISOString());
  });
});

describe('a multipart run part named for one run holding another id', () => {
  it('is a 422 naming both ids, and neither run is stored', async () => {
    const named = randomUUID();
    const held = randomUUID();
    const res = await sendMultipart({ [`post.${named}`]: { id: held, name: 'mismatch', run_type: 'chain' }, [`post.${named}.inputs`]: { q: 'hi' } });
    expect(res.status).toBe(422);
    expect(String(res.body.detail)).toContain(named);
    expect(String(res.body.detail)).toContain(held);
    expect(await status(named)).toBe(404);
    expect(await status(held)).toBe(404);
  });
});

describe('hangar traces, printing names and errors sent by a traced application', () => {
  it('shows control characters escaped in its tables and trees, and as sent in --json', async () => {
    const project = `cli-escapes-${randomUUID()}`;
    const root = randomUUID();
    const child = randomUUID();
    const evil = 'evil\u001b]0;pwned\u0007\u001b[2J';
    const start = Date.now() - 5000;
    const batch = await send('POST', '/runs/batch', {
      post: [
        { id: root, name: evil, run_type: 'chain', session_name: project, start_time: start, end_time: start + 2000 },
        { id: child, name: 'child\r\u001b[31mred', run_type: 'tool', session_name: project, parent_run_id: root, start_time: start + 1, end_time: start + 1000, error: 'boom\u001b[0m\nsecond line' },
      ],
    });
    expect(batch.status).toBe(202);
    const env = { HANGAR_URL: server.url, HANGAR_API_KEY: server.adminKey };

    const list = await runHangar(['traces', 'list', '--project', project], env);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout.replaceAll('\n', '')).not.toMatch(/\p{Cc}/u);
    expect(list.stdout).toContain('evil\\x1b]0;pwned\\x07\\x1b[2J');

    const shown = await runHangar(['traces', 'show', root], env);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout.replaceAll('\n', '')).not.toMatch(/\p{Cc}/u);
    expect(shown.stdout).toContain('evil\\x1b]0;pwned');
    expect(shown.stdout).toContain('child\\x0d\\x1b[31mred (tool, error');
    expect(shown.stdout).toContain('boom\\x1b[0m\\x0asecond line');

    const json = await runHangar(['traces', 'list', '--project', project, '--json'], env);
    expect((JSON.parse(json.stdout) as { items: { name: string }[] }).items[0]!.name).toBe(evil);
  }, 120_000);
});

describe('a project name sent by an application', () => {
  it('is redacted like a run name: a token in it is neither stored nor listed', async () => {
    const id = randomUUID();
    const tag = randomUUID().slice(0, 8);
    const sent = await send('POST', '/runs', { id, name: 'named', run_type: 'chain', session_name: `proj-${tag} Bearer projectNameToken0123456789` });
    expect(sent.status).toBe(202);
    const projects = (await server.client.GET('/v1/tracing/projects')).data!.items;
    expect(JSON.stringify(projects)).not.toContain('projectNameToken');
    const project = projects.find((p) => p.name.startsWith(`proj-${tag}`))!;
    expect(project.name).toBe(`proj-${tag} Bearer [redacted]`);
    const run = await server.client.GET('/v1/tracing/runs/{run_id}', { params: { path: { run_id: id } } });
    expect(run.data!.project_id).toBe(project.id);
  });
});
