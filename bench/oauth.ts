// `npm run bench:oauth`: the cost of OAuth tokens and repository listing, each beside a baseline so
// the figures read as ratios:
//  - bearerFor with a stored fresh token, and with a refresh at the provider (a real oidc-provider),
//    beside one provider lookup (a single indexed read);
//  - repository listing of a `git` integration with 100 bare repositories beside one, and of a
//    GitHub API stand-in with 1,000 repositories (10 pages) beside 100 (1 page).
// Uses DATABASE_URL when set, else an embedded PostgreSQL in a temporary folder.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { type components, createHangarClient } from '../src/client/index.js';
import { loadConfig } from '../src/config/index.js';
import { startHangar } from '../src/server.js';
import { startGithubStandIn } from '../test/fixtures/github-api.js';
import { startOidcServer } from '../test/fixtures/oidc-server.js';
import { removeDataDir } from './support/data-dir.js';

const run = promisify(execFile);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 50);

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function sample(n: number, fn: () => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < 3; i++) await fn(); // warm-up: connections, JIT
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    await fn();
    out.push(performance.now() - start);
  }
  return out;
}

function row(label: string, values: number[], baseline: number[]): string {
  const p50 = percentile(values, 50);
  return `${label.padEnd(52)} p50 ${p50.toFixed(2).padStart(8)} ms  p95 ${percentile(values, 95).toFixed(2).padStart(8)} ms  ×${(p50 / percentile(baseline, 50)).toFixed(1)}`;
}

async function bareRepos(dir: string, count: number): Promise<void> {
  await mkdir(dir, { recursive: true });
  for (let i = 0; i < count; i++) await run('git', ['init', '-q', '--bare', '-b', 'main', path.join(dir, `repo-${i}.git`)]);
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'hangar-bench-'));
  const apiKey = `bench_${randomBytes(16).toString('hex')}`;
  const hangar = await startHangar(
    loadConfig({ flags: { port: 0, dataDir }, env: { HANGAR_BOOTSTRAP_API_KEY: apiKey, LOG_LEVEL: 'silent', ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}) } }),
    { announce: () => {} },
  );
  const client = createHangarClient({ baseUrl: hangar.url, apiKey });
  const oidc = await startOidcServer({ redirectUri: `${hangar.url}/oauth/callback` });
  const small = await startGithubStandIn({ repos: fakeRepos(100), perPage: 100 });
  const large = await startGithubStandIn({ repos: fakeRepos(1000), perPage: 100 });
  try {
    const caller = (await hangar.services.workspaces.authenticate(apiKey))!;
    await client.POST('/v2/auth/providers', {
      body: { provider_id: 'bench', name: 'Bench', client_id: oidc.clients.post.id, client_secret: oidc.clients.post.secret, auth_url: oidc.authUrl, token_url: oidc.tokenUrl, scopes: ['openid', 'offline_access'] },
    });
    const started = await client.POST('/v1/deepagents/auth-sessions', { body: { provider_id: 'bench' } });
    await oidc.authorizeInBrowser(started.data!.verification_url!, `${hangar.url}/oauth/callback`);
    const who = { workspaceId: caller.workspaceId, principal: caller.principal, providerId: 'bench' };

    const lookup = await sample(SAMPLES, () => hangar.services.oauthProviders.get(caller, 'bench'));
    const fresh = await sample(SAMPLES, () => hangar.services.oauth.bearerFor(who));
    const db = new pg.Client({ connectionString: hangar.database.pool.options.connectionString });
    await db.connect();
    const refresh = await sample(Math.min(SAMPLES, 20), async () => {
      await db.query("UPDATE oauth_tokens SET expires_at = now() - interval '1 second'");
      await hangar.services.oauth.bearerFor(who);
    });
    await db.end();

    const root = await mkdtemp(path.join(os.tmpdir(), 'hangar-bench-git-'));
    await bareRepos(path.join(root, 'one'), 1);
    await bareRepos(path.join(root, 'hundred'), 100);
    const integration = async (body: components['schemas']['CreateVcshostIntegrationRequest']) =>
      (await client.POST('/v1/integrations/forge/vcshost', { body })).data!.id;
    const repos = (id: string) => async () => {
      const r = await client.GET('/v1/integrations/forge/vcshost/{integration_id}/repos', { params: { path: { integration_id: id } } });
      if (!r.data) throw new Error(JSON.stringify(r.error));
    };
    const gitOne = await integration({ kind: 'git', base_url: path.join(root, 'one') });
    const gitHundred = await integration({ kind: 'git', base_url: path.join(root, 'hundred') });
    const ghSmall = await integration({ kind: 'github', base_url: small.baseUrl, token: small.userToken });
    const ghLarge = await integration({ kind: 'github', base_url: large.baseUrl, token: large.userToken });
    const listGitOne = await sample(SAMPLES, repos(gitOne));
    const listGitHundred = await sample(Math.min(SAMPLES, 20), repos(gitHundred));
    const listGhSmall = await sample(SAMPLES, repos(ghSmall));
    const listGhLarge = await sample(SAMPLES, repos(ghLarge));
    await rm(root, { recursive: true, force: true });

    console.log(`OAuth tokens (${SAMPLES} samples; ratio to the provider lookup)`);
    console.log(row('provider lookup (baseline)', lookup, lookup));
    console.log(row('bearerFor, stored fresh token', fresh, lookup));
    console.log(row('bearerFor, refresh at oidc-provider', refresh, lookup));
    console.log('\nRepository listing over HTTP (ratio to the smaller listing of the same kind)');
    console.log(row('git: 1 bare repository (baseline)', listGitOne, listGitOne));
    console.log(row('git: 100 bare repositories', listGitHundred, listGitOne));
    console.log(row('github stand-in: 100 repos, 1 page (baseline)', listGhSmall, listGhSmall));
    console.log(row('github stand-in: 1,000 repos, 10 pages', listGhLarge, listGhSmall));
  } finally {
    await Promise.all([small.close(), large.close(), oidc.close()]);
    await hangar.close();
    await removeDataDir(dataDir);
  }
}

function fakeRepos(n: number) {
  return Array.from({ length: n }, (_, i) => ({ id: i + 1, name: `repo-${i}`, owner: 'bench', default_branch: 'main' }));
}

await main();
