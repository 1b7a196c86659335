// End to end with the local driver: a real bare git repository holding a tiny LangGraph JS app →
// deployment → DEPLOYED/READY → /ok and a run through the stable URL → new commit + PATCH repo_ref →
// new revision active without downtime → broken commits fail while the old revision serves → DELETE stops it.
import os from 'node:os';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { makeAppRepo, waitFor, type AppRepo } from './git-fixture.js';

let server: TestServer;
let repo: AppRepo;

beforeAll(async () => {
  repo = await makeAppRepo();
  // The repository is reached through a `git` integration, which itself needs local repositories
  // enabled under a root (issue 14).
  server = await startTestServer({ env: { HANGAR_DEPLOY_POLL_MS: '300', HANGAR_DEPLOY_HEALTH_TIMEOUT_MS: '60000', HANGAR_DEPLOY_ALLOW_LOCAL_REPOS: 'true', HANGAR_LOCAL_REPO_ROOTS: os.tmpdir() } });
});
afterAll(async () => {
  await server?.close();
});

interface Dep {
  id: string;
  status: string;
  latest_revision_id: string | null;
  active_revision_id: string | null;
  image_version: string | null;
  remote_reconciled: boolean;
  source_config: { custom_url?: string | null };
  source_revision_config: { repo_commit_sha: string | null };
}

