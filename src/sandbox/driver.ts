// What a sandbox driver does for the sandbox service: make a sandbox's storage, run one command in
// it, stop and remove it. Drivers know nothing of agents, threads, HTTP or sandbox statuses (the
// service owns the lifecycle).

/** Limits of every command, from settings (see docs/sandboxes.md). */
export interface SandboxLimits {
  /** CPU time of each process, in seconds (RLIMIT_CPU). */
  cpuSeconds: number;
  /** Address space of each process, in bytes (RLIMIT_AS). */
  memoryBytes: number;
  /** Processes (and threads) one command may have at once (RLIMIT_NPROC within its namespace). */
  maxProcesses: number;
  /** Largest file a command may write, in bytes (RLIMIT_FSIZE). */
  maxFileBytes: number;
  /** Output kept of a command (stdout and stderr together); the command is stopped beyond it. */
  maxOutputBytes: number;
  /** Wall-clock time of one command. */
  timeoutMs: number;
  /** Size of the private /tmp (a tmpfs), in bytes. */
  tmpBytes: number;
}

/** One command to run. */
export interface ExecRequest {
  /** A shell command line (`/bin/sh -c`), run in the sandbox's work directory. */
  command: string;
  /** Bytes written to the command's standard input (then closed); none by default. */
  stdin?: Uint8Array | undefined;
  /** Whether stderr is merged into the output (true) or dropped (false: binary reads). */
  mergeStderr?: boolean | undefined;
  /** Output cap of this command (default: the limits'). */
  maxOutputBytes?: number | undefined;
  /** Called with each piece of output as it arrives (streaming). */
  onOutput?: ((chunk: Buffer) => void) | undefined;
  signal?: AbortSignal | undefined;
}

/** How a command ended. */
export interface ExecResult {
  output: Buffer;
  /** The exit code, or null when the command was killed (by a limit, the timeout or a signal). */
  exitCode: number | null;
  /** The signal that ended it, if any. */
  signal: string | null;
  /** The output went beyond the cap: what is kept is the beginning. */
  truncated: boolean;
  /**
   * Why Hangar stopped the command, if it did: `aborted` by its run (cancelled, …), `removed` with its
   * sandbox (the sandbox service sets it; drivers say `aborted`).
   */
  stoppedBy: 'timeout' | 'output_limit' | 'aborted' | 'removed' | null;
  durationMs: number;
}

/** The sandbox a driver works on: its id, and a small number unique among live sandboxes. */
export interface SandboxRef {
  id: string;
  /** 0 ≤ slot < 65536: the local driver runs a sandbox as user `HANGAR_SANDBOX_UID_BASE + slot`. */
  slot: number;
  /** A policy of the sandbox (`allow-network`) lets it reach public network addresses. */
  allowNetwork?: boolean | undefined;
}

/** A sandbox driver. */
export interface SandboxDriver {
  readonly name: 'local' | 'kubernetes';
  /** Why this driver cannot work on this host (bubblewrap missing, …), or null when it can. */
  unavailable(): Promise<string | null>;
  /** Make sure sandbox `id` exists and can run commands (created on first use, restarted after stop). */
  ensure(ref: SandboxRef): Promise<void>;
  /** Run one command in sandbox `id` (which `ensure` made). Never throws for the command's own failure. */
  exec(ref: SandboxRef, request: ExecRequest): Promise<ExecResult>;
  /** Stop what runs for sandbox `id`, keeping its files. */
  stop(id: string): Promise<void>;
  /** Remove sandbox `id` and its files (idempotent). */
  remove(id: string): Promise<void>;
  /** Bytes used by sandbox `id`'s files: null when unknown now, `timed_out` when measuring took too long. */
  diskUsage(id: string): Promise<DiskUsage>;
  /** Ids of every sandbox this driver has (to find the ones orphaned by a crash). */
  list(): Promise<string[]>;
}

/** A measure of a sandbox's disk use: bytes; null when it cannot be measured now (kept as it was); `timed_out` when measuring ran beyond its time limit (shown as unknown). */
export type DiskUsage = number | null | 'timed_out';
