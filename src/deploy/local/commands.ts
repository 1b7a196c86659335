// Running a build step (git, install, build) as a child process in its own process group, with its
// output captured and a time limit that kills the whole group.
import { spawn } from 'node:child_process';
import type { Wrap } from './confine.js';
import { abortReason, DriverFailure, type LogStream } from '../driver.js';
import { stdioWithoutInherited } from '../../sandbox/inherited-fds.js';

/** How to run one command. */
export interface CommandOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Deadline (epoch ms) shared by every step of a build. */
  deadline: number;
  signal: AbortSignal;
  /** A new stream into the log: one for a command's stdout and one for its stderr, each ended when it exits. */
  output(): LogStream;
  /** Runs the command confined (src/deploy/local/confine.ts): `file args…` becomes what to spawn. */
  wrap?: Wrap | undefined;
}

/** How long a stopped step gets to end on SIGTERM before its process group is killed. */
export const STOP_GRACE_MS = 5_000;

/** Run `file args…`; resolves with stdout, throws DriverFailure on a non-zero exit, timeout or abort. */
export function run(file: string, args: string[], o: CommandOptions): Promise<string> {
  return new Promise((resolve, reject) => {
    // Aborted between two steps (while fetching, unpacking, reading the configuration): the next
    // step does not start at all.
    if (o.signal.aborted) return reject(new DriverFailure(`${file} was not started: ${abortReason(o.signal)}`));
    const remaining = o.deadline - Date.now();
    if (remaining <= 0) return reject(new DriverFailure('the build time limit was reached'));
    const command = o.wrap ? o.wrap(file, args) : { file, args };
    const child = spawn(command.file, command.args, { cwd: o.cwd, env: o.env, detached: true, stdio: stdioWithoutInherited(['ignore', 'pipe', 'pipe']) });
    let stdout = '';
    let why: string | undefined;
    let killer: NodeJS.Timeout | undefined;
    const signalGroup = (sig: NodeJS.Signals) => {
      try {
        process.kill(-child.pid!, sig);
      } catch {
        /* already gone */
      }
    };
    // The whole process group (a step's children too): SIGTERM, then SIGKILL after a grace. (A
    // confined step ignores SIGTERM, as bwrap must: it ends with the SIGKILL.)
    const stop = (reason: string) => {
      if (why !== undefined) return;
      why = reason;
      signalGroup('SIGTERM');
      killer = setTimeout(() => signalGroup('SIGKILL'), STOP_GRACE_MS);
    };
    const timer = setTimeout(() => stop('the build time limit was reached'), remaining);
    const onAbort = () => stop('stopped');
    o.signal.addEventListener('abort', onAbort, { once: true });
    // Decoded as streams: a character written across two pieces stays whole (a secret holding one
    // must reach the redaction as written).
    const out = o.output();
    const err = o.output();
    child.stdout!.setEncoding('utf8').on('data', (t: string) => {
      stdout += t;
      out.write(t);
    });
    child.stderr!.setEncoding('utf8').on('data', (t: string) => err.write(t));
    child.on('error', (error) => {
      out.end();
      err.end();
      clearTimeout(timer);
      o.signal.removeEventListener('abort', onAbort);
      reject(new DriverFailure(`could not run ${file}: ${error.message}`));
    });
    child.on('close', (code, sig) => {
      // Its output is over: what the redaction held back of it is written.
      out.end();
      err.end();
      clearTimeout(timer);
      o.signal.removeEventListener('abort', onAbort);
      if (why !== undefined) {
        // What the step started may outlive it in its group: the SIGKILL still comes after the grace.
        if (killer) killer.unref();
        return reject(new DriverFailure(`${file} ${why === 'stopped' ? `was stopped: ${abortReason(o.signal)}` : `killed: ${why}`}`));
      }
      if (code === 0) return resolve(stdout);
      reject(new DriverFailure(`\`${[file, ...args].join(' ').slice(0, 200)}\` exited with ${code ?? sig}`));
    });
  });
}

/** Run a shell command line (install and build commands are given as one). */
export function runShell(command: string, o: CommandOptions): Promise<string> {
  const line = o.output();
  line.write(`$ ${command}\n`);
  line.end();
  return run('/bin/sh', ['-c', command], o);
}

/** Output that goes nowhere (a command whose output is only its result). */
export const DISCARD: () => LogStream = () => ({ write() {}, end() {} });
