// What stays allocated after a load of streamed runs: starts Hangar in this process (`npm run
// bench:memory`, which runs it with --expose-gc), runs MEMORY_RUNS (default 1,000) streamed runs at
// once (scripted model answering token by token), waits, collects garbage and prints
// process.memoryUsage() before and after, plus the engine's per-run structures still held.
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import { parseSse } from '../src/client/stream.js';
import { loadConfig } from '../src/config/index.js';
import { ensureDatabase, startEmbeddedDatabase } from '../src/db/embedded.js';
import { startHangar } from '../src/server.js';
import { removeDataDir } from './support/data-dir.js';

const RUNS = Number(process.env.MEMORY_RUNS ?? 1000);
const KEY = 'bench_admin_key_0123456789abcdef';
const out = (line: string) => process.stdout.write(`${line}\n`);
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
const mb = (n: number) => +(n / 1048576).toFixed(1);
const usage = () => {
  gc();
  const m = process.memoryUsage();
  const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((x) => [x.space_name, [mb(x.space_size), mb(x.space_used_size)]]));
  return { spaces, rss: mb(m.rss), heapTotal: mb(m.heapTotal), heapUsed: mb(m.heapUsed), external: mb(m.external), arrayBuffers: mb(m.arrayBuffers) };
};

const dataDir = await mkdtemp(path.join(os.tmpdir(), 'hangar-bench-mem-'));
const embedded = await startEmbeddedDatabase({ dir: dataDir, log: () => {} });
try {
  const hangar = await startHangar(
    loadConfig({ flags: { port: 0, databaseUrl: await ensureDatabase(embedded, 'mem'), dataDir, logLevel: 'warn' }, env: { HANGAR_BOOTSTRAP_API_KEY: KEY, ...process.env } }),
    { announce: () => {} },
  );
  const headers = { 'x-api-key': KEY, 'content-type': 'application/json' };
  const post = async (p: string, body: unknown) => (await (await fetch(`${hangar.url}${p}`, { method: 'POST', headers, body: JSON.stringify(body) })).json()) as { id: string };
  await post('/v1/deepagents/model-configs', { name: 'memmodel', model_id: 'scripted:mem', parameters: { delay_ms: 5 } });
  const agent = await post('/v1/deepagents/agents', { name: 'mem', instructions: 'Memory test.', runtime: { model: { model_id: 'memmodel' } } });
  const threads: string[] = [];
  for (let i = 0; i < RUNS + 20; i++) threads.push((await post('/v1/deepagents/threads', { agent_id: agent.id })).id);
  let errors = 0;
  let firstError = '';
  const once = async (threadId: string) => {
    try {
      await stream(threadId);
    } catch (error) {
      errors++;
      firstError ||= String(error);
    }
  };
  const stream = async (threadId: string) => {
    const res = await fetch(`${hangar.url}/v1/deepagents/threads/${threadId}/runs/stream`, {
      method: 'POST',
      headers: { ...headers, accept: 'text/event-stream' },
      body: JSON.stringify({ agent_id: agent.id, messages: [{ role: 'user', content: 'a b c d e f g h i j' }], stream_mode: ['messages-tuple', 'values'] }),
    });
    for await (const _ of parseSse(res.body!)) {
      // read to the end
    }
  };
  await Promise.all(threads.slice(RUNS).map(once));
  await new Promise((r) => setTimeout(r, 2000));
  const before = usage();
  if (process.env.MEMORY_SNAPSHOTS) v8.writeHeapSnapshot(path.join(process.env.MEMORY_SNAPSHOTS, 'before.heapsnapshot'));
  const t = performance.now();
  await Promise.all(threads.slice(0, RUNS).map(once));
  const loadS = (performance.now() - t) / 1000;
  const peak = process.memoryUsage();
  await new Promise((r) => setTimeout(r, Number(process.env.MEMORY_SETTLE_S ?? 15) * 1000));
  const after = usage();
  if (process.env.MEMORY_SNAPSHOTS) v8.writeHeapSnapshot(path.join(process.env.MEMORY_SNAPSHOTS, 'after.heapsnapshot'));
  out(JSON.stringify({ bench: 'memory', runs: RUNS, errors, first_error: firstError, load_s: +loadS.toFixed(1), peak_rss_mb: mb(peak.rss), before, after }));
  await hangar.close();
} finally {
  await embedded.stop();
  await removeDataDir(dataDir);
}
