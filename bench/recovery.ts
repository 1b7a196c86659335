// Benchmark of crash recovery and the run event log. `npm run bench:recovery`.
// (1) `hangar serve` child with N slow runs in flight is killed with SIGKILL and started again: time
//     from the restart to every orphaned run settled, beside the lease that bounds it.
// (2) Replay throughput: GET …/runs/{id}/stream of a 10,000-event log over HTTP+SSE (events/s).
// (3) Event-log overhead on a token-heavy run, in-process: tokens/s streaming a long answer through
//     the executor with the real event log (written to PostgreSQL, delivered after the write) vs with
//     the events dropped.
// Options (environment): BENCH_RUNS (default 20), BENCH_LEASE_MS (default 2000), BENCH_TOKENS (default 3000).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { createHangarClient } from '../src/client/index.js';
import { collect, joinRun, streamRun } from '../src/client/stream.js';
import { ensureDatabase, startEmbeddedDatabase } from '../src/db/embedded.js';
import { openDatabase } from '../src/db/index.js';
import { RunEventHub, type RunEventWriter } from '../src/runtime/events/hub.js';
import { executeRun } from '../src/runtime/execute.js';
import type { ClaimedRun } from '../src/runtime/queue.js';
import { benchAgent } from './peer/agent.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const N = Number(process.env.BENCH_RUNS ?? 20);
const LEASE_MS = Number(process.env.BENCH_LEASE_MS ?? 2000);
const TOKENS = Number(process.env.BENCH_TOKENS ?? 3000);
const REPLAY_EVENTS = 10_000;

function serve(url: string, dataDir: string, key: string): Promise<{ child: ChildProcess; base: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve', '--port', '0', '--database-url', url, '--data-dir', dataDir, '--log-level', 'error'], {
    cwd: ROOT,
    env: { ...process.env, HANGAR_BOOTSTRAP_API_KEY: key, HANGAR_RUN_LEASE_MS: String(LEASE_MS), HANGAR_WORKER_CONCURRENCY: String(N) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) resolve({ child, base: m[1]! });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`hangar exited with ${code}:\n${out.slice(-2000)}`)));
  });
}

