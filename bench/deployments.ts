// `npm run bench:deployments`: control-plane latency (create, list, filtered list) and time to READY
// of a tiny LangGraph app from a git repository, next to the bare LangGraph server starting the same
// app by hand. Real embedded PostgreSQL, real git, real processes.
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { Writable } from 'node:stream';
import { loadConfig } from '../src/config/index.js';
import { ensureDatabase, startEmbeddedDatabase } from '../src/db/embedded.js';
import { startHangar, type Hangar } from '../src/server.js';

const exec = promisify(execFile);
const CREATES = Number(process.env.BENCH_CREATES ?? 200);
const LISTS = Number(process.env.BENCH_LISTS ?? 200);
const DEPLOYS = Number(process.env.BENCH_DEPLOYS ?? 3);

const silent = new Writable({ write: (_c, _e, done) => done() });
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const ms = (n: number) => `${n.toFixed(1)} ms`;

const progress = (line: string) => process.stderr.write(`[bench] ${line}\n`);

async function timed<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const t = performance.now();
  const v = await fn();
  return [performance.now() - t, v];
}

async function main() {
  const root = await mkdtemp(path.join(os.tmpdir(), 'hangar-bench-deploy-'));
  const pg = await startEmbeddedDatabase({ dir: root });
  const databaseUrl = await ensureDatabase(pg, 'bench');
  const key = `bench_${randomBytes(16).toString('hex')}`;
  const env = { HANGAR_BOOTSTRAP_API_KEY: key, LOG_LEVEL: 'silent', HANGAR_SECRET_KEY: 'cd'.repeat(32), HANGAR_DEPLOY_POLL_MS: '250' };
  const start = (role: string, url = databaseUrl) =>
    startHangar(loadConfig({ flags: { port: 0, databaseUrl: url, dataDir: path.join(root, `data-${role}`) }, env: { ...env, HANGAR_ROLE: role } }), { logDestination: silent, announce: () => {} });
  const call = async (h: Hangar, method: string, p: string, body?: unknown) => {
    const res = await fetch(`${h.url}${p}`, { method, headers: { 'X-Api-Key': key, 'Content-Type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
    const text = await res.text();
    if (res.status >= 400) throw new Error(`${method} ${p}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : null;
  };

  // 1. Control plane, API only (nothing is built).
  const api = await start('api');
  progress('control plane');
  const creates: number[] = [];
  for (let i = 0; i < CREATES; i++) {
    const [t] = await timed(() =>
      call(api, 'POST', '/v2/deployments', {
        name: `bench-${i}`,
        source: 'vcshost',
        source_config: { repo_url: 'https://git.example.com/acme/app.git' },
        source_revision_config: { repo_ref: 'main' },
        secrets: [{ name: 'TOKEN', value: 'x' }],
      }),
    );
    creates.push(t);
  }
  const lists: number[] = [];
  const filtered: number[] = [];
  for (let i = 0; i < LISTS; i++) {
    lists.push((await timed(() => call(api, 'GET', `/v2/deployments?limit=100&offset=${(i * 20) % CREATES}`)))[0]);
    filtered.push((await timed(() => call(api, 'GET', '/v2/deployments?name_contains=bench-1&status=UNUSED&limit=20')))[0]);
  }
  await api.close();

  progress('time to READY');
  // 2. Time to READY through Hangar, and the bare LangGraph server on the same app.
  const repoRoot = path.join(root, 'repos');
  const work = path.join(root, 'work');
  await mkdir(work, { recursive: true });
  await exec('git', ['init', '--quiet', '--bare', '--initial-branch=main', path.join(repoRoot, 'app.git')]);
  await writeFile(path.join(work, 'package.json'), JSON.stringify({ name: 'bench-app', type: 'module' }));
  await writeFile(path.join(work, 'langgraph.json'), JSON.stringify({ graphs: { echo: './graph.mjs:graph' } }));
  await writeFile(
    path.join(work, 'graph.mjs'),
    "import { Annotation, StateGraph, START, END } from '@langchain/langgraph';\nconst S = Annotation.Root({ x: Annotation() });\nexport const graph = new StateGraph(S).addNode('n', (s) => ({ x: s.x })).addEdge(START, 'n').addEdge('n', END).compile();\n",
  );
  const g = (...a: string[]) => exec('git', a, { cwd: work, env: { ...process.env, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@example.com', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@example.com' } });
  await g('init', '--quiet', '--initial-branch=main');
  await g('add', '-A');
  await g('commit', '--quiet', '-m', 'app');
  await g('push', '--quiet', path.join(repoRoot, 'app.git'), 'main');

  // A database of its own: the control-plane deployments above point at an unreachable host.
  const all = await start('all', await ensureDatabase(pg, 'bench_ready'));
  const integration = await call(all, 'POST', '/v1/integrations/forge/vcshost', { kind: 'git', name: 'bench', base_url: pathToFileURL(repoRoot).href });
  const [repo] = await call(all, 'GET', `/v1/integrations/forge/vcshost/${integration.id}/repos`);
  const ready: number[] = [];
  const rollouts: number[] = [];
  for (let i = 0; i < DEPLOYS; i++) {
    const t0 = performance.now();
    const d = await call(all, 'POST', '/v2/deployments', {
      name: `ready-${i}`,
      source: 'vcshost',
      source_config: { integration_id: repo.host_integration_id, repo_url: repo.url },
      source_revision_config: { repo_ref: repo.default_branch },
      secrets: [],
    });
    const waitActive = async (rev: string) => {
      for (;;) {
        const cur = await call(all, 'GET', `/v2/deployments/${d.id}`);
        if (cur.active_revision_id === rev && cur.status === 'READY') return;
        const r = await call(all, 'GET', `/v2/deployments/${d.id}/revisions/${rev}`);
        if (r.status.endsWith('FAILED')) throw new Error(`${r.status}: ${r.status_message}`);
        await new Promise((res) => setTimeout(res, 50));
      }
    };
    await waitActive(d.latest_revision_id);
    progress(`deployment ${i} READY`);
    ready.push(performance.now() - t0);
    const t1 = performance.now();
    const patched = await call(all, 'PATCH', `/v2/deployments/${d.id}`, { source_revision_config: { repo_ref: 'main' } });
    await waitActive(patched.latest_revision_id);
    rollouts.push(performance.now() - t1);
    await call(all, 'DELETE', `/v2/deployments/${d.id}`);
  }
  await all.close();

  progress('bare server');
  const bare: number[] = [];
  const require = createRequire(import.meta.url);
  const server = pathToFileURL(require.resolve('@langchain/langgraph-api/server')).href;
  await writeFile(path.join(root, 'entry.mjs'), `import { startServer } from ${JSON.stringify(server)};\nawait startServer(JSON.parse(process.env.OPTS));\n`);
  await exec('ln', ['-s', path.dirname(path.dirname(path.dirname(require.resolve('@langchain/langgraph-api/package.json')))), path.join(work, 'node_modules')]).catch(() => {});
  for (let i = 0; i < DEPLOYS; i++) {
    const port = 20000 + Math.floor(Math.random() * 20000);
    const t0 = performance.now();
    const child = spawn(process.execPath, [path.join(root, 'entry.mjs')], {
      cwd: work,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, LANGSMITH_TRACING: 'false', OPTS: JSON.stringify({ port, nWorkers: 2, host: '127.0.0.1', cwd: work, graphs: { echo: './graph.mjs:graph' } }) },
      stdio: 'ignore',
    });
    let exited = false;
    child.once('exit', () => (exited = true));
    for (;;) {
      if (exited) throw new Error('the bare LangGraph server exited before answering /ok');
      const ok = await fetch(`http://127.0.0.1:${port}/ok`).then((r) => r.ok, () => false);
      if (ok) break;
      await new Promise((res) => setTimeout(res, 50));
    }
    bare.push(performance.now() - t0);
    const gone = new Promise((res) => child.once('exit', res));
    child.kill('SIGTERM');
    await gone;
  }
  await pg.stop();
  await rm(root, { recursive: true, force: true });

  const row = (label: string, xs: number[], base?: number) =>
    `${label.padEnd(44)} p50 ${ms(pct(xs, 50)).padStart(10)}  p95 ${ms(pct(xs, 95)).padStart(10)}${base ? `  ×${(pct(xs, 50) / base).toFixed(2)}` : ''}`;
  console.log(`\nDeployments benchmark (${CREATES} creates, ${LISTS} lists each, ${DEPLOYS} deploys; Node ${process.versions.node}, ${os.cpus().length} cores)\n`);
  console.log(row('POST /v2/deployments', creates));
  console.log(row('GET /v2/deployments (limit 100)', lists, pct(creates, 50)) + ' of create');
  console.log(row('GET /v2/deployments (name_contains+status)', filtered, pct(creates, 50)) + ' of create');
  console.log(row('bare LangGraph server: spawn → /ok', bare));
  console.log(row('Hangar: create → READY (clone, build, start)', ready, pct(bare, 50)) + ' of bare start');
  console.log(row('Hangar: PATCH → new revision active', rollouts, pct(bare, 50)) + ' of bare start');
}

await main();
