// One running revision of the local driver: the application on the official LangGraph JS server,
// as a child process on a fixed loopback port, restarted with back-off when it crashes.
import { spawn, type ChildProcess } from 'node:child_process';
import type { Wrap } from './confine.js';
import { DriverFailure, type LogStream } from '../driver.js';
import { stdioWithoutInherited } from '../../sandbox/inherited-fds.js';

/** How to start the application process. */
export interface AppProcessSpec {
  /** node arguments (entry script and loader flags). */
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  port: number;
  /** A new stream into the log: one for each process's stdout and one for its stderr, ended when it is gone. */
  output(): LogStream;
  /** Runs the process confined (src/deploy/local/confine.ts): `file args…` becomes what to spawn. */
  wrap?: Wrap | undefined;
}

const MAX_BACKOFF_MS = 30_000;
/** Running this long after a restart resets the back-off. */
const STABLE_MS = 60_000;

/** A supervised application process. */
export class AppProcess {
  private child: ChildProcess | undefined;
  private stopped = false;
  /** Restarts only once it has been healthy: a revision that never starts fails its deploy instead. */
  private supervising = false;
  private backoffMs = 1_000;
  private restartTimer: NodeJS.Timeout | undefined;
  private exited: Promise<void> = Promise.resolve();
  /** How many times it was restarted after a crash. */
  restarts = 0;
  /** Waiters for the next healthy start after a crash (the front holds requests meanwhile). */
  private upWaiters: (() => void)[] = [];
  private up = false;

  constructor(private readonly spec: AppProcessSpec) {}

  get port(): number {
    return this.spec.port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.spec.port}`;
  }

  /**
   * A new, not yet started process of the same application, role included (a stopped process
   * cannot start again): for bringing back a revision that was stopped for a rollout that failed.
   */
  again(): AppProcess {
    return new AppProcess({ ...this.spec, env: { ...this.spec.env } });
  }

  /** Start it and wait until `/ok` answers 200; fails when it exits first or the time runs out. */
  async startHealthy(timeoutMs: number, signal: AbortSignal): Promise<void> {
    this.spawn();
    const deadline = Date.now() + timeoutMs;
    let exitedEarly = false;
    void this.exited.then(() => (exitedEarly = true));
    while (!exitedEarly) {
      if (signal.aborted) throw new DriverFailure('stopped');
      if (Date.now() > deadline) throw new DriverFailure(`the application did not answer GET /ok within ${timeoutMs} ms`);
      if (await this.healthy()) {
        this.supervising = true;
        this.markUp(true);
        return;
      }
      await new Promise((r) => setTimeout(r, 150));
    }
    throw new DriverFailure('the application exited before it became healthy; see the deploy logs');
  }

  /**
   * Make this process the writer of the deployment's database: it reloads the storage (which the
   * previous revision flushed when it stopped) and persists from then on. Restarts after a crash
   * start as the writer directly.
   */
  async activate(timeoutMs = 30_000): Promise<void> {
    this.spec.env.HANGAR_STORAGE_ROLE = 'writer';
    const child = this.child;
    if (!child?.connected) throw new DriverFailure('the application is not running');
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => done(new DriverFailure(`the application did not take over its database within ${timeoutMs} ms`)), timeoutMs);
      const onMessage = (m: unknown) => {
        if ((m as { type?: string })?.type === 'activated') done();
        else if ((m as { type?: string })?.type === 'activate-failed') done(new DriverFailure(`the application could not load its database: ${(m as { error?: string }).error}`));
      };
      const onExit = () => done(new DriverFailure('the application exited while taking over its database'));
      const done = (error?: Error) => {
        clearTimeout(timer);
        child.off('message', onMessage);
        child.off('exit', onExit);
        if (error) reject(error);
        else resolve();
      };
      child.on('message', onMessage);
      child.once('exit', onExit);
      child.send({ type: 'activate' });
    });
  }

  /**
   * Whether the process running now exits within `ms` (or has already exited). A connection the
   * process dropped because it died may have carried a request it was executing.
   */
  async exitsWithin(ms: number): Promise<boolean> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return true;
    let timer: NodeJS.Timeout | undefined;
    const exited = await Promise.race([this.exited.then(() => true), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)))]);
    clearTimeout(timer);
    return exited;
  }

  /** Resolves when the process answers (at once unless it is between a crash and its restart). */
  whenUp(timeoutMs: number): Promise<void> {
    if (this.up || this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.upWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private markUp(up: boolean): void {
    this.up = up;
    if (!up) return;
    for (const w of this.upWaiters.splice(0)) w();
  }

  /** Whether GET /ok answers 200 now. */
  async healthy(): Promise<boolean> {
    try {
      const res = await fetch(`${this.url}/ok`, { signal: AbortSignal.timeout(2_000) });
      await res.body?.cancel();
      return res.ok;
    } catch {
      return false;
    }
  }

  /** Stop it for good (SIGTERM to its process group, SIGKILL after 5 s). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.markUp(true);
    clearTimeout(this.restartTimer);
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const done = this.exited;
    signalGroup(child, 'SIGTERM');
    const timer = setTimeout(() => signalGroup(child, 'SIGKILL'), 5_000);
    await done;
    clearTimeout(timer);
  }

  private spawn(): void {
    const started = Date.now();
    const command = this.spec.wrap ? this.spec.wrap(process.execPath, this.spec.args) : { file: process.execPath, args: this.spec.args };
    const child = spawn(command.file, command.args, { cwd: this.spec.cwd, env: this.spec.env, detached: true, stdio: stdioWithoutInherited(['ignore', 'pipe', 'pipe', 'ipc']) });
    this.child = child;
    // Each stream on its own, decoded as a stream (a character written in two pieces stays whole).
    const out = this.spec.output();
    const err = this.spec.output();
    child.stdout!.setEncoding('utf8').on('data', (t: string) => out.write(t));
    child.stderr!.setEncoding('utf8').on('data', (t: string) => err.write(t));
    child.once('close', () => {
      out.end();
      err.end();
    });
    this.exited = new Promise((resolve) => {
      child.once('error', () => resolve());
      child.once('exit', (code, sig) => {
        resolve();
        if (this.stopped || !this.supervising) return;
        this.markUp(false);
        if (Date.now() - started > STABLE_MS) this.backoffMs = 1_000;
        const note = this.spec.output();
        note.write(`\n[hangar] the application exited (${code ?? sig}); restarting in ${this.backoffMs} ms\n`);
        note.end();
        this.restartTimer = setTimeout(() => {
          if (this.stopped) return;
          this.restarts++;
          this.spawn();
          void this.waitHealthyAfterRestart();
        }, this.backoffMs);
        this.backoffMs = Math.min(this.backoffMs * 2, MAX_BACKOFF_MS);
      });
    });
  }

  /** After a supervised restart: mark it up once /ok answers again (or it exits again). */
  private async waitHealthyAfterRestart(): Promise<void> {
    let exited = false;
    void this.exited.then(() => (exited = true));
    while (!exited && !this.stopped) {
      if (await this.healthy()) return this.markUp(true);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

function signalGroup(child: ChildProcess, sig: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, sig);
  } catch {
    /* already gone */
  }
}
