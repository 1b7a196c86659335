// A server that cannot start says which setting is at fault: an unreachable or refusing external
// database names DATABASE_URL (never its password), a listen address in use or unresolvable names
// HOST and PORT, a boolean setting with another word says what it accepts, and a data directory that
// cannot be one names HANGAR_DATA_DIR (it hung under /proc; as root, the embedded PostgreSQL's user
// could not reach it; a refused start leaves no folder behind).
import type { ChildProcess } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runHangar, spawnHangar } from '../support/cli.js';
import { freshDatabaseUrl } from '../support/database.js';

const dirs: string[] = [];
const servers: Server[] = [];
const children: ChildProcess[] = [];
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const s of servers) await new Promise((resolve) => s.close(resolve));
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function dataDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'hangar-startup-'));
  dirs.push(dir);
  return dir;
}

/** A loopback port something else listens on. */
async function busyPort(): Promise<number> {
  const s = createServer();
  servers.push(s);
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  return (s.address() as { port: number }).port;
}

/** A port nothing listens on (opened, then closed). */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as { port: number }).port;
  await new Promise((resolve) => s.close(resolve));
  return port;
}

describe('hangar serve: start-up errors name the setting', () => {
  it('an external database that refuses the password or does not answer names DATABASE_URL, without the password', async () => {
    const good = new URL(await freshDatabaseUrl());
    const wrong = new URL(good);
    wrong.password = 'not-the-password-s3cr3t';
    const refused = await runHangar(['serve', '--data-dir', await dataDir(), '--port', '0'], { DATABASE_URL: wrong.toString() });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/DATABASE_URL/);
    expect(refused.stderr).toMatch(/password authentication failed/);
    expect(refused.stderr + refused.stdout).not.toContain('not-the-password-s3cr3t');

    const down = new URL(good);
    down.port = String(await closedPort());
    const unreachable = await runHangar(['serve', '--data-dir', await dataDir(), '--port', '0'], { DATABASE_URL: down.toString() });
    expect(unreachable.code).not.toBe(0);
    expect(unreachable.stderr).toMatch(/DATABASE_URL.*ECONNREFUSED/);
    expect(unreachable.stderr + unreachable.stdout).not.toContain(decodeURIComponent(good.password));

    // The operator commands open it the same way.
    const keys = await runHangar(['keys', 'list'], { DATABASE_URL: wrong.toString() });
    expect(keys.code).not.toBe(0);
    expect(keys.stderr).toMatch(/DATABASE_URL.*password authentication failed/);
    expect(keys.stderr + keys.stdout).not.toContain('not-the-password-s3cr3t');
  }, 60_000);

  it('a port in use or a host that does not resolve names HOST and PORT', async () => {
    const url = await freshDatabaseUrl();
    const port = await busyPort();
    const inUse = await runHangar(['serve', '--data-dir', await dataDir()], { DATABASE_URL: url, PORT: String(port) });
    expect(inUse.code).not.toBe(0);
    expect(inUse.stderr).toContain(`cannot listen on 127.0.0.1:${port} (HOST / --host, PORT / --port)`);
    expect(inUse.stderr).toMatch(/EADDRINUSE/);

    const unknown = await runHangar(['serve', '--data-dir', await dataDir(), '--port', '0'], { DATABASE_URL: url, HOST: 'no-such-host.invalid' });
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('cannot listen on no-such-host.invalid:0 (HOST / --host, PORT / --port)');
  }, 60_000);

  it('a data directory that cannot be created names HANGAR_DATA_DIR (exit 2), for the server and operator commands', async () => {
    for (const args of [
      ['serve', '--data-dir', '/proc/hangar-data', '--port', '0'],
      ['keys', 'list', '--data-dir', '/proc/hangar-data/deeper'],
    ]) {
      // Node's recursive mkdir never returned there: stopped after the file's tests if it hangs again.
      const child = spawnHangar(args);
      children.push(child.child);
      expect(await child.exited).toBe(2);
      expect(child.output()).toMatch(/^hangar: HANGAR_DATA_DIR \(--data-dir\): cannot create the data directory \/proc\/hangar-data/m);
      expect(child.output()).toContain('choose a directory');
    }
  }, 60_000);

  it.runIf(process.getuid?.() === 0)('as root, a data directory the embedded PostgreSQL user cannot reach names HANGAR_DATA_DIR and the folder (exit 2)', async () => {
    const closed = await dataDir();
    await chmod(closed, 0o700);
    const r = await runHangar(['serve', '--data-dir', path.join(closed, 'data'), '--port', '0']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`HANGAR_DATA_DIR (--data-dir): the embedded PostgreSQL runs as the postgres user (Hangar runs as root), which cannot enter ${closed} on the way to`);
    expect(r.stderr).toContain(`chmod o+x ${closed}`);
    // The refused start leaves the file system as it found it: no folder it created, no mode changed.
    expect(await readdir(closed)).toEqual([]);
    expect((await stat(closed)).mode & 0o777).toBe(0o700);
    // Folders that were there before stay, whatever their depth.
    await mkdir(path.join(closed, 'kept'), { mode: 0o700 });
    for (const args of [
      ['serve', '--data-dir', path.join(closed, 'kept', 'a', 'b'), '--port', '0'],
      ['keys', 'list', '--data-dir', path.join(closed, 'kept')],
    ]) {
      const again = await runHangar(args);
      expect(again.code).toBe(2);
      expect(again.stderr).toContain('which cannot enter');
      expect(await readdir(closed)).toEqual(['kept']);
      expect(await readdir(path.join(closed, 'kept'))).toEqual([]);
      expect((await stat(path.join(closed, 'kept'))).mode & 0o777).toBe(0o700);
    }
  }, 60_000);

  it('a boolean setting with another word says which words it takes', async () => {
    const r = await runHangar(['serve', '--data-dir', await dataDir(), '--port', '0'], { HANGAR_TRACING: 'maybe', HANGAR_DEPLOY_ALLOW_LOCAL_REPOS: 'on' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('HANGAR_TRACING: must be true or false (or 1/0, yes/no)');
    expect(r.stderr).toContain('HANGAR_DEPLOY_ALLOW_LOCAL_REPOS: must be true or false (or 1/0, yes/no)');
  }, 60_000);
});
