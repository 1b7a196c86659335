// A server stopped (SIGTERM) while it is still starting, as a supervisor may do, stops the way a
// started one does: it used to die of the signal's default action, leaving its embedded PostgreSQL
// (a process group of its own) running.
import { readdir, readFile, mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnHangar } from '../support/cli.js';

/** Process ids of the `postgres` processes whose command line names `dir`. */
async function postgresOf(dir: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes('postgres') && cmdline.includes(dir)) pids.push(Number(entry));
  }
  return pids;
}

describe('hangar serve stopped while starting', () => {
  it('SIGTERM before it listens: it finishes starting, stops cleanly (exit 0) and stops its embedded PostgreSQL', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'hangar-stop-starting-'));
    const serve = spawnHangar(['serve', '--port', '0', '--data-dir', dataDir]);
    // Logged once the embedded database runs and is migrated, before the server listens.
    await serve.waitFor(/"msg":"outbound policy"/);
    expect(await postgresOf(dataDir)).not.toEqual([]);
    serve.child.kill('SIGTERM');
    expect(await serve.exited, serve.output()).toBe(0);
    expect(await postgresOf(dataDir)).toEqual([]);
  }, 90_000);
});
