// `npm run bench:agents`: create/PATCH latency of a 50-file agent, GET of an agent with 1,000 revisions
// and `git clone` of it, each beside a baseline so the figures read as ratios.
// Uses DATABASE_URL when set, else an embedded PostgreSQL in a temporary folder.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createHangarClient } from '../src/client/index.js';
import { loadConfig } from '../src/config/index.js';
import { startHangar } from '../src/server.js';
import { removeDataDir } from './support/data-dir.js';

const run = promisify(execFile);
const REVISIONS = Number(process.env.BENCH_REVISIONS ?? 1000);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 100);

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

function fiftyFiles(seed: string): Record<string, { content: string }> {
  const files: Record<string, { content: string }> = {};
  for (let s = 0; s < 8; s++) {
    files[`skills/skill-${s}/SKILL.md`] = { content: `---\nname: skill-${s}\ndescription: Skill ${s}\n---\n${'Step by step. '.repeat(40)}\n` };
    for (let f = 0; f < 5; f++) files[`skills/skill-${s}/ref-${f}.md`] = { content: `${seed} reference ${s}/${f}\n${'lorem ipsum '.repeat(100)}\n` };
  }
  for (let d = 0; d < 2; d++) files[`docs/doc-${d}.md`] = { content: `${seed} doc ${d}\n` };
  return files; // 48 files here + agent.json, AGENTS.md, tools.json = 51
}

const fmt = (ms: number) => `${ms.toFixed(1)} ms`;

async function main(): Promise<void> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'hangar-bench-'));
  const apiKey = `bench_${randomBytes(16).toString('hex')}`;
  const hangar = await startHangar(
    loadConfig({ flags: { port: 0, dataDir }, env: { HANGAR_BOOTSTRAP_API_KEY: apiKey, LOG_LEVEL: 'silent', ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}) } }),
    { announce: () => {} },
  );
  const client = createHangarClient({ baseUrl: hangar.url, apiKey });
  const runtime = { model: { model_id: 'openai:gpt-5.4-mini' } };
  try {
    // Create: a 50-file agent vs an agent of 3 files.
    const createBig: number[] = [];
    const createSmall: number[] = [];
    let bigId = '';
    for (let i = 0; i < SAMPLES; i++) {
      createSmall.push(await timed(() => client.POST('/v1/deepagents/agents', { body: { name: `small-${i}`, runtime } })));
      createBig.push(
        await timed(async () => {
          const r = await client.POST('/v1/deepagents/agents', { body: { name: `big-${i}`, runtime, instructions: 'Be useful.', files: fiftyFiles(String(i)) } });
          bigId = r.data!.id;
        }),
      );
    }
    // PATCH one file of the 50-file agent vs PATCH of a 3-file agent.
    const small = await client.POST('/v1/deepagents/agents', { body: { name: 'small-patch', runtime } });
    const patchBig: number[] = [];
    const patchSmall: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      patchSmall.push(await timed(() => client.PATCH('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: small.data!.id } }, body: { instructions: `v${i}` } })));
      patchBig.push(await timed(() => client.PATCH('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: bigId } }, body: { instructions: `v${i}` } })));
    }
    // An agent with REVISIONS revisions (the 50-file agent, PATCHed on), vs a fresh one with 1.
    const deep = await client.POST('/v1/deepagents/agents', { body: { name: 'deep', runtime, files: fiftyFiles('deep') } });
    const deepId = deep.data!.id;
    for (let i = 1; i < REVISIONS; i++) {
      await client.PATCH('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: deepId } }, body: { files: { [`docs/doc-${i % 2}.md`]: { content: `rev ${i}\n` } } } });
    }
    const shallow = await client.POST('/v1/deepagents/agents', { body: { name: 'shallow', runtime, files: fiftyFiles('shallow') } });
    const getDeep: number[] = [];
    const getShallow: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      getShallow.push(await timed(() => client.GET('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: shallow.data!.id }, query: { include_files: 'true' } } })));
      getDeep.push(await timed(() => client.GET('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: deepId }, query: { include_files: 'true' } } })));
    }
    const clone = async (id: string) => {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'hangar-bench-clone-'));
      const url = new URL(`/v1/deepagents/agents/${id}.git`, hangar.url);
      url.username = 'bench';
      url.password = apiKey;
      try {
        return await timed(() => run('git', ['clone', '--quiet', url.toString(), dir], { env: { ...process.env, GIT_TERMINAL_PROMPT: '0' } }));
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    };
    const cloneShallow = await clone(shallow.data!.id);
    const cloneDeep = await clone(deepId);

    const rows: [string, string, string, string][] = [
      ['create p50', fmt(percentile(createSmall, 50)), fmt(percentile(createBig, 50)), (percentile(createBig, 50) / percentile(createSmall, 50)).toFixed(2)],
      ['create p99', fmt(percentile(createSmall, 99)), fmt(percentile(createBig, 99)), (percentile(createBig, 99) / percentile(createSmall, 99)).toFixed(2)],
      ['PATCH p50', fmt(percentile(patchSmall, 50)), fmt(percentile(patchBig, 50)), (percentile(patchBig, 50) / percentile(patchSmall, 50)).toFixed(2)],
      ['PATCH p99', fmt(percentile(patchSmall, 99)), fmt(percentile(patchBig, 99)), (percentile(patchBig, 99) / percentile(patchSmall, 99)).toFixed(2)],
    ];
    const rows2: [string, string, string, string][] = [
      ['GET p50 (files)', fmt(percentile(getShallow, 50)), fmt(percentile(getDeep, 50)), (percentile(getDeep, 50) / percentile(getShallow, 50)).toFixed(2)],
      ['GET p99 (files)', fmt(percentile(getShallow, 99)), fmt(percentile(getDeep, 99)), (percentile(getDeep, 99) / percentile(getShallow, 99)).toFixed(2)],
      ['git clone', fmt(cloneShallow), fmt(cloneDeep), (cloneDeep / cloneShallow).toFixed(2)],
    ];
    const print = (head: [string, string, string, string], body: [string, string, string, string][]) => {
      const all = [head, ...body];
      const w = [0, 1, 2, 3].map((i) => Math.max(...all.map((r) => r[i]!.length)));
      for (const r of all) console.log(r.map((c, i) => (i === 0 ? c.padEnd(w[i]!) : c.padStart(w[i]!))).join('   '));
      console.log();
    };
    console.log(`\nagents benchmark: ${SAMPLES} samples each, sequential, one client, ${hangar.url.includes('127.0.0.1') ? 'local' : 'remote'} server\n`);
    print(['', '3-file agent', '51-file agent', 'ratio'], rows);
    print(['', '1 revision', `${REVISIONS} revisions`, 'ratio'], rows2);
  } finally {
    await hangar.close();
    await removeDataDir(dataDir);
  }
}

await main();
