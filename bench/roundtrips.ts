// Database round trips of one streamed run: starts Hangar in this process on an embedded PostgreSQL,
// counts every statement sent by any pg client (pools, the bus) during N sequential two-step runs
// over HTTP+SSE (the bench:runtime run), and prints them grouped by statement, per run, with the CPU
// per run of this process and of PostgreSQL, beside the floor's (the same graph in-process).
// `npm run bench:roundtrips` (ROUNDTRIP_RUNS, default 20; HANGAR_TRACING=false to leave tracing out; ROUNDTRIP_PROFILE=1 adds a
// CPU profile of the measured runs, by package and function).
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Session } from 'node:inspector/promises';
import pg from 'pg';
import { collect, streamRun } from '../src/client/stream.js';
import { loadConfig } from '../src/config/index.js';
import { ensureDatabase, startEmbeddedDatabase } from '../src/db/embedded.js';
import { startHangar } from '../src/server.js';
import { benchAgent, INSTRUCTIONS, PROMPT } from './peer/agent.js';
import { openLangGraphStorage } from '../src/runtime/storage.js';
import { openDatabase } from '../src/db/index.js';
import { randomUUID } from 'node:crypto';
import { summarize } from './profile.js';
import { removeDataDir } from './support/data-dir.js';

const RUNS = Number(process.env.ROUNDTRIP_RUNS ?? 20);
const KEY = 'bench_admin_key_0123456789abcdef';

const counts = new Map<string, number>();
let counting = false;
const original = pg.Client.prototype.query as (...args: unknown[]) => unknown;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  if (counting) {
    const first = args[0];
    const text = typeof first === 'string' ? first : ((first as { text?: string } | null)?.text ?? '?');
    const key = text.replace(/\s+/g, ' ').trim().slice(0, 110);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return original.apply(this, args);
} as never;

const dataDir = await mkdtemp(path.join(os.tmpdir(), 'hangar-bench-rt-'));
const embedded = await startEmbeddedDatabase({ dir: dataDir, log: () => {} });

/**
 * CPU ms used so far by the embedded PostgreSQL: its postmaster (with the children it reaped) and
 * every live child (the backends of the pools, the WAL writer…), from /proc.
 */
