// Removing a benchmark's Hangar data directory. A server started through `tsx` is a grandchild: tsx
// exits on SIGTERM before Hangar has stopped its embedded PostgreSQL (measured: ~100 ms before), and
// removing the directory under a PostgreSQL that is still shutting down can leave it running, orphaned.
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** Wait (at most 30 s) for the embedded PostgreSQL in `dataDir` to have stopped, then remove the directory. */
export async function removeDataDir(dataDir: string): Promise<void> {
  const pid = path.join(dataDir, 'pg', 'postmaster.pid');
  for (let i = 0; i < 300 && existsSync(pid); i++) await sleep(100);
  await rm(dataDir, { recursive: true, force: true });
}
