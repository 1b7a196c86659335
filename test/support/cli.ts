// Runs the `hangar` CLI as a child process, as a user runs the installed command: the package's built
// entry point, dist/cli/main.js (the test run's global set-up rebuilds it when the sources changed).
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ENTRY = ['dist/cli/main.js'];

/** Environment for CLI children: the parent's, minus settings that would leak in from the developer's shell. */
function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base = { ...process.env };
  for (const name of ['DATABASE_URL', 'HANGAR_DATA_DIR', 'HANGAR_BOOTSTRAP_API_KEY', 'PORT', 'HANGAR_SECRET_KEY']) delete base[name];
  return { ...base, ...env };
}

/** Run a CLI command to completion. */
export function runHangar(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...ENTRY, ...args], { cwd: ROOT, env: childEnv(env) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += String(d)));
    child.stderr.on('data', (d) => (stderr += String(d)));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A long-running CLI process (for `hangar serve`). */
export interface RunningHangar {
  child: ChildProcess;
  /** Everything written to standard output and standard error so far. */
  output(): string;
  /** Everything written to standard output alone so far. */
  stdout(): string;
  /** Resolve with the first match of `pattern` in the output (standard output or error). */
  waitFor(pattern: RegExp): Promise<RegExpMatchArray>;
  /** Resolve with the exit code. */
  exited: Promise<number | null>;
}

/**
 * Start a CLI command that keeps running. `extraStdio`: descriptors the process inherits from 3 on, as
 * from a supervisor that leaves descriptors open (`'ignore'` for none at a position).
 */
export function spawnHangar(args: string[], env: Record<string, string> = {}, extraStdio: Exclude<StdioOptions, string> = []): RunningHangar {
  const child = spawn(process.execPath, [...ENTRY, ...args], { cwd: ROOT, env: childEnv(env), stdio: ['pipe', 'pipe', 'pipe', ...extraStdio] });
  let out = '';
  let stdout = '';
  const waiters: { pattern: RegExp; resolve: (m: RegExpMatchArray) => void }[] = [];
  const check = () => {
    for (const w of [...waiters]) {
      const m = out.match(w.pattern);
      if (m) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(m);
      }
    }
  };
  child.stdout!.on('data', (d) => {
    out += String(d);
    stdout += String(d);
    check();
  });
  child.stderr!.on('data', (d) => {
    out += String(d);
    check();
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return {
    child,
    output: () => out,
    stdout: () => stdout,
    waitFor: (pattern) =>
      new Promise((resolve, reject) => {
        waiters.push({ pattern, resolve });
        check();
        void exited.then((code) => reject(new Error(`hangar exited (${code}) before printing ${pattern}:\n${out}`)));
      }),
    exited,
  };
}
