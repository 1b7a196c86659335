// Where a Hangar server spends its CPU on streamed runs: starts `hangar serve` under `node --cpu-prof`,
// drives two-step scripted runs over HTTP+SSE (c=1, then c=32), stops it and prints the heaviest
// functions and packages by self time. `npm run bench:profile` (PROFILE_RUNS, default 300).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHangarClient } from '../src/client/index.js';
import { collect, streamRun } from '../src/client/stream.js';
import { INSTRUCTIONS, PROMPT } from './peer/agent.js';
import { removeDataDir } from './support/data-dir.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RUNS = Number(process.env.PROFILE_RUNS ?? 300);

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Self time per function and per package (or Hangar source folder). */
export function summarize(profile: Profile, top = 25): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const fns = new Map<string, number>();
  const pkgs = new Map<string, number>();
  for (const [id, t] of self) {
    const n = byId.get(id)!;
    const url = n.callFrame.url.replace(/^file:\/\//, '');
    const where = url.includes('node_modules/')
      ? url.split('node_modules/').at(-1)!.split('/').slice(0, url.split('node_modules/').at(-1)!.startsWith('@') ? 2 : 1).join('/')
      : url.includes('/src/')
        ? `hangar:${url.split('/src/')[1]!.split('/').slice(0, -1).join('/') || '.'}`
        : url.startsWith('node:')
          ? url
          : n.callFrame.functionName.startsWith('(')
            ? n.callFrame.functionName
            : 'node-internal';
    pkgs.set(where, (pkgs.get(where) ?? 0) + t);
    const fn = `${n.callFrame.functionName || '(anonymous)'} ${path.basename(url)}:${n.callFrame.lineNumber + 1}`;
    fns.set(fn, (fns.get(fn) ?? 0) + t);
  }
  const pct = (t: number) => `${((100 * t) / total).toFixed(1).padStart(5)}%`;
  const lines = [`total sampled ${(total / 1000).toFixed(0)} ms`, '', 'by package / folder (self):'];
  for (const [k, t] of [...pkgs].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`  ${pct(t)}  ${k}`);
  lines.push('', 'by function (self):');
  for (const [k, t] of [...fns].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`  ${pct(t)}  ${k}`);
  return lines.join('\n');
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'hangar-profile-'));
  const profDir = path.join(dataDir, 'prof');
  const apiKey = `bench_${randomBytes(16).toString('hex')}`;
  const child = spawn(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${profDir}`, '--import', 'tsx', 'src/cli/main.ts', 'serve', '--port', '0'], {
    cwd: ROOT,
    env: { ...process.env, HANGAR_DATA_DIR: dataDir, HANGAR_BOOTSTRAP_API_KEY: apiKey, LOG_LEVEL: 'warn', HANGAR_WORKER_CONCURRENCY: '32' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const baseUrl = await new Promise<string>((resolve, reject) => {
    let out = '';
    const onData = (c: Buffer) => {
      out += c.toString();
      const m = /listening on (http:\/\/\S+) /.exec(out);
      if (m) resolve(m[1]!);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${out.slice(-2000)}`)));
  });
  const client = createHangarClient({ baseUrl, apiKey });
  const agentId = (await client.POST('/v1/deepagents/agents', { body: { name: 'bench', instructions: INSTRUCTIONS, runtime: { model: { model_id: 'scripted:bench' } } } })).data!.id;
  const once = async () => {
    const threadId = (await client.POST('/v1/deepagents/threads', { body: { agent_id: agentId } })).data!.id;
    const events = await collect(await streamRun({ baseUrl, apiKey, threadId, body: { agent_id: agentId, messages: [{ role: 'user', content: PROMPT }] } }));
    if (events.some((e) => e.event === 'error')) throw new Error(JSON.stringify(events.at(-1)));
  };
  for (const c of [1, 32]) {
    let next = 0;
    const n = c === 1 ? Math.ceil(RUNS / 4) : RUNS;
    const t = performance.now();
    await Promise.all(Array.from({ length: c }, async () => {
      while (next++ < n) await once();
    }));
    process.stderr.write(`c=${c}: ${n} runs in ${((performance.now() - t) / 1000).toFixed(1)} s\n`);
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  await exited;
  const file = (await readdir(profDir)).find((f) => f.endsWith('.cpuprofile'))!;
  process.stdout.write(`${summarize(JSON.parse(await readFile(path.join(profDir, file), 'utf8')) as Profile)}\n`);
  await removeDataDir(dataDir);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) await main();
