// `npm run bench:deployments`: control-plane latency (create, list, filtered list) and time to READY
// of a tiny LangGraph app from a git repository, next to the bare LangGraph server starting the same
// app by hand. Real embedded PostgreSQL, real git, real processes.
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
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
const ROLLOUTS = Number(process.env.BENCH_ROLLOUTS ?? 5);

const silent = new Writable({ write: (_c, _e, done) => done() });
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const ms = (n: number) => `${n.toFixed(1)} ms`;

const require0 = createRequire(import.meta.url);
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

  // 3. An application with a dependency of its own from the registry (zod, locked by npm): first
  // deploy with a cold and a warm npm cache, a code-only redeploy (install reused), a tarball
  // deploy, restart to serving, and failed requests through the stable URL during rollouts.
  progress('own dependencies');
  const own = path.join(root, 'own');
  await mkdir(own, { recursive: true });
  const zodVersion = (require0('zod/package.json') as { version: string }).version;
  await writeFile(path.join(own, 'package.json'), JSON.stringify({ name: 'own-app', type: 'module', dependencies: { zod: zodVersion } }));
  await writeFile(path.join(own, 'langgraph.json'), JSON.stringify({ graphs: { echo: './graph.mjs:graph' } }));
  const ownGraph = (label: string) =>
    `import { z } from 'zod';\nimport { Annotation, StateGraph, START, END } from '@langchain/langgraph';\nconst S = Annotation.Root({ x: Annotation() });\nexport const graph = new StateGraph(S).addNode('n', (s) => ({ x: z.string().parse(String(s.x)) + ' ${label}' })).addEdge(START, 'n').addEdge('n', END).compile();\n`;
  await writeFile(path.join(own, 'graph.mjs'), ownGraph('v0'));
  await exec('npm', ['install', '--package-lock-only', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: own, env: { ...process.env, npm_config_cache: path.join(root, 'npm-cache-lock') } });
  const ownRepo = path.join(repoRoot, 'own.git');
  await exec('git', ['init', '--quiet', '--bare', '--initial-branch=main', ownRepo]);
  const og = (...a: string[]) => exec('git', a, { cwd: own, env: { ...process.env, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@example.com', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@example.com' } });
  await og('init', '--quiet', '--initial-branch=main');
  const commit = async (label: string) => {
    await writeFile(path.join(own, 'graph.mjs'), ownGraph(label));
    await og('add', '-A');
    await og('commit', '--quiet', '--allow-empty', '-m', label);
    await og('push', '--quiet', '--force', ownRepo, 'main');
  };
  await commit('v0');
  // Builds use this npm cache (the driver passes npm_config_cache on): empty for the cold deploy.
  process.env.npm_config_cache = path.join(root, 'npm-cache');
  const localEnv = { ...env, HANGAR_DEPLOY_ALLOW_LOCAL_REPOS: 'true', HANGAR_LOCAL_REPO_ROOTS: root };
  const ownDb = await ensureDatabase(pg, 'bench_own');
  const startOwn = (dataDir: string, db = ownDb) =>
    startHangar(loadConfig({ flags: { port: 0, databaseUrl: db, dataDir }, env: { ...localEnv, HANGAR_ROLE: 'all' } }), { logDestination: silent, announce: () => {} });
  const waitServing = async (h: Hangar, id: string, rev: string) => {
    for (;;) {
      const cur = await call(h, 'GET', `/v2/deployments/${id}`);
      if (cur.active_revision_id === rev && cur.status === 'READY') return;
      const r = await call(h, 'GET', `/v2/deployments/${id}/revisions/${rev}`);
      if (r.status.endsWith('FAILED')) throw new Error(`${r.status}: ${r.status_message}`);
      await new Promise((res) => setTimeout(res, 50));
    }
  };
  const createOwn = async (h: Hangar, name: string, extra: Record<string, unknown> = {}) => {
    const t0 = performance.now();
    const d = await call(h, 'POST', '/v2/deployments', {
      name,
      source: 'vcshost',
      source_config: { repo_url: pathToFileURL(ownRepo).href },
      source_revision_config: { repo_ref: 'main' },
      secrets: [],
      ...extra,
    });
    await waitServing(h, d.id, d.latest_revision_id);
    return { id: d.id as string, ms: performance.now() - t0 };
  };
  const dataA = path.join(root, 'data-own-a');
  let h = await startOwn(dataA);
  const cold = await createOwn(h, 'own-cold');
  progress(`cold npm cache: ${ms(cold.ms)}`);
  // Code-only redeploys: same lockfile, install reused.
  const codeOnly: number[] = [];
  for (let i = 1; i <= 3; i++) {
    await commit(`v${i}`);
    const t0 = performance.now();
    const p = await call(h, 'PATCH', `/v2/deployments/${cold.id}`, { source_revision_config: { repo_ref: 'main' } });
    await waitServing(h, cold.id, p.latest_revision_id);
    codeOnly.push(performance.now() - t0);
  }
  // Restart to serving: close Hangar, start it again, until READY and the stable URL answers.
  await h.close();
  const tr = performance.now();
  h = await startOwn(dataA);
  for (;;) {
    const cur = await call(h, 'GET', `/v2/deployments/${cold.id}`);
    if (cur.status === 'READY') {
      const ok = await fetch(`${h.url}/v2/deployments/${cold.id}/app/ok`, { headers: { 'X-Api-Key': key } });
      if (ok.status === 200) break;
      throw new Error(`READY but the stable URL answered ${ok.status}`);
    }
    await new Promise((res) => setTimeout(res, 50));
  }
  const restart = performance.now() - tr;
  progress(`restart to serving: ${ms(restart)}`);
  // Rollouts under continuous requests through the stable URL.
  let requests = 0;
  let failed = 0;
  let loading = true;
  const load = (async () => {
    while (loading) {
      const r = await fetch(`${h.url}/v2/deployments/${cold.id}/app/runs/wait`, {
        method: 'POST',
        headers: { 'X-Api-Key': key, 'Content-Type': 'application/json' },
        body: JSON.stringify({ assistant_id: 'echo', input: { x: 'hi' } }),
      }).catch(() => undefined);
      requests++;
      if (r?.status !== 200) failed++;
      await r?.body?.cancel();
    }
  })();
  const rolls: number[] = [];
  for (let i = 0; i < ROLLOUTS; i++) {
    await commit(`r${i}`);
    const t0 = performance.now();
    const p = await call(h, 'PATCH', `/v2/deployments/${cold.id}`, { source_revision_config: { repo_ref: 'main' } });
    await waitServing(h, cold.id, p.latest_revision_id);
    rolls.push(performance.now() - t0);
  }
  loading = false;
  await load;
  progress(`${ROLLOUTS} rollouts: ${failed} of ${requests} requests failed`);
  await h.close();
  // Warm npm cache, empty Hangar install cache (a new data directory).
  h = await startOwn(path.join(root, 'data-own-b'), await ensureDatabase(pg, 'bench_own_b'));
  const warm = await createOwn(h, 'own-warm');
  progress(`warm npm cache: ${ms(warm.ms)}`);
  // Tarball deploy of the same application (internal_source).
  const tarball = path.join(root, 'own.tar.gz');
  await exec('tar', ['czf', tarball, '--exclude=.git', '--exclude=node_modules', '-C', own, '.']);
  const t0 = performance.now();
  const upload = await call(h, 'POST', '/v2/deployments/uploads');
  const put = await fetch(`${h.url}${upload.upload_url}`, { method: 'PUT', headers: { 'X-Api-Key': key, 'Content-Type': 'application/gzip' }, body: await readFile(tarball) });
  if (put.status >= 400) throw new Error(`upload: ${put.status}`);
  const td = await call(h, 'POST', '/v2/deployments', {
    name: 'own-tarball',
    source: 'internal_source',
    source_config: {},
    source_revision_config: { source_tarball_path: upload.source_tarball_path, agentgraph_config_path: 'langgraph.json' },
    secrets: [],
  });
  await waitServing(h, td.id, td.latest_revision_id);
  const tarballMs = performance.now() - t0;
  await h.close();

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
  console.log(`\nApplication with its own dependency (zod ${zodVersion} from the registry, package-lock.json):`);
  console.log(row('first deploy, cold npm cache (npm ci)', [cold.ms], pct(bare, 50)) + ' of bare start');
  console.log(row('first deploy, warm npm cache (npm ci)', [warm.ms], pct(bare, 50)) + ' of bare start');
  console.log(row('code-only redeploy (install reused)', codeOnly, pct(bare, 50)) + ' of bare start');
  console.log(row('tarball deploy (upload → READY)', [tarballMs], pct(bare, 50)) + ' of bare start');
  console.log(row('restart of Hangar → READY and answering', [restart], pct(bare, 50)) + ' of bare start');
  console.log(row(`rollout under load (${ROLLOUTS})`, rolls, pct(bare, 50)) + ` of bare start; ${failed} of ${requests} requests failed`);
  console.log('(2 cores shared with other work: figures are noisy)');
  console.log(
    JSON.stringify({
      bench: 'deployments',
      create_p50_ms: +pct(creates, 50).toFixed(1),
      list_p50_ms: +pct(lists, 50).toFixed(1),
      bare_start_p50_ms: +pct(bare, 50).toFixed(1),
      ready_p50_ms: +pct(ready, 50).toFixed(1),
      rollout_p50_ms: +pct(rollouts, 50).toFixed(1),
      first_deploy_cold_npm_ms: +cold.ms.toFixed(1),
      first_deploy_warm_npm_ms: +warm.ms.toFixed(1),
      code_only_redeploy_p50_ms: +pct(codeOnly, 50).toFixed(1),
      tarball_deploy_ms: +tarballMs.toFixed(1),
      restart_to_serving_ms: +restart.toFixed(1),
      rollouts: ROLLOUTS,
      rollout_under_load_p50_ms: +pct(rolls, 50).toFixed(1),
      requests_during_rollouts: requests,
      failed_requests_during_rollouts: failed,
    }),
  );
}

await main();
