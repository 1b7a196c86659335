// Child processes of the benchmarks: a server (or the peer) started and stopped.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Start a child process in `cwd` (this checkout by default) and wait for a line matching `ready`; returns the match. */
export async function startChild(command: string, args: string[], env: Record<string, string>, ready: RegExp, cwd = ROOT): Promise<{ child: ChildProcess; match: RegExpMatchArray }> {
  const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const match = await new Promise<RegExpMatchArray>((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const m = ready.exec(output);
      if (m) resolve(m);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}:\n${output.slice(-2000)}`)));
  });
  child.stdout!.resume();
  child.stderr!.resume();
  return { child, match };
}

/** Stop a child with SIGTERM and wait for it to exit. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  await exited;
}
