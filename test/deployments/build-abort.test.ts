// A revision superseded or deleted while it builds: its running build step is stopped (its whole
// process group), no later step starts, and the build log says it was stopped and why.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import * as tar from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { apiCall } from './api.js';
import { waitFor } from './git-fixture.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ env: { HANGAR_DEPLOY_POLL_MS: '300', HANGAR_DEPLOY_LEASE_MS: '3000' } });
});
afterAll(async () => {
  await server?.close();
});

const api = (method: string, p: string, body?: unknown, type?: string) => apiCall(server, method, p, body, type);

async function upload(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'hangar-abort-'));
  const app = path.join(dir, 'app');
  await mkdir(app);
  await writeFile(path.join(app, 'package.json'), JSON.stringify({ name: 'slow', type: 'module' }));
  await writeFile(path.join(app, 'langgraph.json'), JSON.stringify({ graphs: { echo: './graph.mjs:graph' } }));
  await writeFile(path.join(app, 'graph.mjs'), 'export const graph = null;\n');
  const file = path.join(dir, 'app.tar.gz');
  await tar.c({ gzip: true, file, cwd: dir }, ['app']);
  const u = await api('POST', '/v2/deployments/uploads');
  expect((await api('PUT', u.body.upload_url, await readFile(file), 'application/gzip')).status).toBe(200);
  return u.body.source_tarball_path as string;
}

/** Processes of this machine whose command line contains `needle` (confined ones included: /proc shows every PID namespace below ours). */
async function processesWith(needle: string): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.split('\0').join(' ').includes(needle)) found.push(Number(entry));
  }
  return found;
}

const buildLog = async (id: string, rev: string) => (await api('GET', `/v2/deployments/${id}/revisions/${rev}/build-logs`)).body.logs as string;

describe('a revision superseded while it builds', () => {
  it('stops the running build step at once, starts no later one, and says why in the build log', { timeout: 120_000 }, async () => {
    // A unique sleep, so its processes can be found; each step leaves a marker when it ends.
    const seconds = 3000 + Math.floor(Math.random() * 900);
    const created = await api('POST', '/v2/deployments', {
      name: 'slow',
      source: 'internal_source',
      source_config: { install_command: `sleep ${seconds}; touch install-ended`, build_command: 'touch build-ran' },
      source_revision_config: { source_tarball_path: await upload() },
      secrets: [],
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const rev = created.body.latest_revision_id as string;
    await waitFor('the install step to start', async () => ((await processesWith(`sleep ${seconds}`)).length > 0 ? true : undefined));
    const root = path.join(server.dataDir, 'deployments', id, rev, 'src');
    expect(existsSync(root)).toBe(true);

    const patched = await api('PATCH', `/v2/deployments/${id}`, { source_config: { install_command: null, build_command: null }, source_revision_config: { source_tarball_path: await upload() } });
    expect(patched.status).toBe(200);
    const logs = await waitFor('the build log to say the build was stopped', async () => {
      const l = await buildLog(id, rev);
      return l.includes('[hangar] build stopped') ? l : undefined;
    });
    expect(logs).toMatch(/\[hangar\] build stopped: superseded by revision 2 before it started deploying/);
    expect((await api('GET', `/v2/deployments/${id}/revisions/${rev}`)).body.status).toBe('SKIPPED');
    // The step's whole process group is gone (no sleeping process of it is left)…
    await waitFor('the install step to be stopped', async () => ((await processesWith(`sleep ${seconds}`)).length === 0 ? true : undefined), 30_000);
    // …and neither it nor a later step went on.
    expect(existsSync(path.join(root, 'install-ended'))).toBe(false);
    expect(existsSync(path.join(root, 'build-ran'))).toBe(false);
    expect(logs).not.toContain('$ touch build-ran');
  });
});
