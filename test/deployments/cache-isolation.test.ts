// Deployments do not share what their builds write: a member's build (install_command,
// build_command, an install script) can write its install cache and npm's cache, and another
// deployment with the same lockfile must not run what it put there.
import { execFile } from 'node:child_process';
import { stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { deployRepo } from './api.js';
import { makeAppRepo } from './git-fixture.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ env: { HANGAR_DEPLOY_ALLOW_LOCAL_REPOS: 'true', HANGAR_LOCAL_REPO_ROOTS: os.tmpdir(), HANGAR_DEPLOY_POLL_MS: '300', HANGAR_DEPLOY_HEALTH_TIMEOUT_MS: '60000' } });
});
afterAll(async () => {
  await server?.close();
});


/** Deploy `repoUrl` with `build` as its build command; its id and build log once DEPLOYED. */
async function deploy(name: string, repoUrl: string, build: string): Promise<{ id: string; logs: string }> {
  const { id, status, logs } = await deployRepo(server, name, { repo_url: repoUrl, build_command: build });
  expect(status, logs).toBe('DEPLOYED');
  return { id, logs };
}

async function run(id: string): Promise<string> {
  const res = await fetch(`${server.url}/v2/deployments/${id}/app/runs/wait`, {
    method: 'POST',
    headers: { 'X-Api-Key': server.adminKey, 'Content-Type': 'application/json' },
    body: JSON.stringify({ assistant_id: 'echo', input: { input: 'x' } }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { output: string }).output;
}

describe('what local deployments write on the host', () => {
  it("one deployment's build cannot change what another deployment with the same lockfile installs", async () => {
    // Two members' applications with the same dependency, hence the same package-lock.json.
    const mine = await makeAppRepo();
    await mine.push('main', { label: 'mine', dependency: '1.0.0' });
    const theirs = await makeAppRepo();
    await theirs.push('main', { label: 'theirs', dependency: '1.0.0' });

    // Theirs installs first; its build command rewrites the installed dependency and plants a file
    // in npm's cache.
    const tamper = [
      `printf "export const greeting = 'TAMPERED';\\n" > node_modules/greeting/index.js`,
      `echo PLANTED > "\${npm_config_cache:-$HOME/.npm}/hangar-planted"`,
    ].join(' && ');
    const bad = await deploy('tamperer', theirs.url, tamper);
    expect(bad.logs).toContain('$ npm ci');

    const good = await deploy('victim', mine.url, `cat "\${npm_config_cache:-$HOME/.npm}/hangar-planted" 2>/dev/null || echo "NOTHING-PLANTED"`);
    expect(good.logs).not.toMatch(/^\S+ PLANTED$/m);
    expect(good.logs).toMatch(/^\S+ NOTHING-PLANTED$/m);
    // Installed for itself, not linked to the other deployment's install.
    expect(good.logs).toContain('$ npm ci');
    expect(await run(good.id)).toBe('hello (greeting 1.0.0) x from mine, secret absent');
  }, 240_000);

  it("the deployments' directory (sources, dependencies, databases) is closed to the host's other users", async () => {
    const repo = await makeAppRepo();
    await repo.push('main', { label: 'closed' });
    const { id } = await deploy('closed', repo.url, 'true');
    expect(await run(id)).toBe('hello x from closed, secret absent');
    const dir = path.join(server.dataDir, 'deployments');
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    if (process.getuid?.() === 0) {
      // Another user of the host (nobody) cannot list the deployments nor read one's database.
      const asNobody = (...args: string[]) => promisify(execFile)('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', ...args]);
      await expect(asNobody('ls', dir)).rejects.toThrow(/Permission denied/);
      await expect(asNobody('ls', path.join(dir, id, 'database'))).rejects.toThrow(/Permission denied/);
    }
  }, 240_000);
});
