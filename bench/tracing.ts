// Tracing benchmark. (1) Ingestion: runs per second accepted through the LangSmith-compatible
// multipart endpoint (the SDK's form), beside the JSON batch endpoint. (2) Tracing overhead: per-run
// latency of a two-step `scripted` agent run (a tool call, then the answer) with tracing on and off.
// Run: npm run bench:tracing   (BENCH_SECONDS=5 per ingestion row, BENCH_RUNS=40 runs per overhead row)
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { collect, streamRun } from '../src/client/stream.js';
import { loadConfig } from '../src/config/index.js';
import { ensureDatabase, startEmbeddedDatabase } from '../src/db/embedded.js';
import { startHangar, type Hangar } from '../src/server.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const RUNS = Number(process.env.BENCH_RUNS ?? 40);
const KEY = 'bench_admin_key_0123456789abcdef';
const RUNS_PER_REQUEST = 100;
const CONCURRENCY = 4;

// startHangar turns console output into log lines (dropped at level warn): print to stdout directly.
const print = (line: string) => process.stdout.write(`${line}\n`);
const fmt = (n: number, digits = 1) => n.toFixed(digits);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const p90 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.9)]!;

/** One complete run report in the SDK's shape (a root with a model child alternates). */
function runReport(i: number) {
  const id = randomUUID();
  const t = new Date();
  const stamp = t.toISOString().replace(/[-:.]/g, '').replace('Z', '000Z');
  return {
    run: { id, trace_id: id, dotted_order: `${stamp}${id}`, name: `bench-${i % 10}`, run_type: i % 2 ? 'llm' : 'chain', start_time: t.toISOString(), end_time: new Date(t.getTime() + 5).toISOString(), session_name: 'bench' },
    inputs: { messages: [{ type: 'human', content: `question ${i} `.repeat(20) }] },
    outputs: { generations: [[{ text: 'answer', message: { type: 'ai', content: 'answer '.repeat(20), usage_metadata: { input_tokens: 40, output_tokens: 20, total_tokens: 60 } } }]] },
  };
}

