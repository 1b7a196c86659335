// The reconciler across processes: a restart of Hangar in the middle of a build resumes it; a
// revision left by a process that died is taken over when its lease expires; with two processes on
// one database every revision is built and deployed exactly once.
import { chmod, mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { freshDatabaseUrl } from '../support/database.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { apiCall } from './api.js';
import { makeAppRepo, waitFor } from './git-fixture.js';

const opened: TestServer[] = [];
afterAll(async () => {
  for (const s of opened.reverse()) await s.close().catch(() => {});
});

// Replicas share the secret key, as they must in production. The lease is long enough that a
// machine under load does not hand live work over (the orphan's lease has already run out).
const ENV = { HANGAR_SECRET_KEY: 'ab'.repeat(32), HANGAR_DEPLOY_ALLOW_LOCAL_REPOS: 'true', HANGAR_LOCAL_REPO_ROOTS: os.tmpdir(), HANGAR_DEPLOY_POLL_MS: '300', HANGAR_DEPLOY_LEASE_MS: '15000' };

async function start(options: Parameters<typeof startTestServer>[0]): Promise<TestServer> {
  const s = await startTestServer(options);
  opened.push(s);
  return s;
}

async function sql<T = any>(url: string, text: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, params)).rows as T[];
  } finally {
    await client.end();
  }
}

const api = async (s: TestServer, method: string, p: string, body?: unknown) => (await apiCall(s, method, p, body)).body;

const revisionStatus = async (s: TestServer, d: string, r: string) => (await api(s, 'GET', `/v2/deployments/${d}/revisions/${r}`)).status as string;

