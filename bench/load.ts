// Load benchmark of the run engine: LOAD_RUNS (default 1,000) streamed runs started at once on one
// `hangar serve` process, each a scripted model answering token by token with a per-token delay
// (LOAD_DELAY_MS, default 20) so they overlap. Measures time to the first event (`metadata`), time to
// the end of each stream, errors, and the server's resident memory before the load and after it plus
// a settle period (LOAD_SETTLE_S, default 15). Worker concurrency: LOAD_WORKERS (default 32, the server's); the
// rest of the runs wait in the queue with their streams open. `npm run bench:load`; ends with one
// line of JSON. Targets (issue 13): 0 errors, every run completes, metadata p99 ≤ 100 ms, RSS after
// settle ≤ 1.5× before.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHangarClient } from '../src/client/index.js';
import { parseSse } from '../src/client/stream.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RUNS = Number(process.env.LOAD_RUNS ?? 1_000);
const DELAY_MS = Number(process.env.LOAD_DELAY_MS ?? 20);
const WORKERS = Number(process.env.LOAD_WORKERS ?? 32);
const SETTLE_S = Number(process.env.LOAD_SETTLE_S ?? 15);
const WORDS = Number(process.env.LOAD_WORDS ?? 20);
const PROMPT = Array.from({ length: WORDS }, (_, i) => `w${i}`).join(' ');

async function rssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
}

