// Foundation benchmark: authenticated GET /v1/deepagents/mcp-servers/{id} at concurrency 1 and 64,
// beside the floor of the unauthenticated GET /ok on the same server, and the start time of
// `hangar serve` on an existing data directory (embedded PostgreSQL included).
// Run: npm run bench:foundation   (BENCH_SECONDS=5 by default per measurement)
import { spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fmt, load } from './support/load.js';
import { removeDataDir } from './support/data-dir.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const KEY = 'bench_admin_key_0123456789abcdef';

interface Running {
  url: string;
  startMs: number;
  stop(): Promise<void>;
}

function serve(dataDir: string): Promise<Running> {
  const started = performance.now();
  const child = spawn(process.execPath, ['bin/hangar.js', 'serve', '--port', '0', '--data-dir', dataDir, '--log-level', 'warn'], {
    cwd: ROOT,
    env: { ...process.env, HANGAR_BOOTSTRAP_API_KEY: KEY, DATABASE_URL: '' },
  });
  return new Promise((resolve, reject) => {
    let out = '';
    // The JSON log goes to standard output, the "listening on" line for people to standard error.
    const onData = (d: unknown) => {
      out += String(d);
      const m = out.match(/listening on (http:\/\/[\d.:]+)/);
      if (m) {
        resolve({
          url: m[1]!,
          startMs: performance.now() - started,
          stop: () => new Promise((done) => { child.once('exit', () => done()); child.kill('SIGTERM'); }),
        });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server exited ${code}: ${out}`)));
  });
}

const dataDir = await mkdtemp(path.join(os.tmpdir(), 'hangar-bench-'));
try {
  const first = await serve(dataDir);
  console.log(`first start (initdb included): ${fmt(first.startMs, 0)} ms`);
  await first.stop();
  // Restarts on the existing data directory (measured before any load, so no drain is involved).
  const starts: number[] = [];
  let server = first;
  for (let i = 0; i < 3; i++) {
    server = await serve(dataDir);
    starts.push(server.startMs);
    if (i < 2) await server.stop();
  }
  const sorted = [...starts].sort((a, b) => a - b);
  console.log(`start on an existing data directory (3 runs): median ${fmt(sorted[1]!, 0)} ms, min ${fmt(sorted[0]!, 0)} ms, max ${fmt(sorted[2]!, 0)} ms`);
  console.log(`ratio restart / first start: ${fmt(sorted[1]! / first.startMs, 2)}`);

  const created = await fetch(`${server.url}/v1/deepagents/mcp-servers`, {
    method: 'POST',
    headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench', url: 'https://bench.example.com/mcp', headers: [{ key: 'Authorization', value: 'Bearer x' }] }),
  });
  const { id } = (await created.json()) as { id: string };
  const target = `${server.url}/v1/deepagents/mcp-servers/${id}`;

  console.log(`\nrequests/second and latency, ${SECONDS}s per row (closed loop, keep-alive, load from a second process)`);
  console.log('concurrency | GET /ok rps | GET mcp-server rps | ratio | mcp-server p50 ms | p99 ms | /ok p50 ms | p99 ms');
  for (const concurrency of [1, 64]) {
    const floor = await load({ url: `${server.url}/ok`, concurrency, seconds: SECONDS });
    const auth = await load({ url: target, headers: { 'x-api-key': KEY }, concurrency, seconds: SECONDS });
    if (auth.errors > 0 || floor.errors > 0) console.log(`  (errors: ok=${floor.errors}, mcp-server=${auth.errors})`);
    console.log(
      `${String(concurrency).padStart(11)} | ${fmt(floor.rps, 0).padStart(11)} | ${fmt(auth.rps, 0).padStart(18)} | ${fmt(auth.rps / floor.rps, 2).padStart(5)} | ${fmt(auth.p50Ms, 2).padStart(17)} | ${fmt(auth.p99Ms, 2).padStart(6)} | ${fmt(floor.p50Ms, 2).padStart(10)} | ${fmt(floor.p99Ms, 2).padStart(6)}`,
    );
  }
  await server.stop();
} finally {
  await removeDataDir(dataDir);
}