function multipartBody(n: number): { body: Blob; type: string } {
  const boundary = `----bench${randomUUID()}`;
  const parts: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = runReport(i);
    const add = (name: string, value: unknown) => {
      const json = JSON.stringify(value);
      parts.push(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\nContent-Type: application/json; length=${json.length}\r\n\r\n${json}\r\n`);
    };
    add(`post.${r.run.id}`, r.run);
    add(`post.${r.run.id}.inputs`, r.inputs);
    add(`post.${r.run.id}.outputs`, r.outputs);
  }
  parts.push(`--${boundary}--\r\n`);
  return { body: new Blob(parts), type: `multipart/form-data; boundary=${boundary}` };
}

function batchBody(n: number): { body: string; type: string } {
  return { body: JSON.stringify({ post: Array.from({ length: n }, (_, i) => { const r = runReport(i); return { ...r.run, inputs: r.inputs, outputs: r.outputs }; }) }), type: 'application/json' };
}

/** Closed-loop ingestion for SECONDS: runs accepted per second. */
async function ingest(url: string, make: () => { body: Blob | string; type: string }, seconds = SECONDS): Promise<{ runsPerSecond: number; errors: number }> {
  const until = performance.now() + seconds * 1000;
  let runs = 0;
  let errors = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < until) {
        const { body, type } = make();
        const res = await fetch(url, { method: 'POST', headers: { 'x-api-key': KEY, 'content-type': type }, body });
        await res.body?.cancel();
        if (res.status === 202) runs += RUNS_PER_REQUEST;
        else errors++;
      }
    }),
  );
  return { runsPerSecond: runs / ((performance.now() - started) / 1000), errors };
}

/** CPU time (ms) this process spent in the measured runs of each setting (server and client share it). */
const cpuMs: Record<string, number> = { off: 0, on: 0 };

/** Latencies (ms) of `RUNS` two-step runs, after a warm-up, each on a fresh thread. */
async function runLatencies(hangar: Hangar, label: 'on' | 'off'): Promise<number[]> {
  const headers = { 'x-api-key': KEY, 'content-type': 'application/json' };
  const agent = (await (await fetch(`${hangar.url}/v1/deepagents/agents`, { method: 'POST', headers, body: JSON.stringify({ name: `bench-${randomUUID().slice(0, 8)}`, instructions: 'Bench.', runtime: { model: { model_id: 'scripted:demo' } } }) })).json()) as { id: string };
  const once = async () => {
    const thread = (await (await fetch(`${hangar.url}/v1/deepagents/threads`, { method: 'POST', headers, body: JSON.stringify({ agent_id: agent.id }) })).json()) as { id: string };
    const started = performance.now();
    const stream = await streamRun({ baseUrl: hangar.url, apiKey: KEY, threadId: thread.id, body: { agent_id: agent.id, messages: [{ role: 'user', content: '/call write_file {"file_path": "/a.txt", "content": "hello"}' }] } });
    const events = await collect(stream);
    if (events.some((e) => e.event === 'error')) throw new Error(`run failed: ${JSON.stringify(events.at(-1))}`);
    return performance.now() - started;
  };
  for (let i = 0; i < 5; i++) await once();
  const out: number[] = [];
  const cpu = process.cpuUsage();
  for (let i = 0; i < RUNS; i++) out.push(await once());
  const used = process.cpuUsage(cpu);
  cpuMs[label]! += (used.user + used.system) / 1000;
  return out;
}

const dataDir = await mkdtemp(path.join(os.tmpdir(), 'hangar-bench-tracing-'));
const embedded = await startEmbeddedDatabase({ dir: dataDir, log: () => {} });
try {
  const start = async (name: string, env: Record<string, string>) =>
    startHangar(
      loadConfig({ flags: { port: 0, databaseUrl: await ensureDatabase(embedded, name), dataDir, logLevel: 'warn' }, env: { HANGAR_BOOTSTRAP_API_KEY: KEY, ...env } }),
      { announce: () => {} },
    );

  const on = await start('bench_on', {});
  print(`ingestion: ${RUNS_PER_REQUEST} runs per request (inputs + outputs parts), concurrency ${CONCURRENCY}, ${SECONDS}s per row`);
  // Warm both paths up first (JIT, connection pool) so that the order of the rows does not matter.
  await ingest(`${on.url}/langsmith/runs/multipart`, () => multipartBody(RUNS_PER_REQUEST), 1);
  await ingest(`${on.url}/langsmith/runs/batch`, () => batchBody(RUNS_PER_REQUEST), 1);
  const multipart = await ingest(`${on.url}/langsmith/runs/multipart`, () => multipartBody(RUNS_PER_REQUEST));
  const batch = await ingest(`${on.url}/langsmith/runs/batch`, () => batchBody(RUNS_PER_REQUEST));
  print('endpoint        | runs/second | errors');
  print(`runs/multipart  | ${fmt(multipart.runsPerSecond, 0).padStart(11)} | ${multipart.errors}`);
  print(`runs/batch      | ${fmt(batch.runsPerSecond, 0).padStart(11)} | ${batch.errors}`);
  print(`ratio multipart / batch: ${fmt(multipart.runsPerSecond / batch.runsPerSecond, 2)}`);

  const off = await start('bench_off', { HANGAR_TRACING: 'false' });
  print(`\ntracing overhead: two-step scripted run (tool call, then answer) over HTTP/SSE, ${RUNS} runs per row, sequential`);
  // Interleave the rows so that machine noise hits both alike.
  const offA = await runLatencies(off, 'off');
  const onA = await runLatencies(on, 'on');
  const offB = await runLatencies(off, 'off');
  const onB = await runLatencies(on, 'on');
  const offMs = [...offA, ...offB];
  const onMs = [...onA, ...onB];
  print('tracing | median ms | p90 ms');
  print(`off     | ${fmt(median(offMs)).padStart(9)} | ${fmt(p90(offMs)).padStart(6)}`);
  print(`on      | ${fmt(median(onMs)).padStart(9)} | ${fmt(p90(onMs)).padStart(6)}`);
  print(`ratio on / off (median): ${fmt(median(onMs) / median(offMs), 3)}`);
  // CPU per run is steadier than latency on a shared machine (it does not count waiting for a core).
  const cpuOff = cpuMs.off! / (2 * RUNS);
  const cpuOn = cpuMs.on! / (2 * RUNS);
  print(`CPU per run (server and client in this process): off ${fmt(cpuOff)} ms, on ${fmt(cpuOn)} ms, ratio ${fmt(cpuOn / cpuOff, 3)}`);
  // One line of JSON for comparisons over time (target, issue 13: tracing costs ≤ 10% of a run).
  print(
    JSON.stringify({
      bench: 'tracing',
      multipart_runs_per_s: Math.round(multipart.runsPerSecond),
      batch_runs_per_s: Math.round(batch.runsPerSecond),
      off_median_ms: +fmt(median(offMs)),
      on_median_ms: +fmt(median(onMs)),
      overhead_ratio: +fmt(median(onMs) / median(offMs), 3),
      off_cpu_ms_per_run: +fmt(cpuOff),
      on_cpu_ms_per_run: +fmt(cpuOn),
      cpu_overhead_ratio: +fmt(cpuOn / cpuOff, 3),
      target_met: median(onMs) / median(offMs) <= 1.1,
    }),
  );
  await off.close();
  await on.close();
} finally {
  await embedded.stop();
  await rm(dataDir, { recursive: true, force: true });
}
