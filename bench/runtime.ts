// Benchmark of streamed runs: a two-step `scripted` run (one tool call, one answer) measured side by side
// (a) in-process (the floor, in-memory checkpoints), (a') in-process with the checkpointer and store
// Hangar uses (PostgreSQL), (b) Hangar over HTTP+SSE, (b') the same with
// HANGAR_EXECUTOR=thread (runs on a worker thread of the server process), (c) the official LangGraph JS server
// (@langchain/langgraph-api 1.5.1, bench/peer/) serving the same deep agent. `npm run bench:runtime`.
// Options (environment): BENCH_RUNS_C1 (default 40), BENCH_RUNS_C32 (default 160),
// HANGAR_CHECKPOINT_DURABILITY for Hangar (default exit, as the server's default).
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createHangarClient } from '../src/client/index.js';
import { ensureDatabase, startEmbeddedDatabase } from '../src/db/embedded.js';
import { openDatabase } from '../src/db/index.js';
import { openLangGraphStorage } from '../src/runtime/storage.js';
import { collect, parseSse, streamRun } from '../src/client/stream.js';
import { benchAgent, INSTRUCTIONS, PROMPT } from './peer/agent.js';
import { startChild, stopChild } from './support/child.js';
import { removeDataDir } from './support/data-dir.js';

// Children run as `node --import tsx …`, not through the tsx CLI: the CLI exits on SIGTERM before its
// child has (so a server's embedded PostgreSQL could be left running after the benchmark).
const TSX_ARGS = ['--import', 'tsx'];
const RUNS = { 1: Number(process.env.BENCH_RUNS_C1 ?? 40), 32: Number(process.env.BENCH_RUNS_C32 ?? 160) } as const;
const WARMUP = 5;

interface Figures {
  p50: number;
  p95: number;
  rps: number;
}

/** Run `once` `total` times with `concurrency` in flight; per-run latency and overall throughput. */
async function measure(concurrency: number, total: number, once: (i: number) => Promise<void>): Promise<Figures> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const i = next++;
        const t = performance.now();
        await once(i);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const pick = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
  return { p50: pick(0.5), p95: pick(0.95), rps: total / elapsed };
}

const DURABILITY = process.env.HANGAR_CHECKPOINT_DURABILITY ?? 'exit';

async function inProcess(): Promise<(i: number) => Promise<void>> {
  return streamLocally(await benchAgent());
}

/** The same agent with PostgresSaver and PostgresStore on an embedded PostgreSQL, as Hangar runs it. */
async function inProcessPostgres(): Promise<{ once: (i: number) => Promise<void>; stop: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'hangar-bench-pg-'));
  const embedded = await startEmbeddedDatabase({ dir });
  const url = await ensureDatabase(embedded, 'bench');
  const database = openDatabase(url);
  const storage = await openLangGraphStorage(url, database.pool);
  return {
    once: streamLocally(await benchAgent(storage)),
    stop: async () => {
      await storage.close();
      await database.close();
      await embedded.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function streamLocally(agent: Awaited<ReturnType<typeof benchAgent>>): (i: number) => Promise<void> {
  return async () => {
    const stream = await agent.graph.stream({ messages: [{ role: 'user', content: PROMPT }] } as never, {
      configurable: { thread_id: randomUUID() },
      streamMode: ['values'],
      durability: DURABILITY,
    } as never);
    for await (const _ of stream as AsyncIterable<unknown>) {
      // consume every step, as a client of the stream would
    }
  };
}

async function hangar(totalRuns: number, executor: 'inline' | 'thread'): Promise<{ once: (i: number) => Promise<void>; stop: () => Promise<void> }> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'hangar-bench-'));
  const apiKey = `bench_${randomBytes(16).toString('hex')}`;
  const { child, match } = await startChild(
    process.execPath,
    [...TSX_ARGS, 'src/cli/main.ts', 'serve', '--port', '0'],
    {
      HANGAR_DATA_DIR: dataDir,
      HANGAR_BOOTSTRAP_API_KEY: apiKey,
      LOG_LEVEL: 'warn',
      HANGAR_WORKER_CONCURRENCY: '32',
      HANGAR_CHECKPOINT_DURABILITY: DURABILITY,
      HANGAR_EXECUTOR: executor,
    },
    /listening on (http:\/\/\S+) /,
  );
  const baseUrl = match[1]!;
  const client = createHangarClient({ baseUrl, apiKey });
  const agent = await client.POST('/v1/deepagents/agents', { body: { name: 'bench', instructions: INSTRUCTIONS, runtime: { model: { model_id: 'scripted:bench' } } } });
  const agentId = agent.data!.id;
  const threads: string[] = [];
  for (let i = 0; i < totalRuns; i++) threads.push((await client.POST('/v1/deepagents/threads', { body: { agent_id: agentId } })).data!.id);
  return {
    once: async (i) => {
      const stream = await streamRun({ baseUrl, apiKey, threadId: threads[i]!, body: { agent_id: agentId, messages: [{ role: 'user', content: PROMPT }] } });
      if (stream.status !== 200) throw new Error(`hangar refused a run: ${stream.status}`);
      const events = await collect(stream);
      if (events.some((e) => e.event === 'error')) throw new Error(`hangar run failed: ${JSON.stringify(events.at(-1))}`);
    },
    stop: async () => {
      await stopChild(child);
      await removeDataDir(dataDir);
    },
  };
}