async function postgresCpuMs(): Promise<number> {
  const ticks = 100; // USER_HZ on Linux
  const stat = async (pid: string, reaped: boolean) => {
    const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ');
    return Number(fields[11]) + Number(fields[12]) + (reaped ? Number(fields[13]) + Number(fields[14]) : 0);
  };
  const postmaster = (await readFile(path.join(dataDir, 'pg', 'postmaster.pid'), 'utf8')).split('\n')[0]!.trim();
  const children = (await readFile(`/proc/${postmaster}/task/${postmaster}/children`, 'utf8')).trim().split(/\s+/).filter(Boolean);
  let total = await stat(postmaster, true);
  for (const pid of children) total += await stat(pid, false).catch(() => 0);
  return (total * 1000) / ticks;
}
try {
  const hangar = await startHangar(
    loadConfig({ flags: { port: 0, databaseUrl: await ensureDatabase(embedded, 'rt'), dataDir, logLevel: 'warn' }, env: { HANGAR_BOOTSTRAP_API_KEY: KEY, ...process.env } }),
    { announce: () => {} },
  );
  const headers = { 'x-api-key': KEY, 'content-type': 'application/json' };
  const agent = (await (await fetch(`${hangar.url}/v1/deepagents/agents`, { method: 'POST', headers, body: JSON.stringify({ name: 'rt', instructions: INSTRUCTIONS, runtime: { model: { model_id: 'scripted:bench' } } }) })).json()) as { id: string };
  const threads: string[] = [];
  for (let i = 0; i < RUNS + 3; i++) threads.push(((await (await fetch(`${hangar.url}/v1/deepagents/threads`, { method: 'POST', headers, body: JSON.stringify({ agent_id: agent.id }) })).json()) as { id: string }).id);
  const once = async (threadId: string) => {
    const stream = await streamRun({ baseUrl: hangar.url, apiKey: KEY, threadId, body: { agent_id: agent.id, messages: [{ role: 'user', content: PROMPT }] } });
    const events = await collect(stream);
    if (events.some((e) => e.event === 'error')) throw new Error(`run failed: ${JSON.stringify(events.at(-1))}`);
  };
  for (const t of threads.slice(RUNS)) await once(t);
  await new Promise((r) => setTimeout(r, 500));
  const session = process.env.ROUNDTRIP_PROFILE ? new Session() : undefined;
  if (session) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
  }
  counting = true;
  const pgCpu = await postgresCpuMs();
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (const t of threads.slice(0, RUNS)) await once(t);
  const wall = performance.now() - started;
  const used = process.cpuUsage(cpu);
  await new Promise((r) => setTimeout(r, 300)); // trailing writes (traces) of the last run
  const pgUsed = (await postgresCpuMs()) - pgCpu;
  counting = false;
  if (session) {
    const { profile } = await session.post('Profiler.stop');
    process.stdout.write(`${summarize(profile as never, 40)}\n\n`);
    const file = process.env.ROUNDTRIP_PROFILE ?? '';
    if (file.endsWith('.cpuprofile')) await writeFile(file, JSON.stringify(profile));
  }
  const rows = [...counts].sort((a, b) => b[1] - a[1]);
  const total = rows.reduce((s, [, n]) => s + n, 0);
  process.stdout.write(`${'| per run | statement |\n|---|---|'}\n`);
  for (const [text, n] of rows) process.stdout.write(`${`| ${(n / RUNS).toFixed(2)} | \`${text.replace(/\|/g, '\\|')}\` |`}\n`);
  await hangar.close();
  // The floor (a') of bench:runtime: the same graph in this process on the same storage, no HTTP.
  const floorDb = openDatabase(await ensureDatabase(embedded, 'rt_floor'));
  const storage = await openLangGraphStorage(await ensureDatabase(embedded, 'rt_floor'), floorDb.pool);
  const floor = await benchAgent(storage);
  const floorOnce = async () => {
    const stream = await floor.graph.stream({ messages: [{ role: 'user', content: PROMPT }] } as never, { configurable: { thread_id: randomUUID() }, streamMode: ['values'], durability: 'exit' } as never);
    for await (const _ of stream as AsyncIterable<unknown>) {
      // consume every step
    }
  };
  for (let i = 0; i < 3; i++) await floorOnce();
  const floorPg = await postgresCpuMs();
  const floorCpu = process.cpuUsage();
  for (let i = 0; i < RUNS; i++) await floorOnce();
  const floorUsed = process.cpuUsage(floorCpu);
  const floorPgUsed = (await postgresCpuMs()) - floorPg;
  await storage.close();
  await floorDb.close();
  const cpuB = (used.user + used.system) / 1000 / RUNS;
  const cpuFloor = (floorUsed.user + floorUsed.system) / 1000 / RUNS;
  process.stdout.write(
    `${JSON.stringify({ bench: 'roundtrips', runs: RUNS, statements_per_run: +(total / RUNS).toFixed(2), cpu_ms_per_run: +cpuB.toFixed(1), floor_cpu_ms_per_run: +cpuFloor.toFixed(1), cpu_over_floor: +(cpuB / cpuFloor).toFixed(2), postgres_cpu_ms_per_run: +(pgUsed / RUNS).toFixed(1), floor_postgres_cpu_ms_per_run: +(floorPgUsed / RUNS).toFixed(1), postgres_cpu_over_floor: +(pgUsed / Math.max(floorPgUsed, 1)).toFixed(2), wall_ms_per_run: +(wall / RUNS).toFixed(1) })}\n`,
  );
} finally {
  await embedded.stop();
  await removeDataDir(dataDir);
}
