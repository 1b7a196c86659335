// Load benchmark of the run engine: LOAD_RUNS (default 1,000) streamed runs started at once on one
// `hangar serve` process, each a scripted model answering token by token with a per-token delay
// (LOAD_DELAY_MS, default 20) so they overlap. Measures time to the first event (`metadata`), time to
// the end of each stream, errors, and the server's resident memory before the load and after it plus
// a settle period (LOAD_SETTLE_S, default 15). Worker concurrency: LOAD_WORKERS (default 32, the server's); the
// rest of the runs wait in the queue with their streams open. `npm run bench:load`; ends with one
// line of JSON. Targets (issue 13): 0 errors, every run completes, metadata p99 ≤ 100 ms, RSS after
// settle ≤ 1.5× before. After it, the same burst from the same client against a bare HTTP server: the
// floor of this machine and client, reported beside Hangar's figures (LOAD_FLOOR=0 leaves it out).
// The server's own view of the burst (time to first byte, event-loop delay, CPU) comes from its
// /metrics; LOAD_PROFILE_DIR keeps a CPU profile of each server thread (with HANGAR_EXECUTOR=thread
// the heap and event-loop figures are the main thread's, which serves HTTP; CPU and RSS are the whole
// process's). Then, labelled apart, the same number of runs arriving at LOAD_RAMP_PER_S.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createHangarClient } from '../src/client/index.js';
import { parseSse } from '../src/client/stream.js';
import { removeDataDir } from './support/data-dir.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RUNS = Number(process.env.LOAD_RUNS ?? 1_000);
const DELAY_MS = Number(process.env.LOAD_DELAY_MS ?? 20);
const WORKERS = Number(process.env.LOAD_WORKERS ?? 32);
const SETTLE_S = Number(process.env.LOAD_SETTLE_S ?? 15);
const WORDS = Number(process.env.LOAD_WORDS ?? 20);
// A second, separately labelled phase: the same number of runs arriving at LOAD_RAMP_PER_S per second
// (0: skipped). It is reported BESIDE the burst figures, never instead of them.
const RAMP_PER_S = Number(process.env.LOAD_RAMP_PER_S ?? 100);
const PROMPT = Array.from({ length: WORDS }, (_, i) => `w${i}`).join(' ');

async function rssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
}

async function startServer(dataDir: string, apiKey: string): Promise<{ child: ChildProcess; baseUrl: string }> {
  // LOAD_PROFILE_DIR: the server writes a CPU profile per thread there when it stops (node --cpu-prof).
  const profile = process.env.LOAD_PROFILE_DIR ? ['--cpu-prof', '--cpu-prof-dir', process.env.LOAD_PROFILE_DIR] : [];
  const child = spawn(process.execPath, [...profile, '--import', 'tsx', 'src/cli/main.ts', 'serve', '--port', '0'], {
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
  /** Time to the response's headers (the server accepted the run). */
  headersMs: number;
  totalMs: number;
  queuePosition: number;
  error?: string;
}

/** The kernel's count of handshakes dropped because a listen queue was full (all sockets of the machine). */
async function listenOverflows(): Promise<number> {
  const lines = (await readFile('/proc/net/netstat', 'utf8')).split('\n').filter((l) => l.startsWith('TcpExt:'));
  const names = lines[0]!.split(' ');
  const values = lines[1]!.split(' ');
  return Number(values[names.indexOf('ListenOverflows')] ?? Number.NaN);
}

/** CPU seconds (user + system) the process `pid` has used so far (Linux: 100 clock ticks per second). */
async function cpuSeconds(pid: number): Promise<number> {
  const stat = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ');
  return (Number(stat[11]) + Number(stat[12])) / 100;
}

interface ServerView {
  /** Cumulative counts of `POST …/runs/stream` answered 200 within each bound (seconds): the server's time to the stream's first byte. */
  buckets: [number, number][];
  /** Event-loop delay since the previous scrape (prom-client resets it on each one), ms. */
  loopDelayMaxMs: number;
  loopDelayP99Ms: number;
  /** V8 heap reserved and used, and memory outside it (buffers), MB. */
  heapTotalMb: number;
  heapUsedMb: number;
  externalMb: number;
}

/** The server's own view, from /metrics. */
async function serverView(baseUrl: string, apiKey: string): Promise<ServerView> {
  const text = await (await fetch(`${baseUrl}/metrics`, { headers: { 'x-api-key': apiKey } })).text();
  const buckets: [number, number][] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('hangar_http_request_duration_seconds_bucket{') || !line.includes('runs/stream"') || !line.includes('method="POST"') || !line.includes('status="200"')) continue;
    const le = /le="([^"]+)"/.exec(line)![1]!;
    buckets.push([le === '+Inf' ? Infinity : Number(le), Number(line.split(' ').at(-1))]);
  }
  buckets.sort((a, b) => a[0] - b[0]);
  const gauge = (name: string) => +(Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1] ?? Number.NaN) * 1000).toFixed(1);
  const mb = (name: string) => +(Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1] ?? Number.NaN) / 1048576).toFixed(0);
  return {
    buckets,
    loopDelayMaxMs: gauge('nodejs_eventloop_lag_max_seconds'),
    loopDelayP99Ms: gauge('nodejs_eventloop_lag_p99_seconds'),
    heapTotalMb: mb('nodejs_heap_size_total_bytes'),
    heapUsedMb: mb('nodejs_heap_size_used_bytes'),
    externalMb: mb('nodejs_external_memory_bytes'),
  };
}