async function stop(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  await exited;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'hangar-bench-recovery-'));
  // Its own directory: as root the cluster runs as another user, who must reach it.
  const pgDir = await mkdtemp(path.join(os.tmpdir(), 'hangar-bench-recovery-pg-'));
  const embedded = await startEmbeddedDatabase({ dir: pgDir });
  const url = await ensureDatabase(embedded, 'bench');
  const key = `bench_${randomBytes(16).toString('hex')}`;
  const database = openDatabase(url);
  let child: ChildProcess | undefined;
  try {
    // (1) SIGKILL + restart.
    let server = await serve(url, dir, key);
    child = server.child;
    let client = createHangarClient({ baseUrl: server.base, apiKey: key });
    await client.POST('/v1/deepagents/model-configs', { body: { name: 'slow', model_id: 'scripted:slow', parameters: { delay_ms: 50 } } });
    const agent = await client.POST('/v1/deepagents/agents', { body: { name: 'bench', runtime: { model: { model_id: 'slow' } }, instructions: 'Bench.' } });
    const agentId = agent.data!.id;
    const words = Array.from({ length: 60 }, (_, i) => `w${i}`).join(' ');
    const streams = await Promise.all(
      Array.from({ length: N }, async () => {
        const thread = await client.POST('/v1/deepagents/threads', { body: { agent_id: agentId } });
        const s = await streamRun({ baseUrl: server.base, apiKey: key, threadId: thread.data!.id, body: { agent_id: agentId, messages: [{ role: 'user', content: words }], stream_mode: ['messages-tuple'] } });
        let n = 0;
        for await (const _ of s.events) if (++n >= 3) break;
        return { threadId: thread.data!.id, runId: s.runId! };
      }),
    );
    await stop(child, 'SIGKILL');
    const killedAt = performance.now();
    server = await serve(url, dir, key);
    child = server.child;
    const readyAt = performance.now();
    // Reclaimed: every orphaned run handed back and taken again (or failed); settled: all finished.
    let reclaimedAt = 0;
    for (;;) {
      if (!reclaimedAt) {
        const { rows } = await database.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM runs WHERE status IN ('pending', 'running') AND attempt < 2");
        if (rows[0]!.n === 0) reclaimedAt = performance.now();
      }
      const { rows } = await database.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM runs WHERE status IN ('pending', 'running')");
      if (rows[0]!.n === 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const settledAt = performance.now();
    const { rows: outcome } = await database.pool.query<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM runs GROUP BY status');

    // (2) Replay of a 10,000-event log.
    client = createHangarClient({ baseUrl: server.base, apiKey: key });
    const target = streams[0]!;
    const sample = { type: 'AIMessageChunk', content: 'token ', id: 'run-x', tool_call_chunks: [], usage_metadata: null };
    await database.pool.query('DELETE FROM run_events WHERE run_id = $1', [target.runId]);
    await database.pool.query(
      `INSERT INTO run_events (run_id, seq, event, data)
       SELECT $1, g, 'messages', $2 FROM generate_series(1, $3) g`,
      [target.runId, JSON.stringify([sample, { langgraph_node: 'model_request', run_id: target.runId }]), REPLAY_EVENTS],
    );
    const replayRates: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t = performance.now();
      const events = await collect(await joinRun({ baseUrl: server.base, apiKey: key, threadId: target.threadId, runId: target.runId }));
      if (events.length !== REPLAY_EVENTS) throw new Error(`replayed ${events.length} events`);
      replayRates.push(REPLAY_EVENTS / ((performance.now() - t) / 1000));
    }
    await stop(child, 'SIGTERM');
    child = undefined;

    // (3) Tokens per second with and without the event log.
    const logger = pino({ level: 'silent' });
    const hub = new RunEventHub(database.pool, undefined, logger);
    await hub.start();
    const built = await benchAgent();
    const prompt = Array.from({ length: TOKENS }, (_, i) => `t${i}`).join(' ');
    const template = (await database.pool.query<{ workspace_id: string; thread_id: string; agent_id: string; revision: string; input: unknown; principal: string }>('SELECT workspace_id, thread_id, agent_id, revision, input, principal FROM runs LIMIT 1')).rows[0]!;
    const once = async (withLog: boolean, i: number): Promise<number> => {
      const { rows } = await database.pool.query<{ id: string }>(
        "INSERT INTO runs (workspace_id, thread_id, agent_id, revision, input, principal, status) VALUES ($1, $2, $3, $4, $5, $6, 'success') RETURNING id",
        [template.workspace_id, template.thread_id, template.agent_id, template.revision, JSON.stringify(template.input), template.principal],
      );
      const runId = rows[0]!.id;
      const writer: RunEventWriter = withLog ? hub.openWriter(runId, 0) : ({ append: () => ({}), flush: async () => {}, end: async () => {} } as unknown as RunEventWriter);
      const run: ClaimedRun = {
        id: runId,
        workspaceId: 'bench',
        threadId: `bench-tokens-${withLog}-${i}`,
        agentId: 'bench',
        revision: 'bench',
        principal: 'bench',
        attempt: 1,
        lastSeq: 0,
        input: { messages: [{ role: 'user', content: prompt }], stream_mode: ['messages-tuple', 'updates', 'values'], stream_subgraphs: false, user_timezone: null },
      };
      const t = performance.now();
      const outcome = await executeRun({ run, writer, agent: async () => built, callbacks: async () => [], signal: new AbortController().signal, recursionLimit: 100, durability: 'exit' });
      await writer.end();
      const seconds = (performance.now() - t) / 1000;
      if (outcome.status !== 'success') throw new Error(JSON.stringify(outcome.error));
      return (outcome.usage?.output_tokens ?? 0) / seconds;
    };
    await once(true, -1);
    await once(false, -1);
    const withLog: number[] = [];
    const without: number[] = [];
    for (let i = 0; i < 5; i++) {
      withLog.push(await once(true, i));
      without.push(await once(false, i));
    }
    await hub.stop();
    await built.close();

    const restartMs = readyAt - killedAt;
    const settleMs = settledAt - readyAt;
    const reclaimMs = (reclaimedAt || settledAt) - readyAt;
    console.log('\n## bench:recovery\n');
    console.log(
      `(1) SIGKILL with ${N} runs in flight (lease ${LEASE_MS} ms, runs of 60 tokens × 50 ms): restart to listening ${restartMs.toFixed(0)} ms; ` +
        `listening to every orphan reclaimed ${reclaimMs.toFixed(0)} ms (${(reclaimMs / LEASE_MS).toFixed(2)}× the lease); ` +
        `to all settled (re-executed) ${settleMs.toFixed(0)} ms; outcome ${outcome.map((o) => `${o.status}=${o.n}`).join(', ')}`,
    );
    console.log(`(2) replay of a ${REPLAY_EVENTS}-event log over HTTP+SSE: ${median(replayRates).toFixed(0)} events/s (median of 3: ${replayRates.map((r) => r.toFixed(0)).join(', ')})`);
    const a = median(withLog);
    const b = median(without);
    console.log(`(3) ${TOKENS}-token answer, in-process: with event log ${a.toFixed(0)} tokens/s | without ${b.toFixed(0)} tokens/s | with/without ${(a / b).toFixed(2)}×`);
  } finally {
    if (child) await stop(child, 'SIGKILL');
    await database.close();
    await embedded.stop();
    await rm(dir, { recursive: true, force: true });
    await rm(pgDir, { recursive: true, force: true });
  }
}

await main();
process.exit(0);
