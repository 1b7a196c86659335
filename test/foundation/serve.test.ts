// `hangar serve` as a user runs it: every flag the README lists is accepted; the README's first steps
// run as written beside it (only the port differs: tests never bind 8124); Ctrl-C (SIGINT to the
// whole foreground process group, as a terminal sends it) drains, stops the embedded database last,
// and prints no stack trace.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { freshDatabaseUrl } from '../support/database.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The package's built entry point, what the installed `hangar` command runs (rebuilt by the test set-up). */
const ENTRY = path.join(ROOT, 'dist/cli/main.js');
const readme = await readFile(path.join(ROOT, 'README.md'), 'utf8');

/** Servers of the current test and their data directories, stopped after it whatever happened. */
const started: { pid: number; dataDir: string }[] = [];
afterEach(async () => {
  for (const { pid, dataDir } of started.splice(0)) {
    signal(-pid, 'SIGKILL');
    // A PostgreSQL of its own process group outlives a killed server (the next start stops it); stop it here.
    const pidFile = path.join(dataDir, 'pg/postmaster.pid');
    if (existsSync(pidFile)) signal(Number.parseInt((await readFile(pidFile, 'utf8')).split('\n')[0]!, 10), 'SIGINT');
  }
});

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // already gone
  }
}

/** Start `hangar serve` in its own process group (as a shell runs a foreground job). */
function serve(args: string[], cwd: string, dataDir: string) {
  const env = { ...process.env };
  for (const name of ['DATABASE_URL', 'HANGAR_DATA_DIR', 'HANGAR_BOOTSTRAP_API_KEY', 'PORT', 'HANGAR_SECRET_KEY']) delete env[name];
  const child = spawn(process.execPath, [ENTRY, 'serve', ...args], { cwd, env, detached: true });
  started.push({ pid: child.pid!, dataDir });
  let out = '';
  let onOut = () => {};
  child.stdout.on('data', (d) => ((out += String(d)), onOut()));
  child.stderr.on('data', (d) => ((out += String(d)), onOut()));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const url = new Promise<string>((resolve, reject) => {
    onOut = () => {
      const m = out.match(/Hangar is listening on (http:\/\/\S+)/);
      if (m) resolve(m[1]!);
    };
    void exited.then((code) => reject(new Error(`hangar serve exited (${code}):\n${out}`)));
  });
  return { child, url, exited, output: () => out, interrupt: () => process.kill(-child.pid!, 'SIGINT') };
}

/** Flags of the README's configuration table. */
function readmeFlags(): string[] {
  const section = readme.split('## Configuration')[1]!.split('\n## ')[0]!;
  return [...section.matchAll(/^\| `[A-Z_]+` \| `--([a-z-]+)` \|/gm)].map((m) => m[1]!);
}

