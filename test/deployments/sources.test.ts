// The other sources of the local driver: an uploaded tarball (internal_source) and the shipped
// deep-agent template (internal_template), each deployed until it answers.
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import pg from 'pg';
import * as tar from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { apiCall } from './api.js';
import { waitFor } from './git-fixture.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ env: { HANGAR_DEPLOY_POLL_MS: '300' } });
});
afterAll(async () => {
  await server?.close();
});

const api = (method: string, p: string, body?: unknown, type?: string) => apiCall(server, method, p, body, type);

async function ready(id: string): Promise<any> {
  return waitFor(`deployment ${id} to be READY`, async () => {
    const d = (await api('GET', `/v2/deployments/${id}`)).body;
    const rev = (await api('GET', `/v2/deployments/${id}/revisions/${d.latest_revision_id}`)).body;
    if (rev.status.endsWith('_FAILED')) throw new Error(`${rev.status}: ${rev.status_message}`);
    return d.status === 'READY' ? d : undefined;
  });
}

describe('internal_source', () => {
  it('hands out an upload location, takes the tarball, and deploys it', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'hangar-upload-'));
    const app = path.join(dir, 'app');
    await (await import('node:fs/promises')).mkdir(app);
    await writeFile(path.join(app, 'package.json'), JSON.stringify({ name: 'uploaded', type: 'module' }));
    await writeFile(path.join(app, 'langgraph.json'), JSON.stringify({ graphs: { shout: './shout.mjs:graph' }, env: '.env' }));
    await writeFile(path.join(app, '.env'), 'SUFFIX="!!"\n# a comment\n');
    await writeFile(
      path.join(app, 'shout.mjs'),
      `import { Annotation, StateGraph, START, END } from '@langchain/langgraph';
const S = Annotation.Root({ text: Annotation() });
export const graph = new StateGraph(S).addNode('up', (s) => ({ text: s.text.toUpperCase() + process.env.SUFFIX })).addEdge(START, 'up').addEdge('up', END).compile();
`,
    );
    const file = path.join(dir, 'app.tar.gz');
    await tar.c({ gzip: true, file, cwd: dir }, ['app']);

    const upload = await api('POST', '/v2/deployments/uploads');
    expect(upload.status).toBe(201);
    expect(upload.body.source_tarball_path).toMatch(/^uploads\/[0-9a-f-]{36}\.tar\.gz$/);
    const notGzip = await api('PUT', upload.body.upload_url, Buffer.from('plain text'), 'application/gzip');
    expect(notGzip).toEqual({ status: 400, body: { detail: 'the upload must be a gzip-compressed tarball (.tar.gz)' } });
    const put = await api('PUT', upload.body.upload_url, await (await import('node:fs/promises')).readFile(file), 'application/gzip');
    expect(put.status).toBe(200);

    const created = await api('POST', '/v2/deployments', {
      name: 'uploaded-app',
      source: 'internal_source',
      source_config: {},
      source_revision_config: { source_tarball_path: upload.body.source_tarball_path },
      secrets: [],
    });
    expect(created.status).toBe(201);
    const d = await ready(created.body.id);
    const run = await fetch(`${d.source_config.custom_url}/runs/wait`, {
      method: 'POST',
      headers: { 'X-Api-Key': server.adminKey, 'Content-Type': 'application/json' },
      body: JSON.stringify({ assistant_id: 'shout', input: { text: 'hey' } }),
    });
    expect(await run.json()).toEqual({ text: 'HEY!!' });

    // The tarball a revision was made from stays what it builds (a redeploy builds it again):
    // replacing it is refused, and a new upload is the way to other source.
    const replaced = await api('PUT', upload.body.upload_url, await (await import('node:fs/promises')).readFile(file), 'application/gzip');
    expect(replaced.status).toBe(409);
    expect(replaced.body.detail).toMatch(/start a new upload/);
    const fresh = await api('POST', '/v2/deployments/uploads');
    expect((await api('PUT', fresh.body.upload_url, await (await import('node:fs/promises')).readFile(file), 'application/gzip')).status).toBe(200);
    expect((await api('PUT', fresh.body.upload_url, await (await import('node:fs/promises')).readFile(file), 'application/gzip')).status).toBe(200);
  });
  it('refuses an upload that unpacks past its limits (a gzip bomb, too many entries), storing nothing', async () => {
    const zeros = Buffer.alloc(1024 * 1024);
    const header = (name: string, size: number) => new tar.Header({ path: name, size, type: size ? 'File' : 'Directory', mode: 0o644, mtime: new Date(0) });
    const encode = (h: tar.Header) => {
      const block = Buffer.alloc(512);
      h.encode(block);
      return block;
    };
    // One file of 300 MiB of zeros: ~300 KB once gzipped, within the 8 MiB upload limit.
    const bombSize = 300 * 1024 * 1024;
    const gzip = zlib.createGzip({ level: 9 });
    const gzipped: Buffer[] = [];
    gzip.on('data', (c: Buffer) => gzipped.push(c));
    const ended = new Promise((resolve) => gzip.on('end', resolve));
    gzip.write(encode(header('app/zeros.bin', bombSize)));
    for (let i = 0; i < 300; i++) if (!gzip.write(zeros)) await new Promise((r) => gzip.once('drain', r));
    gzip.end(Buffer.alloc(1024));
    await ended;
    const bomb = Buffer.concat(gzipped);
    expect(bomb.length).toBeLessThan(8 * 1024 * 1024);
    // 60,000 empty directories: small, but past the entry limit.
    const many = zlib.gzipSync(Buffer.concat([...Array.from({ length: 60_000 }, (_, i) => encode(header(`app/d${i}/`, 0))), Buffer.alloc(1024)]));

    const db = new pg.Client({ connectionString: server.databaseUrl });
    await db.connect();
    try {
      for (const [body, why] of [[bomb, /expands to more than 256 MiB/], [many, /more than 50000 entries/]] as const) {
        const upload = await api('POST', '/v2/deployments/uploads');
        const put = await api('PUT', upload.body.upload_url, body, 'application/gzip');
        expect(put.status).toBe(400);
        expect(put.body.detail).toMatch(why);
        const id = /([0-9a-f-]{36})\.tar\.gz$/.exec(upload.body.source_tarball_path)![1];
        const stored = await db.query('SELECT content IS NULL AS empty FROM deployment_uploads WHERE id = $1', [id]);
        expect(stored.rows).toEqual([{ empty: true }]);
      }
    } finally {
      await db.end();
    }
  });
});

