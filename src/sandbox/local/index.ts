// The local sandbox driver: every command runs in fresh Linux namespaces made by bubblewrap (`bwrap`,
// Debian's `bubblewrap` package), with resource limits set by util-linux's `prlimit`.
//
// What a command sees: the host's /usr and /etc read-only (and the /bin, /lib… links into /usr), its
// own /proc, a minimal /dev, a private /tmp (a small tmpfs), and its sandbox's work directory at
// /workspace (the only place that persists). Nothing else of the host: not Hangar's data directory,
// not other sandboxes, not any home directory. It has its own network namespace with only a loopback
// device, so nothing outside is reachable (not even Hangar or PostgreSQL on the host's 127.0.0.1),
// and its own PID, IPC and UTS namespaces. It inherits none of the descriptors Hangar inherited
// (inherited-fds.ts), runs at nice 19 and is the first the OOM killer ends (score 1000, which it
// cannot lower: its /proc is read-only), under a seccomp filter (seccomp.ts).
//
// Two ways to get there, by who runs Hangar:
// - root: bwrap sets the namespaces up as root, then `setpriv` drops to a user of the sandbox's own
//   (`HANGAR_SANDBOX_UID_BASE` + slot) with no capabilities, an empty bounding set and no_new_privs
//   (so set-uid programs under /usr grant nothing). A user per sandbox keeps the process limit per
//   sandbox (the kernel does not enforce it for root, nor inside a user namespace mapped to root)
//   and its work directory (mode 0700, owned by that user) closed to every other sandbox's user.
//   That user then runs a second, unprivileged bwrap over the same view (`--dev-bind / /`) only to
//   make a user namespace in which further ones are forbidden: otherwise the command could make
//   one (`unshare -Ur`) and hold every capability in it, over its own mounts and network, and the
//   kernel code behind them. (The first bwrap cannot: as root its user namespace would map the
//   command to root on the host; and a bwrap run as that user cannot reach the work directory
//   through Hangar's data directory, not even as a descriptor.)
// - anyone else: bwrap makes an unprivileged user namespace (and forbids further ones); the
//   command runs as Hangar's user mapped inside, with no capabilities.
// Forbidding further user namespaces needs bwrap 0.8 (`--disable-userns`): an older one is found
// out once, said in the log, and commands run without it. As root, the second bwrap is left out
// where it cannot run as a sandbox's user (checked once; see `usernsPolicy`).
//
// Why bubblewrap and not a home-made namespace setup: it is the well-kept tool Flatpak uses for
// exactly this, packaged by every distribution; Node has no namespace API of its own.
import { CappedOutput } from '../output.js';
import { canForbidUserNamespaces, dropRoot, noUserNamespaces } from '../drop-root.js';
import { stdioWithoutInherited } from '../inherited-fds.js';
import { nativeSeccompProgram, seccompRefusal } from './seccomp.js';
import { spawn, execFile, type ChildProcessByStdio } from 'node:child_process';
import { constants as fsConstants } from 'node:fs';
import { access, chown, lstat, mkdir, readdir, readlink, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { promisify } from 'node:util';
import type { Logger } from '../../logging.js';
import type { DiskUsage, ExecRequest, ExecResult, SandboxDriver, SandboxLimits, SandboxRef } from '../driver.js';

const execFileAsync = promisify(execFile);

/** Where a sandbox's work directory appears inside it. */
export const WORKSPACE = '/workspace';

/** Settings of the local driver. */
export interface LocalSandboxOptions {
  /** Where work directories live: `<dir>/<sandbox id>/`. */
  dir: string;
  limits: SandboxLimits;
  /** When Hangar runs as root: sandbox commands run as user and group `uidBase + slot`. */
  uidBase: number;
  /** The bwrap, prlimit, setpriv and choom executables (found on PATH by default). */
  bwrap?: string | undefined;
  prlimit?: string | undefined;
  setpriv?: string | undefined;
  choom?: string | undefined;
  /** How long `du` may take to measure a work directory (default 10 s); beyond it, it is killed. */
  diskUsageTimeoutMs?: number | undefined;
  /** Whether commands run under the seccomp filter (seccomp.ts); on unless turned off. */
  seccomp?: boolean | undefined;
  /** Where to say that this bwrap cannot forbid nested user namespaces, or apply the seccomp filter. */
  logger?: Pick<Logger, 'warn'> | undefined;
}

const ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Runs sandboxes as bubblewrap namespaces on this host. */
export class LocalSandboxDriver implements SandboxDriver {
  readonly name = 'local' as const;
  private readonly running = new Map<string, Set<() => void>>();
  private systemBinds?: Promise<string[]>;
  private userns?: Promise<{ flags: string[]; nested: boolean }>;
  private hasChoom?: Promise<boolean>;
  private filter?: Promise<Buffer | null>;

  constructor(private readonly o: LocalSandboxOptions) {}

  private get asRoot(): boolean {
    return process.getuid?.() === 0;
  }

  private workDir(id: string): string {
    if (!ID.test(id)) throw new Error(`not a sandbox id: ${id}`);
    return path.join(this.o.dir, id);
  }

  async unavailable(): Promise<string | null> {
    for (const [name, bin] of [
      ['bubblewrap (bwrap)', this.o.bwrap ?? 'bwrap'],
      ['prlimit (util-linux)', this.o.prlimit ?? 'prlimit'],
      ...(this.asRoot ? [['setpriv (util-linux)', this.o.setpriv ?? 'setpriv'] as const] : []),
    ] as const) {
      if (!(await onPath(bin))) return `the local sandbox driver needs ${name}; install it (Debian/Ubuntu: apt-get install -y ${name.startsWith('bubble') ? 'bubblewrap' : 'util-linux'})`;
    }
    // Namespaces may be refused (a container without user namespaces, say): try once.
    const probe = await this.spawnSandbox(null, { command: 'true' }, { id: '', slot: 0 }, null).catch((error: unknown) => ({ error }));
    if ('error' in probe) return `bubblewrap cannot start here: ${String(probe.error)}`;
    if (probe.exitCode !== 0) return `bubblewrap cannot make namespaces here: ${probe.output.toString('utf8').trim()}`;
    return null;
  }

  private uidOf(ref: SandboxRef): number {
    return this.o.uidBase + ref.slot;
  }

  async ensure(ref: SandboxRef): Promise<void> {
    const dir = this.workDir(ref.id);
    await mkdir(this.o.dir, { recursive: true, mode: 0o700 });
    await mkdir(dir, { recursive: true, mode: 0o700 });
    if (this.asRoot) await chown(dir, this.uidOf(ref), this.uidOf(ref));
  }

  async exec(ref: SandboxRef, request: ExecRequest): Promise<ExecResult> {
    return this.spawnSandbox(this.workDir(ref.id), request, ref, await this.seccompFilter());
  }

  async stop(): Promise<void> {
    // Nothing of a sandbox runs between its commands (each is a fresh set of namespaces), so an
    // idle sandbox has nothing to stop; its work directory stays until it is removed.
  }

  async remove(id: string): Promise<void> {
    for (const kill of this.running.get(id) ?? []) kill();
    const dir = this.workDir(id);
    try {
      await rm(dir, { recursive: true, force: true });
    } catch {
      // A command may have left directories without write permission (only a problem when Hangar
      // is not root): give them back, then remove. rm and chmod -R never follow symbolic links.
      await execFileAsync('chmod', ['-R', 'u+rwX', dir]).catch(() => {});
      await rm(dir, { recursive: true, force: true });
    }
  }

  async diskUsage(id: string): Promise<DiskUsage> {
    try {
      // du counts blocks without following symbolic links. A work directory of millions of files
      // (or a slow file system) would keep it busy for long, after every command: it is bounded.
      const { stdout } = await execFileAsync('du', ['-s', '-B1', this.workDir(id)], {
        timeout: this.o.diskUsageTimeoutMs ?? 10_000,
        killSignal: 'SIGKILL',
      });
      return Number.parseInt(stdout, 10);
    } catch (error) {
      return (error as { killed?: boolean }).killed ? 'timed_out' : null;
    }
  }

  async list(): Promise<string[]> {
    const names = await readdir(this.o.dir).catch(() => [] as string[]);
    return names.filter((n) => ID.test(n));
  }

  /** Whether util-linux's `choom` is here (2.33 and later; without it the OOM score is left as it is). */
  private choom(): Promise<boolean> {
    this.hasChoom ??= onPath(this.o.choom ?? 'choom');
    return this.hasChoom;
  }

  /**
   * The seccomp program commands run under (seccomp.ts), or null without one: turned off, another
   * architecture than x86_64 or aarch64, or refused by the kernel (found out once, with a command
   * that only runs `true`, and said in the log: commands then run without it).
   */
  private seccompFilter(): Promise<Buffer | null> {
    this.filter ??= (async () => {
      if (this.o.seccomp === false) return null;
      const who = 'commands in local sandboxes';
      const program = nativeSeccompProgram(who, this.o.logger && ((m) => this.o.logger!.warn(m)));
      if (!program) return null;
      const probe = { command: 'true' };
      const ref = { id: '', slot: 0 };
      const withFilter = await this.spawnSandbox(null, probe, ref, program).catch((error: unknown) => ({ exitCode: -1, output: Buffer.from(String(error)) }));
      if (withFilter.exitCode === 0) return program;
      // Only a refusal of the filter itself lets commands run without it; any other failure (which
      // `unavailable` reports when bubblewrap cannot run at all) keeps it.
      const refusal = seccompRefusal(withFilter.output.toString('utf8'), who, 'HANGAR_SANDBOX_SECCOMP');
      if (!refusal) return program;
      const without = await this.spawnSandbox(null, probe, ref, null).catch(() => ({ exitCode: -1 }));
      if (without.exitCode !== 0) return program;
      this.o.logger?.warn(refusal);
      return null;
    })();
    return this.filter;
  }

  /** The bwrap arguments that show the host's system read-only (mirroring /bin → usr/bin links). */
  private binds(): Promise<string[]> {
    this.systemBinds ??= (async () => {
      const args = ['--ro-bind', '/usr', '/usr', '--ro-bind', '/etc', '/etc'];
      for (const top of ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32']) {
        const st = await lstat(top).catch(() => null);
        if (!st) continue;
        if (st.isSymbolicLink()) args.push('--symlink', await readlink(top), top);
        else if (st.isDirectory()) args.push('--ro-bind', top, top);
      }
      return args;
    })();
    return this.systemBinds;
  }

  /**
   * How commands are kept from making user namespaces, checked once: `flags` holds
   * `--disable-userns` when this bwrap has it (0.8 and later), and `nested` (root only) says whether
   * the second bwrap runs, i.e. whether it can here: where the kernel refuses a sandbox's user a user
   * namespace of use (disabled, or one without capabilities as under Ubuntu's AppArmor rule), there
   * is nothing to forbid. What cannot be forbidden is said in the log.
   */
  private usernsPolicy(): Promise<{ flags: string[]; nested: boolean }> {
    this.userns ??= (async () => {
      const bwrap = this.o.bwrap ?? 'bwrap';
      const help = await execFileAsync(bwrap, ['--help']).then(
        (r) => r.stdout,
        (error: { stdout?: string }) => error.stdout ?? '',
      );
      const flags = help.includes('--disable-userns') ? ['--disable-userns'] : [];
      const noFlag = 'this bubblewrap has no --disable-userns (it came in 0.8): commands in local sandboxes can create user namespaces of their own; install bubblewrap 0.8 or later';
      if (!this.asRoot) {
        if (flags.length === 0) this.o.logger?.warn(noFlag);
        return { flags, nested: false };
      }
      const [setpriv, ...drop] = dropRoot(this.o.setpriv ?? 'setpriv', this.o.uidBase);
      const asUser = (command: string[]) => execFileAsync(setpriv!, [...drop, ...command]).then(() => true, () => false);
      const warn = this.o.logger && ((message: string) => this.o.logger!.warn(message));
      if (!(await canForbidUserNamespaces({ asUser, bwrap, flags, warn, who: 'commands in local sandboxes', whose: "a sandbox's" }))) return { flags, nested: false };
      if (flags.length === 0) this.o.logger?.warn(noFlag);
      return { flags, nested: flags.length > 0 };
    })();
    return this.userns;
  }

  /** Run `request` in a fresh sandbox over `dir` (none: an empty /workspace), under `filter` when given. */
  private async spawnSandbox(dir: string | null, request: ExecRequest, ref: SandboxRef, filter: Buffer | null): Promise<ExecResult> {
    const limits = this.o.limits;
    const cap = request.maxOutputBytes ?? limits.maxOutputBytes;
    const started = Date.now();
    const root = this.asRoot;
    const uid = this.uidOf(ref);
    const id = ref.id || undefined;
    const userns = await this.usernsPolicy();
    const nested = root && userns.nested;
    // The seccomp program goes to bwrap on descriptor 4 (read and closed by bwrap, so the command
    // never holds it); the bwrap that starts the command applies it last, just before the command
    // runs: the second bwrap when there is one (its own set-up makes a user namespace, which the
    // filter refuses), else the first.
    const seccomp = filter ? ['--seccomp', '4'] : [];
    // /proc read-only: a command cannot write its processes' files there, so it cannot lower the
    // OOM score set below (`/proc/self/oom_score_adj`; lowering it takes no privilege down to the
    // floor last set by a holder of CAP_SYS_RESOURCE, which a container's root seldom has).
    const readOnlyProc = ['--remount-ro', '/proc'];
    const args = [
        '--unshare-ipc',
        '--unshare-pid',
        '--unshare-net',
        '--unshare-uts',
        '--unshare-cgroup-try',
        // Not root: an unprivileged user namespace, no capabilities, no nested user namespaces.
        ...(root ? [] : ['--unshare-user', ...userns.flags, '--cap-drop', 'ALL']),
        '--die-with-parent',
        '--new-session',
        '--hostname',
        'sandbox',
        ...(await this.binds()),
        '--proc',
        '/proc',
        // The second bwrap needs /proc writable to make its user namespace, and does this itself.
        ...(nested ? [] : readOnlyProc),
        '--dev',
        '/dev',
        '--perms',
        '1777',
        '--size',
        String(limits.tmpBytes),
        '--tmpfs',
        '/tmp',
        ...(dir ? ['--bind', dir, WORKSPACE] : ['--dir', WORKSPACE]),
        '--chdir',
        WORKSPACE,
        '--clearenv',
        '--setenv',
        'PATH',
        '/usr/local/bin:/usr/bin:/bin',
        '--setenv',
        'HOME',
        WORKSPACE,
        '--setenv',
        'TMPDIR',
        '/tmp',
        '--setenv',
        'LANG',
        'C.UTF-8',
        '--setenv',
        'USER',
        'sandbox',
        ...(nested ? [] : seccomp),
    ];
    // The host's own processes first: under memory pressure the kernel's OOM killer ends a sandbox's
    // processes before Hangar or PostgreSQL (score 1000, the most likely, set on bwrap itself so that
    // it holds from the start; the read-only /proc above keeps a command from lowering it), and they
    // get CPU time only when the host's processes leave it (nice 19; RLIMIT_NICE 0 below keeps a
    // command from raising its priority again).
    const oom = (await this.choom()) ? [this.o.choom ?? 'choom', '-n', '1000', '--'] : [];
    const command = [
        'nice',
        '-n',
        '19',
        // Root: drop to the sandbox's own user, every capability gone, set-uid programs powerless.
        ...(root
          ? [
              ...dropRoot(this.o.setpriv ?? 'setpriv', uid),
              // …then, as that user, a user namespace of its own with no capabilities and no nested ones.
              ...(nested ? noUserNamespaces(this.o.bwrap ?? 'bwrap', userns.flags, WORKSPACE, [...readOnlyProc, ...seccomp]) : []),
            ]
          : []),
        this.o.prlimit ?? 'prlimit',
        `--cpu=${limits.cpuSeconds}`,
        `--as=${limits.memoryBytes}`,
        `--nproc=${limits.maxProcesses}`,
        `--fsize=${limits.maxFileBytes}`,
        '--core=0',
        '--nice=0',
        '--',
        '/bin/sh',
        '-c',
        // Merged output keeps the order in which a command wrote to stdout and stderr.
        request.mergeStderr === false ? request.command : `exec 2>&1\n${request.command}`,
    ];
      // The set-up goes to bwrap on a pipe (`--args 3`), not on its command line: bwrap's command line
      // is what the sandbox reads in /proc/1/cmdline, and the set-up names host paths (the work
      // directory under Hangar's data directory) that are none of the sandbox's business.
      // None of the descriptors Hangar itself inherited reaches the sandbox (see inherited-fds.ts).
      const [bin, ...binArgs] = [...oom, this.o.bwrap ?? 'bwrap', '--args', '3', '--', ...command];
      const child = spawn(bin!, binArgs, {
        stdio: stdioWithoutInherited(filter ? ['pipe', 'pipe', 'pipe', 'pipe', 'pipe'] : ['pipe', 'pipe', 'pipe', 'pipe']),
        env: {},
      }) as ChildProcessByStdio<Writable, Readable, Readable>;
      const setup = child.stdio[3] as Writable;
      setup.on('error', () => {}); // bwrap gone before reading it: its exit says why
      setup.end(`${args.join('\0')}\0`);
      if (filter) {
        const program = child.stdio[4] as Writable;
        program.on('error', () => {});
        program.end(filter);
      }
      return await new Promise<ExecResult>((resolve, reject) => {
        let stoppedBy: ExecResult['stoppedBy'] = null;
        const kill = (why: NonNullable<ExecResult['stoppedBy']>) => {
          stoppedBy ??= why;
          // bwrap dies, so does the sandbox's PID 1 (--die-with-parent), so does every process in it.
          child.kill('SIGKILL');
        };
        const timer = setTimeout(() => kill('timeout'), limits.timeoutMs);
        const onAbort = () => kill('aborted');
        request.signal?.addEventListener('abort', onAbort, { once: true });
        if (request.signal?.aborted) onAbort(); // its run ended while the command was being set up
        const stopper = () => kill('aborted');
        if (id) {
          if (!this.running.has(id)) this.running.set(id, new Set());
          this.running.get(id)!.add(stopper);
        }
        const out = new CappedOutput(cap, request.onOutput, () => kill('output_limit'));
        const take = out.take;
        child.stdout.on('data', take);
        const errChunks: Buffer[] = [];
        child.stderr.on('data', (chunk: Buffer) => {
          // bwrap's own complaints (and stderr of binary reads) are kept apart, a little of them.
          if (errChunks.reduce((n, c) => n + c.length, 0) < 4096) errChunks.push(chunk);
        });
        child.stdin.on('error', () => {}); // a command that exits without reading its input
        child.stdin.end(request.stdin ? Buffer.from(request.stdin) : undefined);
        child.on('error', (error) => {
          clearTimeout(timer);
          reject(error);
        });
        child.on('close', (code, signal) => {
          clearTimeout(timer);
          request.signal?.removeEventListener('abort', onAbort);
          if (id) this.running.get(id)?.delete(stopper);
          const stderr = Buffer.concat(errChunks);
          const output = Buffer.concat(request.mergeStderr === false || stderr.length === 0 ? out.chunks : [...out.chunks, stderr]);
          resolve({
            output,
            exitCode: stoppedBy || signal ? null : code,
            signal: signal ?? null,
            truncated: out.truncated,
            stoppedBy,
            durationMs: Date.now() - started,
          });
        });
      });
  }
}

async function onPath(bin: string): Promise<boolean> {
  if (bin.includes('/')) return access(bin, fsConstants.X_OK).then(() => true, () => false);
  for (const dir of (process.env.PATH ?? '/usr/bin:/bin').split(':')) {
    if (await access(path.join(dir, bin), fsConstants.X_OK).then(() => true, () => false)) return true;
  }
  return false;
}
