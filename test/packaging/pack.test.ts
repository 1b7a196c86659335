// `npm pack` makes a package that installs into an empty folder, where `npx hangar serve` starts and
// answers. Installing ~380 production dependencies takes a minute or more, so this runs when
// HANGAR_TEST_PACK=1 (CI runs it as its own step, see .ci/run) and not in every `npm test`.
import { execFile, spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { freshDatabaseUrl } from '../support/database.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe.skipIf(process.env.HANGAR_TEST_PACK !== '1')('npm pack', () => {
  it('installs into an empty folder where `npx hangar serve` starts', async () => {
    const work = await mkdtemp(path.join(os.tmpdir(), 'hangar-pack-'));
    await chmod(work, 0o755);
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', work], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 });
    const [packed] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
    const top = new Set(packed!.files.map((f) => f.path.split('/')[0]));
    expect([...top].sort()).toEqual(['README.md', 'bin', 'dist', 'docs', 'migrations', 'package.json', 'templates']);

    const app = path.join(work, 'app');
    await mkdir(app);
    await writeFile(path.join(app, 'package.json'), '{"name":"empty","private":true}\n');
    await run('npm', ['install', '--prefer-offline', '--omit=dev', '--no-audit', '--no-fund', path.join(work, packed!.filename)], { cwd: app, maxBuffer: 64 * 1024 * 1024 });
    expect(await readdir(path.join(app, 'node_modules/hangar'))).toContain('dist');

    const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: await freshDatabaseUrl(), PORT: '0' };
    delete env.HANGAR_DATA_DIR;
    const child = spawn('npx', ['hangar', 'serve', '--data-dir', path.join(work, 'data')], { cwd: app, env, detached: true });
    let out = '';
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
    const url = await new Promise<string>((resolve, reject) => {
      const onData = (d: Buffer) => {
        out += String(d);
        const m = out.match(/Hangar is listening on (http:\/\/\S+)/);
        if (m) resolve(m[1]!);
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      void exited.then(({ code }) => reject(new Error(`npx hangar serve exited (${code}):\n${out}`)));
    });
    try {
      expect((await fetch(`${url}/ok`)).status).toBe(200);
      expect((await fetch(`${url}/ready`)).status).toBe(200);
    } finally {
      process.kill(-child.pid!, 'SIGINT');
    }
    // Ctrl-C reaches npx and hangar alike: hangar drains and stops cleanly; npm then ends itself by
    // the signal it was sent (the shell convention), so npx's own status is 0 or SIGINT.
    const { code, signal } = await exited;
    expect(code === 0 || signal === 'SIGINT', `code ${code}, signal ${signal}`).toBe(true);
    expect(out).toContain('hangar stopped');
    expect(out).not.toMatch(/\n\s+at /); // no stack trace
    await rm(work, { recursive: true, force: true });
  }, 900_000);
});
