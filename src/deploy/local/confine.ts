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
// As root (CI, containers), bwrap makes no user namespace: the command would run as uid 0, which
// still owns every root-owned file of the host (0600 credentials, /etc/shadow) even without
// capabilities, and could make user namespaces of its own. So, as the sandbox driver does
// (src/sandbox/local/index.ts), bwrap sets the namespaces up as root, then `setpriv` drops to the
// deployments' unprivileged user (`uid`) with no capabilities, an empty bounding set and
// no_new_privs; that user then runs a second, unprivileged bwrap over the same view only for a user
// namespace in which further ones are forbidden (where bwrap can make one as that user; checked
// once). The driver makes the directories a command writes that user's (src/deploy/local/index.ts).
//
// They run under the seccomp filter of local sandboxes (src/sandbox/local/seccomp.ts: mounts,
// namespaces, ptrace, keyrings, bpf, io_uring… refused with EPERM; a 32-bit call kills), applied by
// the bwrap that starts the command, last, as for sandboxes (HANGAR_DEPLOY_SECCOMP).
//
// Without bubblewrap (not installed, or user namespaces disabled) builds and applications run
// unconfined, and every build log says so (docs/security.md).
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../../logging.js';
import { canForbidUserNamespaces, dropRoot, noUserNamespaces } from '../../sandbox/drop-root.js';
import { nativeSeccompProgram, seccompRefusal } from '../../sandbox/local/seccomp.js';

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
  /** When Hangar runs as root: the unprivileged user (and group) confined commands run as. */
  uid: number;
  /** The bwrap and setpriv executables (found on PATH by default). */
  bwrap?: string | undefined;
  setpriv?: string | undefined;
  /** Where to say what cannot be forbidden here. */
  logger?: Pick<Logger, 'warn'> | undefined;
  /** The seccomp filter commands run under (none: without one). */
  seccomp?: SeccompFilter | undefined;
}

/** A seccomp program, and the file the shell that starts bwrap reads it from (bwrap loads it from descriptor 4). */
export interface SeccompFilter {
  program: Buffer;
  file: string;
}

/** The sandboxes' seccomp filter for this machine, kept in `file`; none (and the log says so) on an architecture Hangar has none for. */
export function seccompFor(file: string, logger?: Pick<Logger, 'warn'>): SeccompFilter | undefined {
  const program = nativeSeccompProgram(WHO, logger && ((m) => logger.warn(m)));
  return program ? { program, file } : undefined;
}

const WHO = 'deployment builds and applications';

// bwrap does not pass signals on, and its processes dying on SIGTERM would take the command down
// with SIGKILL (--die-with-parent, the PID namespace's end): an application would lose its graceful
// stop (it flushes the deployment's database). So bwrap ignores SIGTERM and SIGINT (inherited through
// exec); the command, a Node process, resets them and stops as it would unconfined. SIGKILL still
// ends everything. With a seccomp filter the shell opens its program on descriptor 4 for bwrap
// (which reads and closes it: the command never holds it).
function viaShell(bwrap: string, args: string[], filter: string | undefined): { file: string; args: string[] } {
  return filter === undefined
    ? { file: '/bin/sh', args: ['-c', 'trap "" TERM INT; exec "$0" "$@"', bwrap, ...args] }
    : { file: '/bin/sh', args: ['-c', 'trap "" TERM INT; f=$1; shift; exec "$0" "$@" 4<"$f"', bwrap, filter, ...args] };
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
    // Not root: an unprivileged user namespace (mounts need one), no capabilities, no nested ones.
    // Root keeps its capabilities until setpriv (`dropTo`) has changed user and dropped them all.
    ...(root ? [] : ['--unshare-user', '--disable-userns', '--cap-drop', 'ALL']),
    '--die-with-parent',
    '--perms',
    '1777',
    '--tmpfs',
    '/tmp',
  ];
}

/**
 * Root only: what runs between bwrap and the command. setpriv drops to `uid` (every capability gone,
 * set-uid programs powerless); then, when `nested`, an unprivileged bwrap makes a user namespace in
 * which further ones are forbidden.
 */
function dropTo(o: ConfinementOptions, nested: boolean, more: string[] = []): string[] {
  return [...dropRoot(o.setpriv ?? 'setpriv', o.uid), ...(nested ? noUserNamespaces(o.bwrap ?? 'bwrap', ['--disable-userns'], undefined, more) : [])];
}

/** Whether a command runs under bwrap here (installed, and namespaces allowed). */
async function runs(bwrap: string, args: string[]): Promise<boolean> {
  return (await run({ file: bwrap, args })).ok;
}

