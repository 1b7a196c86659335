// The local driver confines a deployment's code with bubblewrap: a member who may create a
// deployment may run commands (install_command, the application), and those must not read Hangar's
// secret key, its other data or its processes. The build's own log says what the commands saw.
import { spawn } from 'node:child_process';
import { chmod, chown, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectConfinement } from '../../src/deploy/local/confine.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { apiCall, deployRepo } from './api.js';
import { makeAppRepo, waitFor } from './git-fixture.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ env: { HANGAR_DEPLOY_ALLOW_LOCAL_REPOS: 'true', HANGAR_LOCAL_REPO_ROOTS: os.tmpdir(), HANGAR_DEPLOY_POLL_MS: '300' } });
});
afterAll(async () => {
  await server?.close();
});

const api = async (method: string, p: string, body?: unknown) => (await apiCall(server, method, p, body)).body;

/** Deploy the app repository with `install` as its install command; the revision's final status and build log. */
async function deployWithInstall(name: string, install: string): Promise<{ id: string; status: string; logs: string }> {
  const repo = await makeAppRepo();
  await repo.push('main', { label: 'v1' });
  return deployRepo(server, name, { repo_url: repo.url, install_command: install });
}

/** The confined application serves through the deployment's stable URL; then the deployment goes. */
async function expectServedThenDelete(id: string): Promise<void> {
  const res = await waitFor('the application to answer', async () => {
    const r = await fetch(`${server.url}/v2/deployments/${id}/app/ok`, { headers: { 'X-Api-Key': server.adminKey } });
    return r.status === 200 ? r : undefined;
  });
  expect(await res.json()).toEqual({ ok: true });
  await api('DELETE', `/v2/deployments/${id}`);
}

describe('local deployments are confined', () => {
  it('a build cannot read the secret key, the data directory or Hangar’s processes; the application still deploys and answers', async () => {
    const secretFile = path.join(server.dataDir, 'secret.key');
    const secret = (await readFile(secretFile, 'utf8')).trim();
    const install = [
      `cat ${secretFile} || echo "SECRET-KEY-HIDDEN"`,
      `ls -A ${server.dataDir} | tr '\\n' ' '; echo "<- DATA-DIR"`,
      `if [ -e /proc/${process.pid}/environ ]; then echo HOST-PROCESS-VISIBLE; else echo HOST-PROCESS-HIDDEN; fi`,
      `touch /etc/hangar-probe 2>/dev/null && echo HOST-WRITABLE || echo HOST-READ-ONLY`,
    ].join('; ');
    const { id, status, logs } = await deployWithInstall('confined', install);
    expect(status, logs).toBe('DEPLOYED');
    expect(logs).not.toContain(secret);
    expect(logs).toContain('SECRET-KEY-HIDDEN');
    // The data directory shows only the way to the deployment's own directory.
    expect(logs).toMatch(/Z deployments <- DATA-DIR$/m);
    expect(logs).toContain('HOST-PROCESS-HIDDEN');
    expect(logs).toContain('HOST-READ-ONLY');
    expect(logs).not.toContain('unconfined');
    await expectServedThenDelete(id);
  }, 120_000);

  // As root, bwrap makes no user namespace: without dropping to another user, the build ran as uid 0,
  // which owns every root-owned file of the host (capabilities or not) and could make user namespaces.
  it.runIf(process.getuid?.() === 0)('as root, a build runs as an unprivileged user: root-only files of the host stay closed, no user namespaces', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'hangar-root-only-'));
    const secretFile = path.join(dir, 'credentials');
    await writeFile(secretFile, 'ROOT-ONLY-CONTENT\n');
    await chmod(secretFile, 0o600);
    await chmod(dir, 0o755);
    const install = [
      `cat ${secretFile} || echo "ROOT-ONLY-CLOSED"`,
      `echo "UID=$(id -u)"`,
      `unshare -U true 2>/dev/null && echo USERNS-MADE || echo USERNS-REFUSED`,
    ].join('; ');
    const { id, status, logs } = await deployWithInstall('confined-root', install);
    expect(status, logs).toBe('DEPLOYED');
    expect(logs).not.toContain('ROOT-ONLY-CONTENT');
    expect(logs).toContain('ROOT-ONLY-CLOSED');
    expect(logs).not.toContain('UID=0');
    expect(logs).toContain('USERNS-REFUSED');
    // The application, run as that user too, still serves.
    await expectServedThenDelete(id);
  }, 120_000);

  it('a confined application stopped with SIGTERM to its process group stops gracefully (its handler runs), as unconfined', async () => {
    const confinement = await detectConfinement({ hidden: [server.dataDir], readable: [], uid: 265_536 });
    expect(confinement).toBeDefined();
    const dir = await mkdtemp(path.join(os.tmpdir(), 'hangar-confined-'));
    if (process.getuid?.() === 0) await chown(dir, 265_536, 265_536); // as the driver does for the deployments' user
    const script = `process.on('SIGTERM', () => setTimeout(() => { require('fs').writeFileSync(${JSON.stringify(path.join(dir, 'stopped'))}, 'gracefully'); process.exit(0); }, 100)); setInterval(() => {}, 1000); console.log('up');`;
    const command = confinement!.wrap(process.execPath, ['-e', script], { writable: [dir] });
    const child = spawn(command.file, command.args, { detached: true, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
    process.kill(-child.pid!, 'SIGTERM'); // as the supervisor stops an application
    expect(await exited).toBe(0);
    expect(await readFile(path.join(dir, 'stopped'), 'utf8')).toBe('gracefully');
  });
});
