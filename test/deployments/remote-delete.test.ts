// A deployment deleted through another replica: the replica hosting its application (each replica
// with a data directory of its own, as on separate hosts) stops it, closes its front port and removes
// its directory.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import * as tar from 'tar';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { apiCall } from './api.js';
import { waitFor } from './git-fixture.js';

const secretKey = randomBytes(32).toString('hex');
const opened: TestServer[] = [];
afterAll(async () => {
  for (const s of opened.reverse()) await s.close();
});

async function upload(server: TestServer): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'hangar-remote-delete-'));
  const app = path.join(dir, 'app');
  await mkdir(app);
  await writeFile(path.join(app, 'package.json'), JSON.stringify({ name: 'hosted', type: 'module' }));
  await writeFile(path.join(app, 'langgraph.json'), JSON.stringify({ graphs: { echo: './graph.mjs:graph' } }));
  await writeFile(
    path.join(app, 'graph.mjs'),
    `import { Annotation, StateGraph, START, END } from '@langchain/langgraph';
const S = Annotation.Root({ text: Annotation() });
export const graph = new StateGraph(S).addNode('n', (s) => ({ text: 'hi ' + s.text })).addEdge(START, 'n').addEdge('n', END).compile();
`,
  );
  const file = path.join(dir, 'app.tar.gz');
  await tar.c({ gzip: true, file, cwd: dir }, ['app']);
  const u = await apiCall(server, 'POST', '/v2/deployments/uploads');
  expect((await apiCall(server, 'PUT', u.body.upload_url, await readFile(file), 'application/gzip')).status).toBe(200);
  return u.body.source_tarball_path as string;
}

async function runtimeUrl(databaseUrl: string, revisionId: string): Promise<string> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query('SELECT runtime_url FROM deployment_revisions WHERE id = $1', [revisionId])).rows[0].runtime_url as string;
  } finally {
    await client.end();
  }
}

describe('a deployment deleted through another replica', () => {
  it('stops on the replica hosting it: its front port closes and its directory goes', { timeout: 180_000 }, async () => {
    // A looks for other processes' work rarely: it must notice the deletion by itself (its lease
    // renewal), not by taking the deletion over.
    const a = await startTestServer({ env: { HANGAR_SECRET_KEY: secretKey, HANGAR_DEPLOY_POLL_MS: '600000', HANGAR_DEPLOY_LEASE_MS: '3000' } });
    opened.push(a);
    const created = await apiCall(a, 'POST', '/v2/deployments', {
      name: 'hosted-on-a',
      source: 'internal_source',
      source_config: {},
      source_revision_config: { source_tarball_path: await upload(a) },
      secrets: [],
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const rev = created.body.latest_revision_id as string;
    await waitFor('the deployment to be READY on A', async () => {
      const d = (await apiCall(a, 'GET', `/v2/deployments/${id}`)).body;
      const r = (await apiCall(a, 'GET', `/v2/deployments/${id}/revisions/${rev}`)).body;
      if (r.status.endsWith('_FAILED')) throw new Error(`${r.status}: ${r.status_message}`);
      return d.status === 'READY' ? d : undefined;
    });
    const front = await runtimeUrl(a.databaseUrl, rev);
    expect((await fetch(`${front}/ok`)).status).toBe(200);
    const dirOnA = path.join(a.dataDir, 'deployments', id);
    expect(existsSync(dirOnA)).toBe(true);

    // B: same database, its own data directory.
    const b = await startTestServer({ databaseUrl: a.databaseUrl, adminKey: a.adminKey, env: { HANGAR_SECRET_KEY: secretKey, HANGAR_DEPLOY_POLL_MS: '300', HANGAR_DEPLOY_LEASE_MS: '3000' } });
    opened.push(b);
    expect(b.dataDir).not.toBe(a.dataDir);
    expect((await apiCall(b, 'DELETE', `/v2/deployments/${id}`)).status).toBe(204);
    await waitFor('the deployment to disappear', async () => ((await apiCall(b, 'GET', `/v2/deployments/${id}`)).status === 404 ? true : undefined));

    // On A: the front port no longer answers and the directory is gone.
    await waitFor('A to close the front port', async () => ((await fetch(`${front}/ok`).then(() => false, () => true)) ? true : undefined), 30_000);
    await waitFor('A to remove the directory', async () => (existsSync(dirOnA) ? undefined : true), 30_000);
    expect((await fetch(`${a.url}/v2/deployments/${id}/app/ok`, { headers: { 'X-Api-Key': a.adminKey } })).status).toBe(404);
  });
});
