// Which directories of this host a workspace may read repositories from (git integrations and
// file:// deployments): none unless the operator says so, and then only under the listed roots.
import { realpathSync } from 'node:fs';
import path from 'node:path';

/** `HANGAR_DEPLOY_ALLOW_LOCAL_REPOS` and `HANGAR_LOCAL_REPO_ROOTS`. */
export interface LocalRepoPolicy {
  allow: boolean;
  /** Absolute directories; a repository must be inside one of them (after resolving symlinks). */
  roots: string[];
}

/** No local repositories at all: the default. */
export const NO_LOCAL_REPOS: LocalRepoPolicy = { allow: false, roots: [] };

/** Parse the comma-separated `HANGAR_LOCAL_REPO_ROOTS`. */
export function parseRoots(text: string | undefined): string[] {
  return (text ?? '').split(',').map((r) => r.trim()).filter(Boolean).map((r) => path.resolve(r));
}

/** Why `directory` may not be used as a repository source, or undefined when it may. */
export function localRepoProblem(policy: LocalRepoPolicy, directory: string): string | undefined {
  if (!policy.allow) return 'repositories on this server’s file system are disabled (set HANGAR_DEPLOY_ALLOW_LOCAL_REPOS=true and HANGAR_LOCAL_REPO_ROOTS)';
  if (policy.roots.length === 0) return 'no directory is open to local repositories (HANGAR_LOCAL_REPO_ROOTS is empty)';
  const real = realOrResolved(directory);
  for (const root of policy.roots) {
    const rel = path.relative(realOrResolved(root), real);
    if (rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel))) return undefined;
  }
  return `${directory} is not under a directory listed in HANGAR_LOCAL_REPO_ROOTS`;
}

// Symlinks are resolved so that a link inside a root cannot point outside it; a path that does
// not exist yet is compared as written (it cannot be read anyway).
function realOrResolved(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}
