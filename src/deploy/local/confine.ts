// Builds and applications of the local deployment driver run confined by bubblewrap (`bwrap`, as the
// sandbox driver's commands do): a deployment's code must not read Hangar's secrets.
//
// What a confined process sees: the host's file system read-only; Hangar's data directory hidden
// (its secret key, the embedded database's files and password, other deployments, sandboxes), with
// only the directories of its own deployment put back; a private /tmp; its own /proc, so Hangar's
// processes, their command lines and environments are out of sight; no capabilities. The network
// is shared: builds fetch packages, applications call model providers and are reached on 127.0.0.1
// by the deployment's front. (Hangar's own HTTP API still asks for a key there; the embedded
// PostgreSQL for its password, which is hidden.)
//
// Without bubblewrap (not installed, or user namespaces disabled) builds and applications run
// unconfined, and every build log says so (docs/security.md).
import { spawn } from 'node:child_process';
import path from 'node:path';

/** A command `file args…` as what to spawn instead (it then runs confined). */
export type Wrap = (file: string, args: string[]) => { file: string; args: string[] };

/** Wraps a command so that it runs confined. */
export interface Confinement {
  /** `file args…` as a confined command that may write only `writable` and read `readable` (in the data directory) too. */
  wrap(file: string, args: string[], o: { writable: string[]; readable?: string[] }): { file: string; args: string[] };
}

/** What stays hidden and what every confined command may still read. */
export interface ConfinementOptions {
  /** Directories hidden from confined commands (Hangar's data directory). */
  hidden: string[];
  /** Directories every confined command may read even when under /tmp or a hidden one (Hangar's own packages, Node). */
  readable: string[];
  /** The bwrap executable (found on PATH by default). */
  bwrap?: string | undefined;
}

function baseArgs(root: boolean): string[] {
  return [
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--unshare-pid',
    '--unshare-ipc',
    '--proc',
    '/proc',
    // Not root: an unprivileged user namespace (mounts need one), no nested ones.
    ...(root ? [] : ['--unshare-user', '--disable-userns']),
    '--cap-drop',
    'ALL',
    '--die-with-parent',
    '--tmpfs',
    '/tmp',
  ];
}

/** Whether a trivial command runs under bwrap here (installed, and namespaces allowed). */
function probe(bwrap: string, root: boolean): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(bwrap, [...baseArgs(root), '--', '/bin/true'], { stdio: 'ignore' });
    child.on('error', () => resolve(false));
    child.on('close', (code) => resolve(code === 0));
  });
}

/** The confinement of this host, or undefined when bubblewrap cannot run here. */
export async function detectConfinement(o: ConfinementOptions): Promise<Confinement | undefined> {
  const bwrap = o.bwrap ?? 'bwrap';
  const root = process.getuid?.() === 0;
  if (!(await probe(bwrap, root))) return undefined;
  const hidden = o.hidden.map((d) => path.resolve(d));
  return {
    wrap(file, args, w) {
      // Later mounts go over earlier ones: what every command reads is put back over the private
      // /tmp, then the data directory is hidden (even inside those), then the deployment's own
      // directories are put back (read-only, then writable).
      const binds = [
        ...o.readable.flatMap((d) => ['--ro-bind-try', d, d]),
        ...hidden.flatMap((d) => ['--tmpfs', d]),
        ...(w.readable ?? []).flatMap((d) => ['--ro-bind-try', d, d]),
        ...w.writable.flatMap((d) => ['--bind', d, d]),
      ];
      // bwrap does not pass signals on, and its processes dying on SIGTERM would take the command
      // down with SIGKILL (--die-with-parent, the PID namespace's end): an application would lose its
      // graceful stop (it flushes the deployment's database). So bwrap ignores SIGTERM and SIGINT
      // (inherited through exec); the command, a Node process, resets them and stops as it would
      // unconfined. SIGKILL still ends everything.
      return { file: '/bin/sh', args: ['-c', 'trap "" TERM INT; exec "$0" "$@"', bwrap, ...baseArgs(root), ...binds, '--', file, ...args] };
    },
  };
}