describe('hangar serve', () => {
  it('accepts every flag of the README table', async () => {
    const values: Record<string, string> = {
      port: '0',
      host: '127.0.0.1',
      'data-dir': await mkdtemp(path.join(os.tmpdir(), 'hangar-serve-')),
      'database-url': await freshDatabaseUrl(),
      'log-level': 'warn',
      role: 'all',
      // Runs on an executor thread: it starts with the server and stops with it on Ctrl-C.
      executor: 'thread',
      'worker-concurrency': '2',
      tracing: 'false',
      'trace-retention-days': '7',
    };
    const flags = readmeFlags();
    expect(flags).toContain('tracing');
    expect(Object.keys(values).sort()).toEqual([...flags].sort());
    const server = serve(flags.flatMap((f) => [`--${f}`, values[f]!]), ROOT, values['data-dir']!);
    const url = await server.url;
    expect((await fetch(`${url}/ok`)).status).toBe(200);
    server.interrupt();
    expect(await server.exited).toBe(0);
  });

  it('runs the README first steps as written, then stops cleanly on Ctrl-C', async () => {
    // A fresh folder holding the project's entry point, as a clone does; the CLI finds the server's
    // embedded database in ./.hangar. bin/hangar.js runs the build, as here.
    const dir = await mkdtemp(path.join(os.tmpdir(), 'hangar-readme-'));
    await chmod(dir, 0o755); // as root, PostgreSQL runs as the postgres user, which must reach ./.hangar
    await mkdir(path.join(dir, 'bin'));
    await writeFile(path.join(dir, 'bin/hangar.js'), `#!/bin/sh\nexec "${process.execPath}" "${ENTRY}" "$@"\n`);
    await chmod(path.join(dir, 'bin/hangar.js'), 0o755);
    const server = serve(['--port', '0'], dir, path.join(dir, '.hangar'));
    const url = await server.url;
    expect(server.output()).toMatch(/Created the first admin API key/);

    const block = readme.split('## First steps')[1]!.match(/```sh\n([^`]+)```/)![1]!;
    expect(block).toContain('ADMIN_KEY=$(');
    const script = block.replaceAll('http://127.0.0.1:8124', url);
    const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const sh = spawn('bash', ['-euo', 'pipefail', '-c', script], { cwd: dir, env: { ...process.env, HANGAR_DATA_DIR: '', DATABASE_URL: '' } });
      let stdout = '';
      let stderr = '';
      sh.stdout.on('data', (d) => (stdout += String(d)));
      sh.stderr.on('data', (d) => (stderr += String(d)));
      sh.on('close', (code) => resolve({ code, stdout, stderr }));
    });
    expect(result.code, result.stderr).toBe(0);
    // The registration answers the server with its headers to the admin; the list shows the viewer none.
    // curl prints each body without a newline: two JSON documents back to back.
    const [created, list] = result.stdout.trim().split(/(?<=[}\]])(?=[{[])/).map((l) => JSON.parse(l));
    expect(created.name).toBe('Docs');
    expect(created.headers).toBeDefined();
    expect(list).toEqual([expect.objectContaining({ name: 'Docs' })]);
    expect(list[0]).not.toHaveProperty('headers');
    expect(JSON.stringify(list)).not.toContain('sk-123');

    server.interrupt();
    expect(await server.exited).toBe(0);
    const output = server.output();
    expect(output).toContain('SIGINT: draining requests and stopping');
    expect(output).toContain('"msg":"hangar stopped"');
    expect(output).not.toMatch(/\n\s+at /); // no stack trace
    expect(output).not.toMatch(/"level":50/); // no error logged
    // PostgreSQL shut down cleanly (it removes its pid file last), after Hangar's own drain.
    expect(existsSync(path.join(dir, '.hangar/pg/postmaster.pid'))).toBe(false);
  }, 240_000); // a first start runs initdb, and each CLI command compiles the sources: slow on a busy machine

  it('refuses a second server on the data directory of a running one, which keeps its database; a server killed outright leaves none in the way', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'hangar-twice-'));
    await chmod(dataDir, 0o755); // as root, PostgreSQL runs as the postgres user, which must reach it
    const first = serve(['--port', '0', '--data-dir', dataDir], ROOT, dataDir);
    const url = await first.url;
    expect((await fetch(`${url}/ready`)).status).toBe(200);

    // `npm start` again in another terminal (another port): refused, naming the server that runs there.
    const second = serve(['--port', '0', '--data-dir', dataDir], ROOT, dataDir);
    const outcome = await Promise.race([second.exited.then((code) => `exited ${code}`), second.url.then(() => 'listening')]);
    expect(outcome, second.output()).toBe('exited 2');
    expect(second.output()).toContain(`HANGAR_DATA_DIR (--data-dir): ${dataDir} is in use: another Hangar (pid ${first.child.pid}) runs its embedded PostgreSQL`);
    expect(second.output()).not.toMatch(/\n\s+at /); // no stack trace
    // The first server still has its database.
    expect((await fetch(`${url}/ready`)).status).toBe(200);

    // Killed outright (no drain), it leaves its PostgreSQL running, in a process group of its own: the
    // next start stops that one and starts.
    process.kill(-first.child.pid!, 'SIGKILL');
    await first.exited;
    expect(existsSync(path.join(dataDir, 'pg/postmaster.pid'))).toBe(true);
    const third = serve(['--port', '0', '--data-dir', dataDir], ROOT, dataDir);
    expect((await fetch(`${await third.url}/ready`)).status).toBe(200);
    third.interrupt();
    expect(await third.exited).toBe(0);
  }, 240_000);
});