/** Quantile `p` (0–1) of the requests counted between two scrapes, as the bucket bound that holds it (seconds). */
function bucketQuantile(before: ServerView, after: ServerView, p: number): number {
  const base = new Map(before.buckets);
  const diff = after.buckets.map(([le, n]) => [le, n - (base.get(le) ?? 0)] as const);
  const count = diff.at(-1)?.[1] ?? 0;
  return diff.find(([, n]) => n >= p * count)?.[0] ?? Number.NaN;
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

/**
 * LOAD_RUNS streams opened at once by this client against a bare HTTP server (bench/support/bare-sse.ts)
 * that sends each one's `metadata` as soon as it has read the request: what the client, the kernel and
 * the machine alone cost for the burst. Time to `metadata`, p50 and p99.
 */
async function bareBurst(): Promise<{ p50: number; p99: number; errors: number }> {
  process.stderr.write(`the same burst against a bare HTTP server (the floor)…\n`);
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/support/bare-sse.ts'], {
    cwd: ROOT,
    env: { ...process.env, BARE_EVENTS: String(WORDS), BARE_DELAY_MS: String(DELAY_MS) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (c: Buffer) => {
        out += c.toString();
        const m = /BARE_URL (\S+)/.exec(out);
        if (m) resolve(m[1]!);
      });
      child.once('exit', (code) => reject(new Error(`the bare server exited with ${code}`)));
    });
    let errors = 0;
    const once = async (): Promise<number> => {
      const t0 = performance.now();
      try {
        const res = await fetch(`${url}/stream`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
          body: JSON.stringify({ messages: [{ role: 'user', content: PROMPT }], stream_mode: ['messages-tuple', 'values'] }),
        });
        let metadataMs = Number.NaN;
        for await (const e of parseSse(res.body!)) if (e.event === 'metadata' && Number.isNaN(metadataMs)) metadataMs = performance.now() - t0;
        if (Number.isNaN(metadataMs)) errors++;
        return metadataMs;
      } catch {
        errors++;
        return Number.NaN;
      }
    };
    await Promise.all(Array.from({ length: 20 }, once));
    await new Promise((r) => setTimeout(r, 1_000));
    errors = 0;
    const meta = (await Promise.all(Array.from({ length: RUNS }, once))).filter(Number.isFinite).sort((a, b) => a - b);
    return { p50: pct(meta, 50), p99: pct(meta, 99), errors };
  } finally {
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    await exited;
  }
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
    const threadCount = RUNS + 20 + (RAMP_PER_S > 0 ? RUNS : 0);
    process.stderr.write(`creating ${threadCount} threads…\n`);
    for (let i = 0; i < threadCount; i++) threads.push((await client.POST('/v1/deepagents/threads', { body: { agent_id: agentId } })).data!.id);

    const once = async (threadId: string): Promise<RunResult> => {
      const t0 = performance.now();
      let metadataMs = Number.NaN;
      let headersMs = Number.NaN;
      let queuePosition = 0;
      try {
        const res = await fetch(`${baseUrl}/v1/deepagents/threads/${threadId}/runs/stream`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'x-api-key': apiKey },
          body: JSON.stringify({ agent_id: agentId, messages: [{ role: 'user', content: PROMPT }], stream_mode: ['messages-tuple', 'values'] }),
        });
        headersMs = performance.now() - t0;
        if (res.status !== 200 || !res.body) return { ok: false, metadataMs, headersMs, totalMs: performance.now() - t0, queuePosition, error: `status ${res.status}: ${await res.text()}` };
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
        return { ok, metadataMs, headersMs, totalMs: performance.now() - t0, queuePosition, ...(ok ? {} : { error: `ended with ${JSON.stringify(last).slice(0, 300)}` }) };
      } catch (error) {
        return { ok: false, metadataMs, headersMs, totalMs: performance.now() - t0, queuePosition, error: String(error) };
      }
    };

    // Warm up (JIT, agent cache, pools), then let the server settle and take its baseline memory.
    await Promise.all(threads.slice(RUNS, RUNS + 20).map(once));
    await new Promise((r) => setTimeout(r, 3_000));
    const rssBefore = await rssMb(child.pid!);
    process.stderr.write(`RSS before: ${rssBefore.toFixed(0)} MB; starting ${RUNS} streamed runs at once…\n`);
    let peak = rssBefore;
    const sampler = setInterval(() => void rssMb(child.pid!).then((m) => (peak = Math.max(peak, m))).catch(() => {}), 250);
    const viewBefore = await serverView(baseUrl, apiKey);
    const cpuBefore = await cpuSeconds(child.pid!);
    const overflowsBefore = await listenOverflows();
    const clientLoop = monitorEventLoopDelay({ resolution: 10 });
    clientLoop.enable();
    const started = performance.now();
    (globalThis as { __burstStart?: (t: number) => void }).__burstStart?.(started);
    const results = await Promise.all(threads.slice(0, RUNS).map(once));
    clientLoop.disable();
    const wallS = (performance.now() - started) / 1000;
    clearInterval(sampler);
    const viewAfter = await serverView(baseUrl, apiKey);
    const cpuBurst = (await cpuSeconds(child.pid!)) - cpuBefore;
    const overflows = (await listenOverflows()) - overflowsBefore;
    process.stderr.write(`load done in ${wallS.toFixed(1)} s; settling ${SETTLE_S} s…\n`);
    await new Promise((r) => setTimeout(r, SETTLE_S * 1000));
    const rssAfter = await rssMb(child.pid!);
    const viewSettled = await serverView(baseUrl, apiKey);

    // The ramp (labelled apart): the same number of runs arriving at a steady rate.
    let ramp: Record<string, number> | undefined;
    if (RAMP_PER_S > 0) {
      process.stderr.write(`ramp: ${RUNS} runs at ${RAMP_PER_S}/s…\n`);
      let open = 0;
      let peakOpen = 0;
      const rampBefore = await serverView(baseUrl, apiKey);
      const rampStart = performance.now();
      const pending: Promise<RunResult>[] = [];
      for (const [i, threadId] of threads.slice(RUNS + 20).entries()) {
        const due = rampStart + (i * 1000) / RAMP_PER_S;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        open++;
        peakOpen = Math.max(peakOpen, open);
        pending.push(once(threadId).finally(() => open--));
      }
      const rampResults = await Promise.all(pending);
      const rampWall = (performance.now() - rampStart) / 1000;
      const rampAfter = await serverView(baseUrl, apiKey);
      const rampErrors = rampResults.filter((r) => !r.ok);
      if (rampErrors.length > 0) process.stderr.write(`ramp: first errors: ${rampErrors.slice(0, 3).map((e) => e.error).join(' | ')}\n`);
      const rmeta = rampResults.map((r) => r.metadataMs).filter(Number.isFinite).sort((a, b) => a - b);
      ramp = {
        per_s: RAMP_PER_S,
        errors: rampErrors.length,
        peak_open_streams: peakOpen,
        metadata_p50_ms: +pct(rmeta, 50).toFixed(1),
        metadata_p99_ms: +pct(rmeta, 99).toFixed(1),
        server_accept_p99_le_s: bucketQuantile(rampBefore, rampAfter, 0.99),
        wall_s: +rampWall.toFixed(1),
      };
    }

    // The floor of the burst on this machine: the same client and number of streams against a bare
    // HTTP server that answers each with its `metadata` at once (bench/support/bare-sse.ts). Last, so
    // that it does not change how this client sends Hangar's burst (run first, it made the client
    // deliver the burst differently and the server's view of it changed). LOAD_FLOOR=0 leaves it out.
    const floor = process.env.LOAD_FLOOR === '0' ? { p50: Number.NaN, p99: Number.NaN, errors: 0 } : await bareBurst();
    const errors = results.filter((r) => !r.ok);
    const meta = results.map((r) => r.metadataMs).filter(Number.isFinite).sort((a, b) => a - b);
    const total = results.map((r) => r.totalMs).sort((a, b) => a - b);
    const heads = results.map((r) => r.headersMs).filter(Number.isFinite).sort((a, b) => a - b);
    const maxQueue = Math.max(...results.map((r) => r.queuePosition));
    const figures = {
      bench: 'load',
      executor: process.env.HANGAR_EXECUTOR ?? 'inline',
      runs: RUNS,
      workers: WORKERS,
      delay_ms: DELAY_MS,
      words: WORDS,
      errors: errors.length,
      completed: results.length - errors.length,
      metadata_p50_ms: +pct(meta, 50).toFixed(1),
      metadata_p99_ms: +pct(meta, 99).toFixed(1),
      // The same burst from the same client against a bare HTTP server, measured in this run.
      floor_metadata_p50_ms: +floor.p50.toFixed(1),
      floor_metadata_p99_ms: +floor.p99.toFixed(1),
      floor_errors: floor.errors,
      metadata_p99_over_floor: +(pct(meta, 99) / floor.p99).toFixed(2),
      headers_p50_ms: +pct(heads, 50).toFixed(1),
      headers_p99_ms: +pct(heads, 99).toFixed(1),
      run_p50_ms: +pct(total, 50).toFixed(0),
      run_p99_ms: +pct(total, 99).toFixed(0),
      wall_s: +wallS.toFixed(1),
      runs_per_s: +(RUNS / wallS).toFixed(1),
      max_queue_position: maxQueue,
      rss_before_mb: +rssBefore.toFixed(0),
      rss_peak_mb: +peak.toFixed(0),
      rss_after_mb: +rssAfter.toFixed(0),
      rss_ratio: +(rssAfter / rssBefore).toFixed(2),
      // The server's side of the burst: its time to a stream's first byte (Prometheus bucket bound
      // holding the quantile), its event-loop delay, and the CPU it used.
      server_accept_p50_le_s: bucketQuantile(viewBefore, viewAfter, 0.5),
      server_accept_p99_le_s: bucketQuantile(viewBefore, viewAfter, 0.99),
      server_loop_delay_max_ms: viewAfter.loopDelayMaxMs,
      server_loop_delay_p99_ms: viewAfter.loopDelayP99Ms,
      server_cpu_s: +cpuBurst.toFixed(1),
      // Handshakes the kernel dropped for a full accept queue during the burst (machine-wide count):
      // each costs its client a retry 1, 2, 4… s later.
      listen_overflows: overflows,
      // Where the resident memory is, before the burst and after the settle period (MB).
      heap_total_mb: [viewBefore.heapTotalMb, viewSettled.heapTotalMb],
      heap_used_mb: [viewBefore.heapUsedMb, viewSettled.heapUsedMb],
      external_mb: [viewBefore.externalMb, viewSettled.externalMb],
      // This client's own event-loop delay: a busy client delays what it measures.
      client_loop_delay_p99_ms: +(clientLoop.percentile(99) / 1e6).toFixed(1),
      client_loop_delay_max_ms: +(clientLoop.max / 1e6).toFixed(1),
      targets_met: errors.length === 0 && pct(meta, 99) <= 100 && rssAfter / rssBefore <= 1.5,
      // Not the target's measure (that is the burst above): runs arriving at a rate, for comparison.
      ...(ramp ? { ramp } : {}),
    };
    const lines = [
      `${RUNS} streamed runs at once on one server (scripted model, ${WORDS} tokens at ${DELAY_MS} ms, ${WORKERS} workers); the machine is shared, figures are noisy.`,
      '',
      '| figure | value | target |',
      '|---|---|---|',
      `| errors | ${figures.errors} (completed ${figures.completed}/${RUNS}) | 0 |`,
      `| metadata p50 / p99 | ${figures.metadata_p50_ms} / ${figures.metadata_p99_ms} ms | p99 ≤ 100 ms |`,
      `| floor: the same burst against a bare HTTP server, metadata p50 / p99 | ${figures.floor_metadata_p50_ms} / ${figures.floor_metadata_p99_ms} ms (Hangar's p99 ×${figures.metadata_p99_over_floor}) | |`,
      `| response headers p50 / p99 | ${figures.headers_p50_ms} / ${figures.headers_p99_ms} ms | |`,
      `| run p50 / p99 | ${figures.run_p50_ms} / ${figures.run_p99_ms} ms | |`,
      `| throughput | ${figures.runs_per_s} runs/s over ${figures.wall_s} s | |`,
      `| deepest queue position | ${maxQueue} | |`,
      `| RSS before / peak / after ${SETTLE_S} s | ${figures.rss_before_mb} / ${figures.rss_peak_mb} / ${figures.rss_after_mb} MB (×${figures.rss_ratio}) | after ≤ 1.5× before |`,
      `| server: time to first byte p50 / p99 (bucket bound) | ≤ ${figures.server_accept_p50_le_s} / ≤ ${figures.server_accept_p99_le_s} s | |`,
      `| server: event-loop delay p99 / max, CPU | ${figures.server_loop_delay_p99_ms} / ${figures.server_loop_delay_max_ms} ms, ${figures.server_cpu_s} s | |`,
      `| listen queue overflows during the burst (machine-wide) | ${overflows} | |`,
      `| server heap total / used / external, before → after | ${figures.heap_total_mb.join(' → ')} / ${figures.heap_used_mb.join(' → ')} / ${figures.external_mb.join(' → ')} MB | |`,
      `| client: event-loop delay p99 / max | ${figures.client_loop_delay_p99_ms} / ${figures.client_loop_delay_max_ms} ms | |`,
    ];
    if (ramp) {
      lines.push(
        '',
        `Ramp (NOT the target's measure): ${RUNS} runs arriving at ${ramp.per_s}/s, peak ${ramp.peak_open_streams} open streams: ` +
          `metadata p50 / p99 ${ramp.metadata_p50_ms} / ${ramp.metadata_p99_ms} ms, errors ${ramp.errors}, server time to first byte p99 ≤ ${ramp.server_accept_p99_le_s} s.`,
      );
    }
    if (errors.length > 0) lines.push('', `first errors: ${errors.slice(0, 3).map((e) => e.error).join(' | ')}`);
    process.stdout.write(`${lines.join('\n')}\n${JSON.stringify(figures)}\n`);
  } finally {
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    await exited;
    await removeDataDir(dataDir);
  }
}

await main();