async function peer(totalRuns: number): Promise<{ once: (i: number) => Promise<void>; stop: () => Promise<void> }> {
  const { child, match } = await startChild(process.execPath, [...TSX_ARGS, 'bench/peer/server.ts'], { PEER_WORKERS: '32', LOG_LEVEL: 'error' }, /PEER_URL (http:\/\/\S+)/);
  const baseUrl = match[1]!;
  const threads: string[] = [];
  for (let i = 0; i < totalRuns; i++) {
    const res = await fetch(`${baseUrl}/threads`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    threads.push(((await res.json()) as { thread_id: string }).thread_id);
  }
  return {
    once: async (i) => {
      const res = await fetch(`${baseUrl}/threads/${threads[i]}/runs/stream`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({ assistant_id: 'agent', input: { messages: [{ role: 'user', content: PROMPT }] }, stream_mode: ['values'] }),
      });
      if (!res.ok || !res.body) throw new Error(`peer refused a run: ${res.status}`);
      for await (const e of parseSse(res.body)) if (e.event === 'error') throw new Error(`peer run failed: ${JSON.stringify(e.data)}`);
    },
    stop: () => stopChild(child),
  };
}

function ratio(x: number, y: number): string {
  return `${(x / y).toFixed(2)}×`;
}

async function main(): Promise<void> {
  const total = WARMUP * 2 + RUNS[1] + RUNS[32];
  process.stderr.write('starting Hangar and the LangGraph server…\n');
  const [a, ap, b, bt, c] = [await inProcess(), await inProcessPostgres(), await hangar(total, 'inline'), await hangar(total, 'thread'), await peer(total)];
  const results: Record<string, Record<number, Figures>> = { a: {}, ap: {}, b: {}, bt: {}, c: {} };
  try {
    const offsets = { a: 0, ap: 0, b: 0, bt: 0, c: 0 };
    const setups = { a: { once: a }, ap, b, bt, c } as const;
    for (const concurrency of [1, 32] as const) {
      for (const key of ['a', 'ap', 'b', 'bt', 'c'] as const) {
        const once = setups[key].once;
        const base = offsets[key];
        // Warm up at this concurrency first (JIT, agent cache, connection pools).
        await measure(Math.min(concurrency, WARMUP), WARMUP, (i) => once(base + i));
        offsets[key] += WARMUP;
        const start = offsets[key];
        process.stderr.write(`  ${key} at concurrency ${concurrency}…\n`);
        results[key]![concurrency] = await measure(concurrency, RUNS[concurrency], (i) => once(start + i));
        offsets[key] += RUNS[concurrency];
      }
    }
  } finally {
    await ap.stop();
    await b.stop();
    await bt.stop();
    await c.stop();
  }
  const row = (label: string, f: Figures) => `| ${label} | ${f.p50.toFixed(1)} | ${f.p95.toFixed(1)} | ${f.rps.toFixed(1)} |`;
  const lines = [`Two-step scripted run (one tool call, one answer); runs: ${RUNS[1]} at c=1, ${RUNS[32]} at c=32; checkpoint durability ${DURABILITY} (a', b).`, ''];
  for (const concurrency of [1, 32] as const) {
    const [fa, fap, fb, fbt, fc] = [results.a![concurrency]!, results.ap![concurrency]!, results.b![concurrency]!, results.bt![concurrency]!, results.c![concurrency]!];
    lines.push(`### concurrency ${concurrency}`, '', '| setup | p50 ms | p95 ms | runs/s |', '|---|---|---|---|');
    lines.push(
      row('(a) in-process deep agent, in-memory checkpoints', fa),
      row("(a') in-process, PostgresSaver + PostgresStore", fap),
      row('(b) Hangar HTTP+SSE', fb),
      row("(b') Hangar HTTP+SSE, HANGAR_EXECUTOR=thread", fbt),
      row('(c) LangGraph API 1.5.1', fc),
      '',
    );
    lines.push(
      `b/a: p50 ${ratio(fb.p50, fa.p50)}, p95 ${ratio(fb.p95, fa.p95)}, throughput ${ratio(fb.rps, fa.rps)}`,
      `b/a': p50 ${ratio(fb.p50, fap.p50)}, p95 ${ratio(fb.p95, fap.p95)}, throughput ${ratio(fb.rps, fap.rps)}`,
      `b/c: p50 ${ratio(fb.p50, fc.p50)}, p95 ${ratio(fb.p95, fc.p95)}, throughput ${ratio(fb.rps, fc.rps)}`,
      `b'/a': p50 ${ratio(fbt.p50, fap.p50)}, p95 ${ratio(fbt.p95, fap.p95)}, throughput ${ratio(fbt.rps, fap.rps)}`,
      `b'/c: p50 ${ratio(fbt.p50, fc.p50)}, p95 ${ratio(fbt.p95, fc.p95)}, throughput ${ratio(fbt.rps, fc.rps)}`,
      '',
    );
  }
  const [a1, ap1, b1, bt1, c1] = [results.a![1]!, results.ap![1]!, results.b![1]!, results.bt![1]!, results.c![1]!];
  const [a32, ap32, b32, bt32, c32] = [results.a![32]!, results.ap![32]!, results.b![32]!, results.bt![32]!, results.c![32]!];
  const r = (x: number) => +x.toFixed(2);
  // One line of JSON for comparisons over time; targets of issue 13: c=1 p50 ≤ 1.5× (a'), c=32
  // throughput ≥ 0.7× (a') and ≥ 3× (c).
  const json = {
    bench: 'runtime',
    c1_p50_ms: { a: r(a1.p50), ap: r(ap1.p50), b: r(b1.p50), bt: r(bt1.p50), c: r(c1.p50) },
    c32_rps: { a: r(a32.rps), ap: r(ap32.rps), b: r(b32.rps), bt: r(bt32.rps), c: r(c32.rps) },
    c1_p50_b_over_ap: r(b1.p50 / ap1.p50),
    c32_rps_b_over_ap: r(b32.rps / ap32.rps),
    c32_rps_b_over_c: r(b32.rps / c32.rps),
    // bt: the same server with HANGAR_EXECUTOR=thread.
    c1_p50_bt_over_ap: r(bt1.p50 / ap1.p50),
    c32_rps_bt_over_ap: r(bt32.rps / ap32.rps),
    c32_rps_bt_over_c: r(bt32.rps / c32.rps),
    targets_met: b1.p50 / ap1.p50 <= 1.5 && b32.rps / ap32.rps >= 0.7 && b32.rps / c32.rps >= 3,
    targets_met_thread: bt1.p50 / ap1.p50 <= 1.5 && bt32.rps / ap32.rps >= 0.7 && bt32.rps / c32.rps >= 3,
  };
  process.stdout.write(`${lines.join('\n')}\n${JSON.stringify(json)}\n`);
}

await main();