describe('internal_template', () => {
  it('deploys the shipped deep-agent template, which registers its graph', async () => {
    const created = await api('POST', '/v2/deployments', {
      name: 'deep',
      source: 'internal_template',
      source_config: {},
      source_revision_config: {},
      // The model is only called on a run; none happens here (model providers are unreachable SaaS).
      secrets: [{ name: 'MODEL', value: 'anthropic:claude-sonnet-4-5' }],
    });
    expect(created.status).toBe(201);
    const d = await ready(created.body.id);
    const res = await fetch(`${d.source_config.custom_url}/assistants/search`, {
      method: 'POST',
      headers: { 'X-Api-Key': server.adminKey, 'Content-Type': 'application/json' },
      body: JSON.stringify({ graph_id: 'deep-agent' }),
    });
    expect(res.status).toBe(200);
    const assistants = (await res.json()) as { graph_id: string }[];
    expect(assistants.map((a) => a.graph_id)).toEqual(['deep-agent']);
    const graph = await fetch(`${d.source_config.custom_url}/assistants/${(assistants[0] as unknown as { assistant_id: string }).assistant_id}/graph`, { headers: { 'X-Api-Key': server.adminKey } });
    expect(graph.status).toBe(200);
    const nodes = ((await graph.json()) as { nodes: { id: string }[] }).nodes.map((n) => n.id);
    expect(nodes).toContain('model_request');
  });

  it('an unknown template is refused with the list of templates, on create and on PATCH, and nothing is made', async () => {
    const refusal = { loc: ['body', 'source_revision_config', 'repo_ref'], msg: 'names no template on this server (templates: deep-agent)', type: 'value_error' };
    const created = await api('POST', '/v2/deployments', { name: 'nope', source: 'internal_template', source_config: {}, source_revision_config: { repo_ref: 'no-such' }, secrets: [] });
    expect(created.status).toBe(422);
    expect(created.body.detail).toEqual([refusal]);
    expect((await api('GET', '/v2/deployments?name_contains=nope')).body.resources).toEqual([]);
    const ok = await api('POST', '/v2/deployments', { name: 'tmpl-patch', source: 'internal_template', source_config: {}, source_revision_config: {}, secrets: [] });
    expect(ok.status).toBe(201);
    try {
      const patched = await api('PATCH', `/v2/deployments/${ok.body.id}`, { source_revision_config: { repo_ref: 'no-such' } });
      expect(patched.status).toBe(422);
      expect(patched.body.detail).toEqual([refusal]);
      const after = (await api('GET', `/v2/deployments/${ok.body.id}`)).body;
      expect(after.latest_revision_id).toBe(ok.body.latest_revision_id);
      expect(after.source_revision_config.repo_ref).toBe('deep-agent');
    } finally {
      await api('DELETE', `/v2/deployments/${ok.body.id}`);
    }
  });
});