describe('reconciler', () => {
  it('resumes a build interrupted by a restart of Hangar', async () => {
    const repo = await makeAppRepo();
    await repo.push('main', { label: 'v1' });
    const databaseUrl = await freshDatabaseUrl();
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'hangar-restart-'));
    // Outside the data directory: builds do not see it (src/deploy/local/confine.ts).
    const marker = await markerFile();
    const a = await start({ databaseUrl, dataDir, env: ENV });
    // An install step that blocks until the test lets it finish, so the restart lands mid-build.
    const install = `node -e 'const f=${JSON.stringify(marker)};const w=()=>require("fs").existsSync(f)?process.exit(0):setTimeout(w,100);w()'`;
    const d = await api(a, 'POST', '/v2/deployments', {
      name: 'restart-app',
      source: 'vcshost',
      source_config: { repo_url: repo.url, install_command: install },
      source_revision_config: { repo_ref: 'main' },
      secrets: [],
    });
    const rev = d.latest_revision_id as string;
    await waitFor('the install step to start', async () => {
      const logs = (await api(a, 'GET', `/v2/deployments/${d.id}/revisions/${rev}/build-logs`)).logs as string;
      return logs.includes('$ node -e') ? true : undefined;
    });
    expect(await revisionStatus(a, d.id, rev)).toBe('BUILDING');
    await a.close();
    opened.splice(opened.indexOf(a), 1);
    const [left] = await sql(databaseUrl, 'SELECT status, claimed_by FROM deployment_revisions WHERE id = $1', [rev]);
    expect(left).toEqual({ status: 'BUILDING', claimed_by: null });

    const b = await start({ databaseUrl, dataDir, adminKey: a.adminKey, env: ENV });
    await waitFor('the build to start again', async () => {
      const logs = (await api(b, 'GET', `/v2/deployments/${d.id}/revisions/${rev}/build-logs`)).logs as string;
      return logs.includes('building again') ? true : undefined;
    });
    await writeFile(marker, 'go');
    const final = await waitFor('the revision to deploy', async () => {
      const s = await revisionStatus(b, d.id, rev);
      return ['DEPLOYED', 'BUILD_FAILED', 'DEPLOY_FAILED'].includes(s) ? s : undefined;
    });
    expect(final).toBe('DEPLOYED');
    expect((await api(b, 'GET', `/v2/deployments/${d.id}`)).status).toBe('READY');
    const [row] = await sql(databaseUrl, 'SELECT attempts FROM deployment_revisions WHERE id = $1', [rev]);
    expect(row.attempts).toBe(2);

    // Another restart: the next process starts the active revision again behind the same stable path.
    await b.close();
    opened.splice(opened.indexOf(b), 1);
    const c = await start({ databaseUrl, dataDir, adminKey: a.adminKey, env: ENV });
    const res = await waitFor('the application to answer after the restart', async () => {
      const r = await fetch(`${c.url}/v2/deployments/${d.id}/app/ok`, { headers: { 'X-Api-Key': c.adminKey } });
      return r.status === 200 ? r : undefined;
    });
    expect(await res.json()).toEqual({ ok: true });
    const after = await api(c, 'GET', `/v2/deployments/${d.id}`);
    expect(after).toMatchObject({ status: 'READY', active_revision_id: rev });
    expect(await revisionStatus(c, d.id, rev)).toBe('DEPLOYED');
  });

  it('takes over a revision whose process died (lease expired), and runs each revision once with two processes', async () => {
    const repo = await makeAppRepo();
    await repo.push('main', { label: 'v1' });
    const databaseUrl = await freshDatabaseUrl();
    const api0 = await start({ databaseUrl, env: { ...ENV, HANGAR_ROLE: 'api' } });
    const body = (name: string) => ({ name, source: 'vcshost', source_config: { repo_url: repo.url }, source_revision_config: { repo_ref: 'main' }, secrets: [] });
    const orphan = await api(api0, 'POST', '/v2/deployments', body('orphan'));
    // What a process that died mid-build leaves behind: BUILDING under a claim whose lease has run out.
    await sql(databaseUrl, "UPDATE deployment_revisions SET status = 'BUILDING', claimed_by = 'reconciler-dead', lease_expires_at = now() - interval '1 second', attempts = 1 WHERE id = $1", [orphan.latest_revision_id]);
    const ids = [orphan.id];
    for (const name of ['twin-a', 'twin-b']) ids.push((await api(api0, 'POST', '/v2/deployments', body(name))).id);

    const env = { ...ENV, HANGAR_ROLE: 'worker' };
    await start({ databaseUrl, adminKey: api0.adminKey, env });
    await start({ databaseUrl, adminKey: api0.adminKey, env });
    for (const id of ids) {
      const dep = await waitFor(`deployment ${id} to be READY`, async () => {
        const got = await api(api0, 'GET', `/v2/deployments/${id}`);
        const rev = await revisionStatus(api0, id, got.latest_revision_id);
        return got.status === 'READY' || rev.endsWith('_FAILED') ? { status: got.status, rev } : undefined;
      }, 60_000).catch(async (error) => {
        console.log(await sql(databaseUrl, 'SELECT status, claimed_by, lease_expires_at, attempts, build_log, deploy_log, failure_reason FROM deployment_revisions'));
        throw error;
      });
      expect(dep).toEqual({ status: 'READY', rev: 'DEPLOYED' });
    }
    const rows = await sql(databaseUrl, 'SELECT d.name, r.attempts, r.build_log, r.deploy_log, r.claimed_by FROM deployment_revisions r JOIN deployments d ON d.id = r.deployment_id ORDER BY d.name');
    for (const r of rows) {
      expect(r.attempts, r.name).toBe(r.name === 'orphan' ? 2 : 1);
      expect(r.build_log.match(/\[hangar\] fetching/g), r.name).toHaveLength(1);
      expect(r.deploy_log.match(/\[hangar\] starting revision/g), r.name).toHaveLength(1);
      // Each active revision is hosted by one live process.
      expect(r.claimed_by).toMatch(/^reconciler-/);
      expect(r.claimed_by).not.toBe('reconciler-dead');
    }
  }, 180_000);

  it('keeps a revision claimed while a lease renewal was under way (a rollout is not stopped half-way)', async () => {
    const repo = await makeAppRepo();
    await repo.push('main', { label: 'v1' });
    const databaseUrl = await freshDatabaseUrl();
    // Renewals every 5 s; the lease (15 s) outlasts the rollout below, so nothing lapses meanwhile.
    const s = await start({ databaseUrl, env: ENV });
    const d = await api(s, 'POST', '/v2/deployments', { name: 'renewed', source: 'vcshost', source_config: { repo_url: repo.url }, source_revision_config: { repo_ref: 'main' }, secrets: [] });
    const rev1 = d.latest_revision_id as string;
    await waitFor('revision 1 to deploy', async () => ((await revisionStatus(s, d.id, rev1)) === 'DEPLOYED' ? true : undefined));
    const appUrl = `${s.url}/v2/deployments/${d.id}/app`;

    // Hold the serving revision's row: the next renewal (which names only revision 1) waits on it,
    // and answers only after revision 2 has been claimed and has taken over the front.
    const lock = new pg.Client({ connectionString: databaseUrl });
    await lock.connect();
    const waiting = async (like: string): Promise<boolean> =>
      Number((await sql(databaseUrl, "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE $1", [like]))[0].n) > 0;
    try {
      await lock.query('BEGIN');
      await lock.query('SELECT 1 FROM deployment_revisions WHERE id = $1 FOR NO KEY UPDATE', [rev1]);
      await waitFor('a lease renewal to wait on the lock', async () => ((await waiting('%SET lease_expires_at = now()%')) ? true : undefined));
      await repo.push('main', { label: 'v2' });
      const rev2 = (await api(s, 'PATCH', `/v2/deployments/${d.id}`, { source_revision_config: { repo_ref: 'main' } })).latest_revision_id as string;
      await waitFor('revision 2 to take over the front', async () => {
        const logs = (await api(s, 'GET', `/v2/deployments/${d.id}/revisions/${rev2}/deploy-logs`)).logs as string;
        return logs.includes('took over the deployment') ? true : undefined;
      });
      // Its activation (which marks revision 1 replaced) waits on the same row.
      await waitFor('the activation to wait on the lock', async () => ((await waiting('%"failure_reason"%"runtime_url"%')) ? true : undefined));
      await lock.query('COMMIT');

      const failures: string[] = [];
      await waitFor('revision 2 to be active and revision 1 let go', async () => {
        const r = await fetch(`${appUrl}/ok`, { headers: { 'X-Api-Key': s.adminKey } });
        if (r.status !== 200) failures.push(`${r.status} ${await r.text()}`);
        else await r.body?.cancel();
        const [row] = await sql(databaseUrl, 'SELECT (SELECT claimed_by FROM deployment_revisions WHERE id = $1) AS old, d.active_revision_id FROM deployments d WHERE d.id = $2', [rev1, d.id]);
        return row.old === null && row.active_revision_id === rev2 ? true : undefined;
      });
      expect(failures).toEqual([]);
      expect(await revisionStatus(s, d.id, rev2)).toBe('DEPLOYED');
      // Revision 2 was never stopped and started again by its own process.
      const logs = (await api(s, 'GET', `/v2/deployments/${d.id}/revisions/${rev2}/deploy-logs`)).logs as string;
      expect(logs).not.toContain('starting the active revision again');
      expect(logs.match(/\[hangar\] starting revision/g)).toHaveLength(1);
    } finally {
      await lock.end();
    }
  }, 120_000);

  it('does not claim a revision it is still building when its lease lapsed (a late renewal)', async () => {
    const repo = await makeAppRepo();
    await repo.push('main', { label: 'v1' });
    const databaseUrl = await freshDatabaseUrl();
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'hangar-lapse-'));
    // Outside the data directory: builds do not see it (src/deploy/local/confine.ts).
    const marker = await markerFile();
    // A long lease: renewals come every 20 s, so the one below is the only way it lapses.
    const s = await start({ databaseUrl, dataDir, env: { ...ENV, HANGAR_DEPLOY_LEASE_MS: '60000' } });
    const install = `node -e 'const f=${JSON.stringify(marker)};const w=()=>require("fs").existsSync(f)?process.exit(0):setTimeout(w,100);w()'`;
    const body = (name: string, installCommand?: string) => ({
      name,
      source: 'vcshost',
      source_config: { repo_url: repo.url, ...(installCommand ? { install_command: installCommand } : {}) },
      source_revision_config: { repo_ref: 'main' },
      secrets: [],
    });
    const slow = await api(s, 'POST', '/v2/deployments', body('lapsed', install));
    const rev = slow.latest_revision_id as string;
    await waitFor('the install step to start', async () => {
      const logs = (await api(s, 'GET', `/v2/deployments/${slow.id}/revisions/${rev}/build-logs`)).logs as string;
      return logs.includes('$ node -e') ? true : undefined;
    });
    // What a renewal that came too late leaves: the lease of a revision this process still builds has run out.
    await sql(databaseUrl, "UPDATE deployment_revisions SET lease_expires_at = now() - interval '1 second' WHERE id = $1", [rev]);
    // A newer deployment being claimed shows that a claim ran after that (older revisions come first).
    const later = await api(s, 'POST', '/v2/deployments', body('later'));
    await waitFor('the newer deployment to be claimed', async () => ((await revisionStatus(s, later.id, later.latest_revision_id)) === 'CREATING' ? undefined : true));
    await writeFile(marker, 'go');
    await waitFor('the revision to deploy', async () => {
      const st = await revisionStatus(s, slow.id, rev);
      return ['DEPLOYED', 'BUILD_FAILED', 'DEPLOY_FAILED'].includes(st) ? st : undefined;
    });
    const [row] = await sql(databaseUrl, 'SELECT status, attempts, build_log FROM deployment_revisions WHERE id = $1', [rev]);
    expect(row.status).toBe('DEPLOYED');
    expect(row.attempts).toBe(1);
    expect(row.build_log).not.toContain('building again');
    expect(row.build_log.match(/\[hangar\] fetching/g)).toHaveLength(1);
  }, 120_000);
});

/** Where a test lets a blocked build step finish: open to the deployments' user (builds run as it when Hangar is root). */
async function markerFile(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'hangar-marker-'));
  await chmod(dir, 0o755);
  return path.join(dir, 'let-the-build-finish');
}
