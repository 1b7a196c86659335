// Repositories of a `git` integration: the bare repositories in a directory on the server, at
// `<dir>/<name>.git` (owner = the integration's name) or `<dir>/<owner>/<name>.git`.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { HangarError } from '../errors.js';
import type { Repository } from './types.js';

const run = promisify(execFile);

/** List the bare repositories under `directory`. */
export async function listBareRepositories(input: { integrationId: string; integrationName: string; directory: string }): Promise<Repository[]> {
  const { directory } = input;
  try {
    if (!(await stat(directory)).isDirectory()) throw new Error('not a directory');
  } catch {
    throw new HangarError('vcshost_unreachable', `the directory ${directory} of this git integration does not exist or cannot be read by the server`);
  }
  const found: { dir: string; owner: string }[] = [];
  for (const entry of await readdir(directory, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const dir = path.join(directory, entry.name);
    if (await isBareRepository(dir)) {
      found.push({ dir, owner: input.integrationName });
      continue;
    }
    for (const inner of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
      const innerDir = path.join(dir, inner.name);
      if (inner.isDirectory() && (await isBareRepository(innerDir))) found.push({ dir: innerDir, owner: entry.name });
    }
  }
  const repos = await Promise.all(
    found.map(async ({ dir, owner }): Promise<Repository> => ({
      host_integration_id: input.integrationId,
      id: stableId(path.relative(directory, dir)),
      name: path.basename(dir).replace(/\.git$/, ''),
      owner,
      url: pathToFileURL(dir).toString(),
      default_branch: await defaultBranch(dir),
    })),
  );
  return repos.sort((a, b) => `${a.owner}/${a.name}`.localeCompare(`${b.owner}/${b.name}`));
}

/** A bare repository has HEAD, objects/ and refs/ at its top. */
async function isBareRepository(dir: string): Promise<boolean> {
  const [head, objects, refs] = await Promise.all(['HEAD', 'objects', 'refs'].map((p) => stat(path.join(dir, p)).catch(() => undefined)));
  return Boolean(head?.isFile() && objects?.isDirectory() && refs?.isDirectory());
}

/**
 * The branch HEAD points at. Reading the HEAD file answers for the files ref format without a
 * process per repository (spawning `git` for each of 100 repositories cost about a second); other
 * formats (reftable writes a placeholder HEAD) ask git itself.
 */
async function defaultBranch(dir: string): Promise<string> {
  const head = await readFile(path.join(dir, 'HEAD'), 'utf8').catch(() => '');
  const branch = /^ref: refs\/heads\/(.+)\n?$/.exec(head)?.[1];
  if (branch && branch !== '.invalid') return branch;
  try {
    const { stdout } = await run('git', ['--git-dir', dir, 'symbolic-ref', '--short', 'HEAD'], { timeout: 10_000 });
    return stdout.trim();
  } catch {
    return 'HEAD';
  }
}

/** Git has no numeric repository ids: derive a stable one (48 bits, a safe JSON integer) from the path. */
function stableId(relativePath: string): number {
  return createHash('sha256').update(relativePath).digest().readUIntBE(0, 6);
}
