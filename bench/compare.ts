// Two or more commits of Hangar side by side, one run at a time: a server per commit (each on its own
// embedded PostgreSQL), then streamed two-step runs (the bench:runtime run) sent to each server in turn,
// so the machine's noise falls on every commit alike. Separate runs of bench:runtime for each commit
// differ by more than a change usually costs on this shared machine; this is how to tell a change from
// the noise. `npm run bench:compare -- REV [REV…]` (default `HEAD~1 HEAD`); COMPARE_RUNS (default 150
// per commit), COMPARE_EXECUTOR (inline or thread, default inline). Each commit is checked out in a
// temporary worktree sharing this checkout's node_modules.
import { execFileSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHangarClient } from '../src/client/index.js';
import { collect, streamRun } from '../src/client/stream.js';
import { INSTRUCTIONS, PROMPT } from './peer/agent.js';
import { startChild, stopChild } from './support/child.js';
import { removeDataDir } from './support/data-dir.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const REVS = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['HEAD~1', 'HEAD'];
const RUNS = Number(process.env.COMPARE_RUNS ?? 150);
const WARMUP = 10;
const EXECUTOR = process.env.COMPARE_EXECUTOR ?? 'inline';

interface Server {
  rev: string;
  commit: string;
  once(): Promise<number>;
  stop(): Promise<void>;
}

const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();

/** A worktree of `rev` and a Hangar server started from it, with threads for every run it will get. */
async function serve(rev: string): Promise<Server> {
  const commit = git('rev-parse', '--verify', `${rev}^{commit}`);
  const tree = await mkdtemp(path.join(os.tmpdir(), 'hangar-compare-'));
  git('worktree', 'add', '--detach', '--force', tree, commit);
  await symlink(path.join(ROOT, 'node_modules'), path.join(tree, 'node_modules'));
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'hangar-compare-data-'));
  let child: ChildProcess | undefined;
  const stop = async () => {
    if (child) await stopChild(child);
    await removeDataDir(dataDir);
    git('worktree', 'remove', '--force', tree);
    await rm(tree, { recursive: true, force: true });
  };
  try {
    return await start();
  } catch (error) {
    await stop().catch(() => {});
    throw error;
  }

  async function start(): Promise<Server> {
    const apiKey = `bench_${randomBytes(16).toString('hex')}`;
    // `node --import tsx`, not the tsx CLI: the CLI exits on SIGTERM before its child (and the child's
    // embedded PostgreSQL) has.
    const started = await startChild(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', 'serve', '--port', '0'],
      { HANGAR_DATA_DIR: dataDir, HANGAR_BOOTSTRAP_API_KEY: apiKey, LOG_LEVEL: 'warn', HANGAR_WORKER_CONCURRENCY: '32', HANGAR_EXECUTOR: EXECUTOR },
      /listening on (http:\/\/\S+) /,
      tree,
    );
    child = started.child;
    const baseUrl = started.match[1]!;
    const client = createHangarClient({ baseUrl, apiKey });
    const agent = await client.POST('/v1/deepagents/agents', { body: { name: 'bench', instructions: INSTRUCTIONS, runtime: { model: { model_id: 'scripted:bench' } } } });
    const agentId = agent.data!.id;
    const threads: string[] = [];
    for (let i = 0; i < RUNS + WARMUP; i++) threads.push((await client.POST('/v1/deepagents/threads', { body: { agent_id: agentId } })).data!.id);
    let next = 0;
    return {
      rev,
      commit,
      once: async () => {
        const started = performance.now();
        const stream = await streamRun({ baseUrl, apiKey, threadId: threads[next++]!, body: { agent_id: agentId, messages: [{ role: 'user', content: PROMPT }] } });
        if (stream.status !== 200) throw new Error(`${rev} refused a run: ${stream.status}`);
        const events = await collect(stream);
        if (events.some((e) => e.event === 'error')) throw new Error(`${rev}: a run failed: ${JSON.stringify(events.at(-1))}`);
        return performance.now() - started;
      },
      stop,
    };
  }
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

const servers: Server[] = [];
try {
  for (const rev of REVS) servers.push(await serve(rev));
  for (let i = 0; i < WARMUP; i++) for (const s of servers) await s.once();
  const latencies = servers.map(() => [] as number[]);
  for (let i = 0; i < RUNS; i++) for (const [j, s] of servers.entries()) latencies[j]!.push(await s.once());
  const figures = servers.map((s, j) => {
    const sorted = [...latencies[j]!].sort((a, b) => a - b);
    return { rev: s.rev, commit: s.commit.slice(0, 12), p25: quantile(sorted, 0.25), p50: quantile(sorted, 0.5), p75: quantile(sorted, 0.75), p95: quantile(sorted, 0.95) };
  });
  const base = figures[0]!;
  console.log(`c=1 streamed runs, ${RUNS} per commit, alternated (executor ${EXECUTOR}); ratios against ${base.rev}`);
  for (const f of figures) {
    console.log(`${f.rev.padEnd(12)} ${f.commit}  p25 ${f.p25.toFixed(1)}  p50 ${f.p50.toFixed(1)}  p75 ${f.p75.toFixed(1)}  p95 ${f.p95.toFixed(1)} ms   p50 ${(f.p50 / base.p50).toFixed(3)}×`);
  }
  const round = (x: number) => Math.round(x * 100) / 100;
  console.log(
    JSON.stringify({
      bench: 'compare',
      runs: RUNS,
      executor: EXECUTOR,
      commits: figures.map((f) => ({ rev: f.rev, commit: f.commit, p25_ms: round(f.p25), p50_ms: round(f.p50), p75_ms: round(f.p75), p95_ms: round(f.p95), p50_over_first: round(f.p50 / base.p50) })),
    }),
  );
} finally {
  for (const s of servers) await s.stop().catch((error: unknown) => console.error(`could not stop the server of ${s.rev}:`, error));
}
