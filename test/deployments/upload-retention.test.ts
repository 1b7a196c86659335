// Upload retention: an upload no revision refers to is deleted once older than
// HANGAR_DEPLOY_UPLOAD_RETENTION_HOURS (by a sweeper, at start and hourly); an upload a revision still
// refers to stays, and deleting its deployment releases it. Age is written straight into the
// database, as hours of waiting would have left it.
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import * as tar from 'tar';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { apiCall } from './api.js';
import { waitFor } from './git-fixture.js';

const servers: TestServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.close();
});

const ENV = { HANGAR_DEPLOY_UPLOAD_RETENTION_HOURS: '2', HANGAR_DEPLOY_POLL_MS: '300' };

/** A tarball with no langgraph.json: a deployment of it fails its build at once (nothing is run). */
async function tarball(): Promise<Buffer> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'hangar-retention-'));
  await mkdir(path.join(dir, 'app'));
  await writeFile(path.join(dir, 'app', 'package.json'), JSON.stringify({ name: 'x' }));
  const file = path.join(dir, 'app.tar.gz');
  await tar.c({ gzip: true, file, cwd: dir }, ['app']);
  return readFile(file);
}

describe('deployment upload retention', () => {
  it('deletes old uploads no revision refers to, keeps referenced ones, and releases those of a deleted deployment', { timeout: 120_000 }, async () => {
    const first = await startTestServer({ env: ENV });
    servers.push(first);
    const api = (method: string, p: string, body?: unknown, type?: string) => apiCall(first, method, p, body, type);
    const bytes = await tarball();
    const newUpload = async (put = true) => {
      const u = await api('POST', '/v2/deployments/uploads');
      expect(u.status).toBe(201);
      if (put) expect((await api('PUT', u.body.upload_url, bytes, 'application/gzip')).status).toBe(200);
      return { id: /([0-9a-f-]{36})\.tar\.gz$/.exec(u.body.source_tarball_path)![1]!, path: u.body.source_tarball_path as string, url: u.body.upload_url as string };
    };
    const deploy = async (name: string, tarballPath: string) => {
      const d = await api('POST', '/v2/deployments', { name, source: 'internal_source', source_config: {}, source_revision_config: { source_tarball_path: tarballPath }, secrets: [] });
      expect(d.status).toBe(201);
      return d.body.id as string;
    };
    const unused = await newUpload();
    const recent = await newUpload();
    const neverPut = await newUpload(false);
    const inUse = await newUpload();
    const released = await newUpload();
    await deploy('keeps-its-upload', inUse.path);
    const doomed = await deploy('is-deleted', released.path);
    expect((await api('DELETE', `/v2/deployments/${doomed}`)).status).toBe(204);
    await waitFor('the deployment to be deleted', async () => ((await api('GET', `/v2/deployments/${doomed}`)).status === 404 ? true : undefined));

    const db = new pg.Client({ connectionString: first.databaseUrl });
    await db.connect();
    const present = async () => new Set((await db.query<{ id: string }>('SELECT id FROM deployment_uploads')).rows.map((r) => r.id));
    try {
      // Three hours old, past the two of the retention; `recent` is an hour old.
      const old = [unused.id, neverPut.id, inUse.id, released.id];
      await db.query("UPDATE deployment_uploads SET created_at = now() - interval '3 hours', uploaded_at = CASE WHEN uploaded_at IS NULL THEN NULL ELSE now() - interval '3 hours' END WHERE id = ANY($1::uuid[])", [old]);
      await db.query("UPDATE deployment_uploads SET created_at = now() - interval '1 hour', uploaded_at = now() - interval '1 hour' WHERE id = $1", [recent.id]);
      await first.close();
      servers.pop();

      // The sweeper runs when a server starts.
      const second = await startTestServer({ databaseUrl: first.databaseUrl, dataDir: first.dataDir, adminKey: first.adminKey, env: ENV });
      servers.push(second);
      const left = await waitFor('the old unreferenced uploads to be deleted', async () => {
        const ids = await present();
        return [unused.id, neverPut.id, released.id].some((id) => ids.has(id)) ? undefined : ids;
      }, 30_000);
      expect(left.has(inUse.id)).toBe(true);
      expect(left.has(recent.id)).toBe(true);

      // A deleted upload is gone for the API too: a clear 4xx, nothing created.
      const again = await apiCall(second, 'POST', '/v2/deployments', { name: 'too-late', source: 'internal_source', source_config: {}, source_revision_config: { source_tarball_path: unused.path }, secrets: [] });
      expect(again.status).toBe(422);
      expect(JSON.stringify(again.body)).toContain('source_tarball_path');
      expect((await apiCall(second, 'PUT', unused.url, bytes, 'application/gzip')).status).toBe(404);
      expect((await apiCall(second, 'GET', '/v2/deployments')).body.resources.map((d: { name: string }) => d.name)).toEqual(['keeps-its-upload']);
    } finally {
      await db.end();
    }
  });
});
