// The data directory (HANGAR_DATA_DIR): created at start-up, or a start-up error that names the
// setting and says what to do. Not `fs.mkdir(…, { recursive: true })`: Node's loops for ever on a
// path it cannot create under a pseudo file system (`/proc/x`), so a server set up that way hung.
import { constants } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { ConfigError } from './index.js';

const SETTING = 'HANGAR_DATA_DIR (--data-dir)';

/** What `prepareDataDir` created, to be removed when the start is refused after all. */
export interface PreparedDataDir {
  /** Remove the folders `prepareDataDir` created that are still empty, deepest first: a refused start leaves the file system as it found it. */
  undo(): Promise<void>;
}

/**
 * Create `dir` (and its missing parents), one level at a time; a ConfigError when it cannot be
 * created or written (and then nothing it created is left).
 */
export async function prepareDataDir(dir: string): Promise<PreparedDataDir> {
  const missing: string[] = [];
  for (let at = dir; ; ) {
    try {
      if (!(await fs.stat(at)).isDirectory()) throw new ConfigError(`${SETTING}: ${at} is not a directory; choose a data directory path whose parents are directories`);
      break;
    } catch (error) {
      if (error instanceof ConfigError) throw error;
      if (code(error) !== 'ENOENT') throw cannot(dir, 'use', error);
      missing.unshift(at);
      const up = path.dirname(at);
      if (up === at) break;
      at = up;
    }
  }
  const created: string[] = [];
  const prepared: PreparedDataDir = {
    async undo() {
      // Only empty folders: whatever was written into them since (a cluster's files) stays.
      for (const d of created.splice(0).reverse()) await fs.rmdir(d).catch(() => {});
    },
  };
  try {
    for (const d of missing) {
      try {
        await fs.mkdir(d);
        created.push(d);
      } catch (error) {
        if (code(error) !== 'EEXIST') throw cannot(dir, 'create', error);
      }
    }
    try {
      await fs.access(dir, constants.W_OK | constants.X_OK);
    } catch (error) {
      throw cannot(dir, 'write to', error);
    }
  } catch (error) {
    await prepared.undo();
    throw error;
  }
  return prepared;
}

function code(error: unknown): string | undefined {
  return (error as { code?: string } | null)?.code;
}

function cannot(dir: string, what: string, error: unknown): ConfigError {
  return new ConfigError(
    `${SETTING}: cannot ${what} the data directory ${dir} (${code(error) ?? (error instanceof Error ? error.message : String(error))}); ` +
      'choose a directory on a regular file system that this user can create and write',
  );
}
