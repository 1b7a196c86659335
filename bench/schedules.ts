// Schedules benchmark. (1) Delay from a tick to its run: BENCH_SCHEDULES schedules firing every second
// for BENCH_SECONDS, delay from the tick to the run being accepted (`created_at`) and to a worker
// starting it (`started_at`), p50/p99. (2) A burst: BENCH_BURST schedules all due in the same second —
// every one fires exactly once, and how long until the last run was accepted and started.
// Run: npm run bench:schedules   (BENCH_SCHEDULES=10 BENCH_SECONDS=10 BENCH_BURST=1000)
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createHangarClient } from '../src/client/index.js';
import { loadConfig } from '../src/config/index.js';
import { ensureDatabase, startEmbeddedDatabase } from '../src/db/embedded.js';
import { startHangar } from '../src/server.js';

const SCHEDULES = Number(process.env.BENCH_SCHEDULES ?? 10);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const BURST = Number(process.env.BENCH_BURST ?? 1000);
const KEY = 'bench_admin_key_0123456789abcdef';

const pct = (xs: number[], p: number) => (xs.length === 0 ? NaN : [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!);
const fmt = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');

/** Run `fn` over `items` with at most `n` at once. */
async function pool<T>(items: T[], n: number, fn: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  await Promise.all(Array.from({ length: n }, async () => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) await fn(item);
  }));
}

const dataDir = await mkdtemp(path.join(os.tmpdir(), 'hangar-bench-schedules-'));
const embedded = await startEmbeddedDatabase({ dir: dataDir, log: () => {} });
try {
  const databaseUrl = await ensureDatabase(embedded, 'bench_schedules');
  const hangar = await startHangar(loadConfig({ flags: { port: 0, databaseUrl, dataDir, logLevel: 'warn' }, env: { HANGAR_BOOTSTRAP_API_KEY: KEY } }), { announce: () => {} });
  const client = createHangarClient({ baseUrl: hangar.url, apiKey: KEY });
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const agent = await client.POST('/v1/deepagents/agents', { body: { name: 'bench', instructions: 'Benchmark.', runtime: { model: { model_id: 'scripted:bench' } } } });
    const agentId = agent.data!.id;
    const messages = [{ role: 'user' as const, content: 'tick' }];

    // (1) Steady ticks.
    const steady: string[] = [];
    for (let i = 0; i < SCHEDULES; i++) {
      const s = await client.POST('/v1/deepagents/schedules', { body: { agent_id: agentId, schedule: '* * * * * *', input: { messages } } });
      steady.push(s.data!.id);
    }
    await new Promise((r) => setTimeout(r, SECONDS * 1000));
    await db.query('UPDATE schedules SET enabled = false, next_run_at = NULL WHERE id = ANY($1)', [steady]);
    await new Promise((r) => setTimeout(r, 3000)); // let the last runs start
    const { rows: delays } = await db.query<{ accepted: number; started: number | null }>(
      `SELECT extract(epoch FROM r.created_at - t.tick_at) * 1000 AS accepted, extract(epoch FROM r.started_at - t.tick_at) * 1000 AS started
       FROM schedule_ticks t JOIN runs r ON r.id = t.run_id WHERE t.schedule_id = ANY($1)`,
      [steady],
    );
    const accepted = delays.map((d) => Number(d.accepted));
    const started = delays.flatMap((d) => (d.started === null ? [] : [Number(d.started)]));
    console.log(`steady: ${SCHEDULES} schedules every second for ${SECONDS}s → ${delays.length} runs`);
    console.log(`  tick → run accepted  p50 ${fmt(pct(accepted, 0.5))} ms  p99 ${fmt(pct(accepted, 0.99))} ms`);
    console.log(`  tick → run started   p50 ${fmt(pct(started, 0.5))} ms  p99 ${fmt(pct(started, 0.99))} ms`);

    // (2) A burst: BURST schedules due in the same second (a fixed second of the clock, in UTC).
    const target = new Date(Math.ceil((Date.now() + 20_000 + BURST * 15) / 1000) * 1000);
    const expression = `${target.getUTCSeconds()} ${target.getUTCMinutes()} ${target.getUTCHours()} * * *`;
    const burst: string[] = [];
    await pool(Array.from({ length: BURST }, (_, i) => i), 16, async () => {
      const s = await client.POST('/v1/deepagents/schedules', { body: { agent_id: agentId, schedule: expression, input: { messages } } });
      if (!s.data) throw new Error(`create failed: ${JSON.stringify(s.error)}`);
      burst.push(s.data.id);
    });
    const createdBy = Date.now();
    if (createdBy > target.getTime()) throw new Error('creating the burst took longer than planned; raise the lead time');
    const deadline = target.getTime() + 600_000;
    let last = { ticks: 0, runs: 0, started: 0 };
    while (Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 500));
      const { rows } = await db.query<{ ticks: string; runs: string; started: string }>(
        `SELECT count(*) AS ticks, count(r.id) AS runs, count(r.started_at) AS started FROM schedule_ticks t LEFT JOIN runs r ON r.id = t.run_id WHERE t.schedule_id = ANY($1)`,
        [burst],
      );
      last = { ticks: Number(rows[0]!.ticks), runs: Number(rows[0]!.runs), started: Number(rows[0]!.started) };
      if (last.started >= BURST) break;
    }
    await db.query('UPDATE schedules SET enabled = false, next_run_at = NULL WHERE id = ANY($1)', [burst]);
    const { rows: span } = await db.query<{ first: number; accepted: number; started: number; dup: string }>(
      `SELECT extract(epoch FROM min(r.created_at) - min(t.tick_at)) * 1000 AS first,
              extract(epoch FROM max(r.created_at) - min(t.tick_at)) * 1000 AS accepted,
              extract(epoch FROM max(r.started_at) - min(t.tick_at)) * 1000 AS started,
              count(*) - count(DISTINCT t.schedule_id) AS dup
       FROM schedule_ticks t JOIN runs r ON r.id = t.run_id WHERE t.schedule_id = ANY($1)`,
      [burst],
    );
    const s = span[0]!;
    console.log(`burst: ${BURST} schedules due at ${target.toISOString()} → ${last.ticks} ticks, ${last.runs} runs, ${Number(s.dup)} duplicates`);
    console.log(`  first run accepted after ${fmt(Number(s.first))} ms, last accepted after ${fmt(Number(s.accepted))} ms, last started after ${fmt(Number(s.started))} ms`);
    const result = {
      bench: 'schedules',
      steady: { schedules: SCHEDULES, seconds: SECONDS, runs: delays.length, accepted_p50_ms: pct(accepted, 0.5), accepted_p99_ms: pct(accepted, 0.99), started_p50_ms: pct(started, 0.5), started_p99_ms: pct(started, 0.99) },
      burst: { schedules: BURST, ticks: last.ticks, runs: last.runs, duplicates: Number(s.dup), first_accepted_ms: Number(s.first), last_accepted_ms: Number(s.accepted), last_started_ms: Number(s.started) },
      ratios: { burst_last_accepted_over_steady_p99: Number(s.accepted) / pct(accepted, 0.99), started_over_accepted_p50: pct(started, 0.5) / pct(accepted, 0.5) },
    };
    console.log(JSON.stringify(result));
  } finally {
    await db.end();
    await hangar.close();
  }
} finally {
  await embedded.stop();
  await rm(dataDir, { recursive: true, force: true });
}