/** Runs a command; whether it succeeded, and what it wrote to standard error (its first 4 KiB). */
function run(command: { file: string; args: string[] }): Promise<{ ok: boolean; said: string }> {
  return new Promise((resolve) => {
    const child = spawn(command.file, command.args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let said = '';
    child.stderr.on('data', (chunk: Buffer) => {
      if (said.length < 4096) said += chunk.toString('utf8');
    });
    child.on('error', (error) => resolve({ ok: false, said: error.message }));
    child.on('close', (code) => resolve({ ok: code === 0, said }));
  });
}

/** The confinement of this host, or undefined when bubblewrap cannot run here. */
export async function detectConfinement(o: ConfinementOptions): Promise<Confinement | undefined> {
  const bwrap = o.bwrap ?? 'bwrap';
  const root = process.getuid?.() === 0;
  let drop: string[] = [];
  let nested = false;
  if (root) {
    // Confined and dropped to the deployments' user; then the second bwrap where it can run.
    const asUser = (command: string[]) => runs(bwrap, [...baseArgs(root), '--', ...dropTo(o, false), ...command]);
    if (!(await asUser(['/bin/true']))) return undefined;
    const warn = o.logger && ((message: string) => o.logger!.warn(message));
    nested = await canForbidUserNamespaces({ asUser, bwrap, flags: ['--disable-userns'], warn, who: 'deployment builds and applications', whose: "the deployments'" });
  } else if (!(await runs(bwrap, [...baseArgs(root), '--', '/bin/true']))) return undefined;
  // The seccomp filter goes on the bwrap that starts the command: the second one as root where it
  // runs (its own set-up makes a user namespace, which the filter refuses), else the only one.
  const flags = ['--seccomp', '4'];
  const filter = o.seccomp && (await seccompWorks(o, bwrap, root ? dropTo(o, nested, nested ? flags : []) : [], root && nested ? [] : flags));
  const outer = filter && !(root && nested) ? flags : [];
  if (root) drop = dropTo(o, nested, filter && nested ? flags : []);
  const hidden = o.hidden.map((d) => path.resolve(d));
  return {
    wrap(file, args, w) {
      // Later mounts go over earlier ones: what every command reads is put back over the private
      // /tmp, then the data directory is hidden (even inside those), then the deployment's own
      // directories are put back (read-only, then writable).
      const own = [...(w.readable ?? []), ...w.writable];
      const binds = [
        ...o.readable.flatMap((d) => ['--ro-bind-try', d, d]),
        ...hidden.flatMap((d) => ['--tmpfs', d]),
        // The way to them through a hidden directory, open to pass (bwrap would make it 0700, closed
        // to the deployments' user as root).
        ...ancestors(own, hidden).flatMap((d) => ['--perms', '0755', '--dir', d]),
        ...(w.readable ?? []).flatMap((d) => ['--ro-bind-try', d, d]),
        ...w.writable.flatMap((d) => ['--bind', d, d]),
      ];
      return viaShell(bwrap, [...baseArgs(root), ...outer, ...binds, '--', ...drop, file, ...args], filter ? filter.file : undefined);
    },
  };
}

/** The directories between a hidden directory and each of `dirs` inside it, outermost first. */
function ancestors(dirs: string[], hidden: string[]): string[] {
  const out: string[] = [];
  for (const d of dirs.map((x) => path.resolve(x))) {
    for (const h of hidden) {
      if (!d.startsWith(`${h}${path.sep}`)) continue;
      const parts = path.relative(h, d).split(path.sep).slice(0, -1);
      parts.forEach((_, i) => out.push(path.join(h, ...parts.slice(0, i + 1))));
    }
  }
  return [...new Set(out)];
}

/**
 * `o.seccomp` written to its file (through a rename, so a command starting meanwhile reads the whole
 * program) when a command runs under it here; undefined, and the log says why, when the kernel
 * refuses it. Any other failure keeps it: commands then fail and say so, rather than run unfiltered.
 */
async function seccompWorks(o: ConfinementOptions, bwrap: string, drop: string[], outer: string[]): Promise<SeccompFilter | undefined> {
  const filter = o.seccomp!;
  const written = `${filter.file}.${randomUUID()}`;
  await writeFile(written, filter.program, { mode: 0o600 });
  await rename(written, filter.file);
  const probe = await run(viaShell(bwrap, [...baseArgs(process.getuid?.() === 0), ...outer, '--', ...drop, '/bin/true'], filter.file));
  const refusal = probe.ok ? undefined : seccompRefusal(probe.said, WHO, 'HANGAR_DEPLOY_SECCOMP');
  if (!refusal) return filter;
  o.logger?.warn(refusal);
  return undefined;
}