async function api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { 'X-Api-Key': server.adminKey, 'Content-Type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

const revision = async (d: string, r: string) => (await api('GET', `/v2/deployments/${d}/revisions/${r}`)).body as { status: string; status_message: string | null; source_revision_config: { repo_commit_sha: string | null } };

/** Wait until revision `r` is final; return it. */
async function settled(d: string, r: string) {
  return waitFor(`revision ${r} to finish`, async () => {
    const rev = await revision(d, r);
    return ['DEPLOYED', 'BUILD_FAILED', 'DEPLOY_FAILED', 'CREATE_FAILED', 'SKIPPED', 'INTERRUPTED'].includes(rev.status) ? rev : undefined;
  });
}

async function runEcho(appUrl: string, input: string): Promise<string> {
  const res = await fetch(`${appUrl}/runs/wait`, {
    method: 'POST',
    headers: { 'X-Api-Key': server.adminKey, 'Content-Type': 'application/json' },
    body: JSON.stringify({ assistant_id: 'echo', input: { input } }),
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { output?: string } | null;
  if (typeof body?.output !== 'string') {
    // Say what the application logged, so a wrong answer can be explained from the test output.
    const deps = (await api('GET', '/v2/deployments')).body.resources as { id: string; latest_revision_id: string }[];
    const logs = await Promise.all(deps.map(async (d) => (await api('GET', `/v2/deployments/${d.id}/revisions/${d.latest_revision_id}/deploy-logs`)).body.logs as string));
    throw new Error(`the application answered ${JSON.stringify(body)} to ${JSON.stringify(input)}; deploy logs:\n${logs.join('\n---\n').slice(-6000)}`);
  }
  return body.output;
}

describe('local driver, from a git repository', () => {
  it('deploys, rolls to a new commit without downtime, survives broken commits, and stops on delete', { timeout: 180_000 }, async () => {
    const sha1 = await repo.push('main', { label: 'v1' });
    // As a user would: a git integration over the directory, its repository list, then the deployment.
    const integration = await api('POST', '/v1/integrations/forge/vcshost', { kind: 'git', name: 'local', base_url: repo.directoryUrl });
    expect(integration.status).toBe(201);
    const repos = await api('GET', `/v1/integrations/forge/vcshost/${integration.body.id}/repos`);
    expect(repos.status).toBe(200);
    const listed = (repos.body as { name: string; url: string; default_branch: string; host_integration_id: string }[]).find((r) => r.name === 'app')!;
    expect(listed.url).toBe(repo.url);
    const created = await api('POST', '/v2/deployments', {
      name: 'echo-app',
      source: 'vcshost',
      source_config: { integration_id: listed.host_integration_id, repo_url: listed.url },
      source_revision_config: { repo_ref: listed.default_branch, agentgraph_config_path: 'langgraph.json' },
      secrets: [{ name: 'APP_TOKEN', value: 'tok-123' }],
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const rev1 = created.body.latest_revision_id as string;

    const first = await settled(id, rev1);
    expect(first.status, JSON.stringify(first)).toBe('DEPLOYED');
    expect(first.source_revision_config.repo_commit_sha).toBe(sha1);
    const d1 = (await api('GET', `/v2/deployments/${id}`)).body as Dep;
    expect(d1).toMatchObject({ status: 'READY', active_revision_id: rev1, remote_reconciled: true, image_version: '1.5.1' });
    expect(d1.source_revision_config.repo_commit_sha).toBe(sha1);
    const appUrl = d1.source_config.custom_url!;
    expect(appUrl).toBe(`${server.url}/v2/deployments/${id}/app`);

    // The list filters on what the reconciler filled in.
    const ready = await api('GET', '/v2/deployments?status=READY&remote_reconciled=true&image_version=1.5.1');
    expect(ready.body.resources.map((d: Dep) => d.id)).toEqual([id]);

    const ok = await fetch(`${appUrl}/ok`, { headers: { 'X-Api-Key': server.adminKey } });
    expect(ok.status).toBe(200);
    expect(await runEcho(appUrl, 'world')).toBe('hello world from v1, secret present');
    const noKey = await fetch(`${appUrl}/ok`);
    expect(noKey.status).toBe(401);

    // The run was traced into the deployment's own tracing project (created with the deployment).
    const projects = (await api('GET', '/v1/tracing/projects')).body.items as { id: string; name: string }[];
    const project = projects.find((p) => p.name === 'echo-app');
    expect(project).toBeDefined();
    const traced = await waitFor('the run to be traced', async () => {
      const runs = (await api('GET', `/v1/tracing/projects/${project!.id}/runs`)).body.items as { outputs: unknown }[];
      return runs.length > 0 ? runs : undefined;
    });
    expect(JSON.stringify(traced[0]!.outputs)).toContain('hello world from v1');

    // A new commit on another branch: the old revision keeps answering until the new one is active.
    const sha2 = await repo.push('release', { label: 'v2' });
    const patched = await api('PATCH', `/v2/deployments/${id}`, { source_revision_config: { repo_ref: 'release' } });
    expect(patched.status).toBe(200);
    const rev2 = patched.body.latest_revision_id as string;
    expect(rev2).not.toBe(rev1);
    const failures: number[] = [];
    let probes = 0;
    let rolling = true;
    const prober = (async () => {
      while (rolling) {
        const r = await fetch(`${appUrl}/ok`, { headers: { 'X-Api-Key': server.adminKey } }).catch(() => undefined);
        probes++;
        if (r?.status !== 200) failures.push(`${r?.status ?? 0} ${r ? await r.clone().text() : ""}`.slice(0, 200) as never);
        await r?.body?.cancel();
      }
    })();
    const second = await settled(id, rev2);
    rolling = false;
    await prober;
    expect(second.status).toBe('DEPLOYED');
    expect(second.source_revision_config.repo_commit_sha).toBe(sha2);
    expect(probes).toBeGreaterThan(0);
    expect(failures).toEqual([]);
    const d2 = (await api('GET', `/v2/deployments/${id}`)).body as Dep;
    expect(d2).toMatchObject({ status: 'READY', active_revision_id: rev2 });
    expect(await runEcho(appUrl, 'again')).toBe('hello again from v2, secret present');

    // Streams pass through the stable URL.
    const stream = await fetch(`${appUrl}/runs/stream`, {
      method: 'POST',
      headers: { 'X-Api-Key': server.adminKey, 'Content-Type': 'application/json' },
      body: JSON.stringify({ assistant_id: 'echo', input: { input: 'streamed' }, stream_mode: ['values'] }),
    });
    expect(stream.headers.get('content-type')).toMatch(/text\/event-stream/);
    const text = await stream.text();
    expect(text).toContain('event: values');
    expect(text).toContain('hello streamed from v2');

    // A crash of the application: the supervisor starts it again on the same port.
    await fetch(`${appUrl}/runs/wait`, {
      method: 'POST',
      headers: { 'X-Api-Key': server.adminKey, 'Content-Type': 'application/json' },
      body: JSON.stringify({ assistant_id: 'echo', input: { input: 'crash' } }),
    }).catch(() => undefined);
    await waitFor('the crash to be noticed', async () => {
      const logs = (await api('GET', `/v2/deployments/${id}/revisions/${rev2}/deploy-logs`)).body.logs as string;
      return logs.includes('[hangar] the application exited') ? true : undefined;
    });
    await waitFor('the restarted application', async () => ((await fetch(`${appUrl}/ok`, { headers: { 'X-Api-Key': server.adminKey } })).status === 200 ? true : undefined));
    expect(await runEcho(appUrl, 'back')).toBe('hello back from v2, secret present');
    // The replaced revision says it no longer serves; exactly one revision is DEPLOYED.
    expect(await revision(id, rev1)).toMatchObject({ status: 'INTERRUPTED', status_message: 'replaced by revision 2; no longer serving' });

    // A commit whose graph throws on import: DEPLOY_FAILED, v2 keeps serving.
    await repo.push('broken', { label: 'v3', broken: 'import' });
    const rev3 = (await api('PATCH', `/v2/deployments/${id}`, { source_revision_config: { repo_ref: 'broken' } })).body.latest_revision_id as string;
    const third = await settled(id, rev3);
    expect(third.status).toBe('DEPLOY_FAILED');
    expect(third.status_message).toMatch(/exited before it became healthy/);
    const deployLogs = (await api('GET', `/v2/deployments/${id}/revisions/${rev3}/deploy-logs`)).body;
    expect(deployLogs.logs).toContain('this revision is broken on purpose');
    // A commit whose build fails: BUILD_FAILED, v2 keeps serving.
    await repo.push('broken-build', { label: 'v4', broken: 'build' });
    const rev4 = (await api('PATCH', `/v2/deployments/${id}`, { source_revision_config: { repo_ref: 'broken-build' } })).body.latest_revision_id as string;
    const fourth = await settled(id, rev4);
    expect(fourth.status).toBe('BUILD_FAILED');
    const buildLogs = (await api('GET', `/v2/deployments/${id}/revisions/${rev4}/build-logs`)).body;
    expect(buildLogs.logs).toContain('$ npm run build');
    const d4 = (await api('GET', `/v2/deployments/${id}`)).body as Dep;
    expect(d4).toMatchObject({ status: 'READY', active_revision_id: rev2, remote_reconciled: false });
    expect(await runEcho(appUrl, 'still')).toBe('hello still from v2, secret present');

    // Delete: AWAITING_DELETE, then gone, and the process no longer answers.
    const runtime = await runtimeUrl(rev2);
    expect((await fetch(`${runtime}/ok`)).status).toBe(200);
    expect((await api('DELETE', `/v2/deployments/${id}`)).status).toBe(204);
    await waitFor('the deployment to disappear', async () => ((await api('GET', `/v2/deployments/${id}`)).status === 404 ? true : undefined));
    await expect(fetch(`${runtime}/ok`)).rejects.toThrow();
    expect((await fetch(`${appUrl}/ok`, { headers: { 'X-Api-Key': server.adminKey } })).status).toBe(404);
  });
});

async function runtimeUrl(revisionId: string): Promise<string> {
  const client = new pg.Client({ connectionString: server.databaseUrl });
  await client.connect();
  try {
    return (await client.query('SELECT runtime_url FROM deployment_revisions WHERE id = $1', [revisionId])).rows[0].runtime_url as string;
  } finally {
    await client.end();
  }
}
