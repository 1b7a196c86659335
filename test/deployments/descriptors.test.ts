// A deployment's build steps and its application get none of the descriptors Hangar itself
// inherited, as sandboxed commands get none (test/sandbox/descriptors.test.ts): a supervisor, a CI
// runner or a shell can start Hangar with descriptors open beyond 0-2 and not marked close-on-exec,
// every child would inherit them, and bubblewrap passes them on by design. Here the worker that runs
// the deployment is `hangar serve` started with a root-only file open on its descriptor 40. The
// build step of the deployed repository tries to read it and lists its own descriptors; the
// application then starts and serves.
//
// The same build step also shows the seccomp filter it runs under (HANGAR_DEPLOY_SECCOMP, on by
// default; the sandboxes' filter, src/sandbox/local/seccomp.ts): a call the kernel allows an
// unprivileged process, refused with EPERM.
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, readlinkSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnHangar, type RunningHangar } from '../support/cli.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { makeAppRepo, waitFor, type AppRepo } from './git-fixture.js';

const FD = 40;
/** KEYCTL_GET_KEYRING_ID of the session keyring, by number (perl's `syscall`): x86_64 250, aarch64 219. */
const KEYCTL = `perl -e 'print syscall(${os.arch() === 'x64' ? 250 : 219}, 0, -3, 0) == -1 ? "keyctl refused: $!\\n" : "keyctl allowed\\n"'`;
const SECRET = `host-secret-${Math.random().toString(36).slice(2)}`;
let api: TestServer;
let worker: RunningHangar | undefined;
let dir: string;
let repo: AppRepo;

const env = { HANGAR_DEPLOY_POLL_MS: '300', HANGAR_DEPLOY_HEALTH_TIMEOUT_MS: '60000', HANGAR_DEPLOY_ALLOW_LOCAL_REPOS: 'true', HANGAR_LOCAL_REPO_ROOTS: os.tmpdir() };

beforeAll(async () => {
  repo = await makeAppRepo();
  dir = await mkdtemp(path.join(os.tmpdir(), 'hangar-deploy-fds-'));
  const secretFile = path.join(dir, 'supervisor-secret.txt');
  writeFileSync(secretFile, `${SECRET}\n`, { mode: 0o600 });
  // The API server runs no background work: the worker below, the only one, builds and serves.
  api = await startTestServer({ env: { ...env, HANGAR_ROLE: 'api' } });
  const fd = openSync(secretFile, 'r');
  try {
    worker = spawnHangar(
      ['serve', '--port', '0', '--database-url', api.databaseUrl, '--data-dir', api.dataDir],
      { ...env, HANGAR_ROLE: 'worker', HANGAR_BOOTSTRAP_API_KEY: api.adminKey, LOG_LEVEL: 'info' },
      [...Array.from({ length: FD - 3 }, () => 'ignore' as const), fd],
    );
  } finally {
    closeSync(fd);
  }
  await worker.waitFor(/Hangar is listening on/);
}, 60_000);
afterAll(async () => {
  worker?.child.kill('SIGTERM');
  await worker?.exited;
  await api?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function call(method: string, p: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${api.url}${p}`, {
    method,
    headers: { 'X-Api-Key': api.adminKey, 'Content-Type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

describe('a local deployment, the descriptors Hangar inherited and the seccomp filter', () => {
  it('builds without them: its build step cannot read a file Hangar’s own parent left open', { timeout: 180_000 }, async () => {
    // Control: the worker process really holds the file on that descriptor, to be inherited.
    expect(readlinkSync(`/proc/${worker!.child.pid}/fd/${FD}`)).toBe(path.join(dir, 'supervisor-secret.txt'));

    // Control: as an unprivileged user on the host, the call the build step makes is allowed.
    expect(execFileSync('sh', ['-c', `setpriv --reuid=65534 --regid=65534 --clear-groups -- ${KEYCTL}`], { encoding: 'utf8' })).toContain('keyctl allowed');

    // (bash: dash takes one-digit descriptors only.)
    await repo.push('main', { label: 'v1', build: `bash -c 'cat <&${FD}; ls -l /proc/self/fd/'; grep ^Seccomp: /proc/self/status; ${KEYCTL}; echo build-end` });
    const integration = await call('POST', '/v1/integrations/forge/vcshost', { kind: 'git', name: 'local', base_url: repo.directoryUrl });
    expect(integration.status).toBe(201);
    const created = await call('POST', '/v2/deployments', {
      name: 'fd-app',
      source: 'vcshost',
      source_config: { integration_id: integration.body.id, repo_url: repo.url },
      source_revision_config: { repo_ref: 'main', agentgraph_config_path: 'langgraph.json' },
      secrets: [],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id as string;
    const rev = created.body.latest_revision_id as string;
    const logs = await waitFor('the build step to have run', async () => {
      const { body } = await call('GET', `/v2/deployments/${id}/revisions/${rev}/build-logs`);
      // The step's own line, not npm's echo of the command (which names build-end before it runs).
      return typeof body?.logs === 'string' && /^\S+ build-end$/m.test(body.logs) ? (body.logs as string) : undefined;
    });
    expect(logs).toContain('$ npm run build');
    expect(logs).not.toContain(SECRET);
    expect(logs).not.toContain('supervisor-secret');
    expect(logs).toContain('Seccomp:\t2');
    expect(logs).toContain('keyctl refused: Operation not permitted');
    // The application is started with the same descriptors replaced (and its IPC channel kept).
    const deployed = await waitFor('the revision to be final', async () => {
      const { body } = await call('GET', `/v2/deployments/${id}/revisions/${rev}`);
      return ['DEPLOYED', 'BUILD_FAILED', 'DEPLOY_FAILED'].includes(body?.status) ? (body.status as string) : undefined;
    });
    expect(deployed).toBe('DEPLOYED');
    expect((await call('DELETE', `/v2/deployments/${id}`)).status).toBe(204);
  });
});
