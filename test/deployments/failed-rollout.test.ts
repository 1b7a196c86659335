// A rollout that fails half-way on the local driver: the new revision is healthy, the previous one
// has been stopped for the switch-over, and then the new one fails to take over the deployment's
// database. The previous revision must serve again (with its conversations), not nothing.
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
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

/**
 * Upload an application whose graph answers `<label> <text>`; `failTakeOver` makes it exit when asked
 * to take over its database; `onceOnly` makes it refuse to start in a second process.
 */
async function upload(label: string, failTakeOver: boolean, onceOnly = false): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'hangar-rollout-'));
  const app = path.join(dir, 'app');
  await mkdir(app);
  await writeFile(path.join(app, 'package.json'), JSON.stringify({ name: label, type: 'module' }));
  await writeFile(path.join(app, 'langgraph.json'), JSON.stringify({ graphs: { echo: './graph.mjs:graph' } }));
  await writeFile(
    path.join(app, 'graph.mjs'),
    `import { Annotation, StateGraph, START, END } from '@langchain/langgraph';
${failTakeOver ? "process.on('message', (m) => { if (m && m.type === 'activate') process.exit(7); });\n" : ''}${
      onceOnly
        ? // A process is known by its pid and start time (a confined one has a pid of its own namespace, the same each time).
          "import { existsSync, readFileSync, writeFileSync } from 'node:fs';\nconst me = process.pid + ':' + readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ')[19];\nif (existsSync('started-by') && readFileSync('started-by', 'utf8') !== me) throw new Error('this revision starts only once');\nwriteFileSync('started-by', me);\n"
        : ''
    }const S = Annotation.Root({ text: Annotation() });
export const graph = new StateGraph(S).addNode('n', (s) => ({ text: '${label} ' + s.text })).addEdge(START, 'n').addEdge('n', END).compile();
`,
  );
  const file = path.join(dir, 'app.tar.gz');
  await tar.c({ gzip: true, file, cwd: dir }, ['app']);
  const u = await api('POST', '/v2/deployments/uploads');
  expect((await api('PUT', u.body.upload_url, await readFile(file), 'application/gzip')).status).toBe(200);
  return u.body.source_tarball_path as string;
}

async function settled(id: string, rev: string): Promise<{ status: string; status_message: string | null }> {
  return waitFor(`revision ${rev} to finish`, async () => {
    const r = (await api('GET', `/v2/deployments/${id}/revisions/${rev}`)).body;
    return ['DEPLOYED', 'BUILD_FAILED', 'DEPLOY_FAILED', 'SKIPPED', 'INTERRUPTED'].includes(r.status) ? r : undefined;
  });
}

describe('a rollout that fails after the previous revision stopped', () => {
  it('starts the previous revision again: the deployment keeps answering, with its threads', { timeout: 180_000 }, async () => {
    const created = await api('POST', '/v2/deployments', {
      name: 'half-way',
      source: 'internal_source',
      source_config: {},
      source_revision_config: { source_tarball_path: await upload('v1', false) },
      secrets: [],
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const rev1 = created.body.latest_revision_id as string;
    expect((await settled(id, rev1)).status).toBe('DEPLOYED');
    const appUrl = (await api('GET', `/v2/deployments/${id}`)).body.source_config.custom_url as string;
    const app = (method: string, p: string, body?: unknown) => api(method, `${appUrl.slice(server.url.length)}${p}`, body);

    const thread = await app('POST', '/threads', {});
    expect(thread.status).toBe(200);
    const first = await app('POST', `/threads/${thread.body.thread_id}/runs/wait`, { assistant_id: 'echo', input: { text: 'one' } });
    expect(first).toEqual({ status: 200, body: { text: 'v1 one' } });

    const patched = await api('PATCH', `/v2/deployments/${id}`, { source_revision_config: { source_tarball_path: await upload('v2', true) } });
    expect(patched.status).toBe(200);
    const rev2 = patched.body.latest_revision_id as string;
    const failed = await settled(id, rev2);
    expect(failed).toMatchObject({ status: 'DEPLOY_FAILED', status_message: 'the application exited while taking over its database' });

    const d = (await api('GET', `/v2/deployments/${id}`)).body;
    expect(d).toMatchObject({ status: 'READY', active_revision_id: rev1 });
    const after = await app('POST', '/runs/wait', { assistant_id: 'echo', input: { text: 'two' } });
    expect(after).toEqual({ status: 200, body: { text: 'v1 two' } });
    const state = await app('GET', `/threads/${thread.body.thread_id}/state`);
    expect(state.status).toBe(200);
    expect(state.body.values).toEqual({ text: 'v1 one' });
    const log = (await api('GET', `/v2/deployments/${id}/revisions/${rev2}/deploy-logs`)).body.logs as string;
    expect(log).toContain('could not take over; starting the previous revision again');
  });

  it('when the previous revision does not start again either, the deployment says nothing serves (UNKNOWN, not READY)', { timeout: 180_000 }, async () => {
    const created = await api('POST', '/v2/deployments', {
      name: 'nothing-left',
      source: 'internal_source',
      source_config: {},
      source_revision_config: { source_tarball_path: await upload('v1', false, true) },
      secrets: [],
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const rev1 = created.body.latest_revision_id as string;
    expect((await settled(id, rev1)).status).toBe('DEPLOYED');
    expect((await api('GET', `/v2/deployments/${id}`)).body.status).toBe('READY');

    const patched = await api('PATCH', `/v2/deployments/${id}`, { source_revision_config: { source_tarball_path: await upload('v2', true) } });
    const rev2 = patched.body.latest_revision_id as string;
    const failed = await settled(id, rev2);
    expect(failed.status).toBe('DEPLOY_FAILED');
    expect(failed.status_message).toBe('the application exited while taking over its database; the previous revision did not start again either: nothing serves the deployment');
    const d = (await api('GET', `/v2/deployments/${id}`)).body;
    expect(d).toMatchObject({ status: 'UNKNOWN', active_revision_id: rev1 });
    const appUrl = d.source_config.custom_url as string;
    expect((await api('GET', `${appUrl.slice(server.url.length)}/ok`)).status).not.toBe(200);
    const log = (await api('GET', `/v2/deployments/${id}/revisions/${rev2}/deploy-logs`)).body.logs as string;
    expect(log).toContain('the previous revision did not start again either: nothing serves the deployment (status UNKNOWN)');
  });
});