async function startServer(dataDir: string, apiKey: string): Promise<{ child: ChildProcess; baseUrl: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve', '--port', '0'], {
    cwd: ROOT,
    env: { ...process.env, HANGAR_DATA_DIR: dataDir, HANGAR_BOOTSTRAP_API_KEY: apiKey, LOG_LEVEL: 'warn', HANGAR_WORKER_CONCURRENCY: String(WORKERS) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const baseUrl = await new Promise<string>((resolve, reject) => {
    let out = '';
    const onData = (c: Buffer) => {
      out += c.toString();
      const m = /listening on (http:\/\/\S+) /.exec(out);
      if (m) resolve(m[1]!);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${out.slice(-2000)}`)));
  });
  child.stdout!.resume();
  child.stderr!.resume();
  return { child, baseUrl };
}

interface RunResult {
  ok: boolean;
  metadataMs: number;
  totalMs: number;
  queuePosition: number;
  error?: string;
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'hangar-load-'));
  const apiKey = `bench_${randomBytes(16).toString('hex')}`;
  const { child, baseUrl } = await startServer(dataDir, apiKey);
  const client = createHangarClient({ baseUrl, apiKey });
  try {
    const config = await client.POST('/v1/deepagents/model-configs', { body: { name: 'loadmodel', model_id: 'scripted:load', parameters: { delay_ms: DELAY_MS } } });
    if (!config.data) throw new Error(`model config: ${JSON.stringify(config.error)}`);
    const agentId = (await client.POST('/v1/deepagents/agents', { body: { name: 'load', instructions: 'You are a load test agent.', runtime: { model: { model_id: 'loadmodel' } } } })).data!.id;
    const threads: string[] = [];
    process.stderr.write(`creating ${RUNS + 20} threads…\n`);
    for (let i = 0; i < RUNS + 20; i++) threads.push((await client.POST('/v1/deepagents/threads', { body: { agent_id: agentId } })).data!.id);

    const once = async (threadId: string): Promise<RunResult> => {
      const t0 = performance.now();
      let metadataMs = Number.NaN;
      let queuePosition = 0;
      try {
        const res = await fetch(`${baseUrl}/v1/deepagents/threads/${threadId}/runs/stream`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'x-api-key': apiKey },
          body: JSON.stringify({ agent_id: agentId, messages: [{ role: 'user', content: PROMPT }], stream_mode: ['messages-tuple', 'values'] }),
        });
        if (res.status !== 200 || !res.body) return { ok: false, metadataMs, totalMs: performance.now() - t0, queuePosition, error: `status ${res.status}: ${await res.text()}` };
        let last: { event: string; data: unknown } | undefined;
        let tokens = 0;
        for await (const e of parseSse(res.body)) {
          if (e.event === 'metadata' && Number.isNaN(metadataMs)) {
            metadataMs = performance.now() - t0;
            queuePosition = Number((e.data as { queue_position?: number }).queue_position ?? 0);
          }
          if (e.event === 'messages') tokens++;
          last = e;
        }
        const values = last?.event === 'values' ? (last.data as { messages?: { type: string; content: string }[] }) : undefined;
        const answer = values?.messages?.filter((m) => m.type === 'ai').at(-1)?.content;
        const ok = answer === `You said: ${PROMPT}` && tokens > 0;
        return { ok, metadataMs, totalMs: performance.now() - t0, queuePosition, ...(ok ? {} : { error: `ended with ${JSON.stringify(last).slice(0, 300)}` }) };
      } catch (error) {
        return { ok: false, metadataMs, totalMs: performance.now() - t0, queuePosition, error: String(error) };
      }
    };

    // Warm up (JIT, agent cache, pools), then let the server settle and take its baseline memory.
    await Promise.all(threads.slice(RUNS).map(once));
    await new Promise((r) => setTimeout(r, 3_000));
    const rssBefore = await rssMb(child.pid!);
    process.stderr.write(`RSS before: ${rssBefore.toFixed(0)} MB; starting ${RUNS} streamed runs at once…\n`);
    let peak = rssBefore;
    const sampler = setInterval(() => void rssMb(child.pid!).then((m) => (peak = Math.max(peak, m))).catch(() => {}), 250);
    const started = performance.now();
    const results = await Promise.all(threads.slice(0, RUNS).map(once));
    const wallS = (performance.now() - started) / 1000;
    clearInterval(sampler);
    process.stderr.write(`load done in ${wallS.toFixed(1)} s; settling ${SETTLE_S} s…\n`);
    await new Promise((r) => setTimeout(r, SETTLE_S * 1000));
    const rssAfter = await rssMb(child.pid!);

    const errors = results.filter((r) => !r.ok);
    const meta = results.map((r) => r.metadataMs).filter(Number.isFinite).sort((a, b) => a - b);
    const total = results.map((r) => r.totalMs).sort((a, b) => a - b);
    const maxQueue = Math.max(...results.map((r) => r.queuePosition));
    const figures = {
      bench: 'load',
      runs: RUNS,
      workers: WORKERS,
      delay_ms: DELAY_MS,
      words: WORDS,
      errors: errors.length,
      completed: results.length - errors.length,
      metadata_p50_ms: +pct(meta, 50).toFixed(1),
      metadata_p99_ms: +pct(meta, 99).toFixed(1),
      run_p50_ms: +pct(total, 50).toFixed(0),
      run_p99_ms: +pct(total, 99).toFixed(0),
      wall_s: +wallS.toFixed(1),
      runs_per_s: +(RUNS / wallS).toFixed(1),
      max_queue_position: maxQueue,
      rss_before_mb: +rssBefore.toFixed(0),
      rss_peak_mb: +peak.toFixed(0),
      rss_after_mb: +rssAfter.toFixed(0),
      rss_ratio: +(rssAfter / rssBefore).toFixed(2),
      targets_met: errors.length === 0 && pct(meta, 99) <= 100 && rssAfter / rssBefore <= 1.5,
    };
    const lines = [
      `${RUNS} streamed runs at once on one server (scripted model, ${WORDS} tokens at ${DELAY_MS} ms, ${WORKERS} workers); the machine is shared, figures are noisy.`,
      '',
      '| figure | value | target |',
      '|---|---|---|',
      `| errors | ${figures.errors} (completed ${figures.completed}/${RUNS}) | 0 |`,
      `| metadata p50 / p99 | ${figures.metadata_p50_ms} / ${figures.metadata_p99_ms} ms | p99 ≤ 100 ms |`,
      `| run p50 / p99 | ${figures.run_p50_ms} / ${figures.run_p99_ms} ms | |`,
      `| throughput | ${figures.runs_per_s} runs/s over ${figures.wall_s} s | |`,
      `| deepest queue position | ${maxQueue} | |`,
      `| RSS before / peak / after ${SETTLE_S} s | ${figures.rss_before_mb} / ${figures.rss_peak_mb} / ${figures.rss_after_mb} MB (×${figures.rss_ratio}) | after ≤ 1.5× before |`,
    ];
    if (errors.length > 0) lines.push('', `first errors: ${errors.slice(0, 3).map((e) => e.error).join(' | ')}`);
    process.stdout.write(`${lines.join('\n')}\n${JSON.stringify(figures)}\n`);
  } finally {
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    await exited;
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
