// `npm run bench:console`: the Console's bundle sizes and the time to first meaningful paint of its
// main pages in Chromium on localhost, against the budgets (initial route JS ≤ 350 KB
// gzipped, first meaningful paint < 1 s). "Meaningful" = the page's own heading is visible (the
// data it shows has arrived), timed on the page's clock from navigation start; first contentful
// paint is shown beside it. Uses DATABASE_URL when set, else an embedded PostgreSQL.
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { format } from 'node:util';
import { gzipSync } from 'node:zlib';
import { createHangarClient } from '../src/client/index.js';
import { loadConfig } from '../src/config/index.js';
import { startHangar } from '../src/server.js';
import { ensureConsoleBuilt, launchBrowser } from '../test/support/browser.js';

const SAMPLES = 5;
/** Straight to standard output: a running Hangar routes `console.*` into its (here silent) log. */
const print = (...args: unknown[]) => process.stdout.write(`${format(...args)}\n`);
const DIST = path.resolve('dist/console');
const kb = (bytes: number) => Math.round((bytes / 1024) * 10) / 10;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function sizes() {
  const html = await readFile(path.join(DIST, 'index.html'), 'utf8');
  const initial = [...html.matchAll(/(?:src|href)="\/(assets\/[^"]+\.(?:js|css))"/g)].map((m) => m[1]!);
  const files = await readdir(path.join(DIST, 'assets'));
  const size = async (f: string) => {
    const body = await readFile(path.join(DIST, f));
    return { raw: body.length, gzip: gzipSync(body, { level: 9 }).length };
  };
  let initialJs = 0;
  let initialCss = 0;
  for (const f of initial) {
    if (f.endsWith('.js')) initialJs += (await size(f)).gzip;
    else initialCss += (await size(f)).gzip;
  }
  const pages: Record<string, number> = {};
  for (const f of files.filter((f) => /^[A-Z]\w+-[\w-]+\.js$/.test(f))) pages[f.split('-')[0]!] = kb((await size(`assets/${f}`)).gzip);
  let totalJs = 0;
  for (const f of files.filter((f) => f.endsWith('.js'))) totalJs += (await size(`assets/${f}`)).gzip;
  return { initial_js_gzip_kb: kb(initialJs), initial_css_gzip_kb: kb(initialCss), all_js_gzip_kb: kb(totalJs), page_chunks_gzip_kb: pages };
}

async function main(): Promise<void> {
  ensureConsoleBuilt();
  const bundle = await sizes();
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'hangar-bench-console-'));
  const apiKey = `bench_${randomBytes(16).toString('hex')}`;
  const hangar = await startHangar(
    loadConfig({ flags: { port: 0, dataDir }, env: { HANGAR_BOOTSTRAP_API_KEY: apiKey, LOG_LEVEL: 'silent', ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}) } }),
    { announce: () => {} },
  );
  const browser = await launchBrowser();
  try {
    const client = createHangarClient({ baseUrl: hangar.url, apiKey });
    const agent = (await client.POST('/v1/deepagents/agents', { body: { name: 'bench-agent', instructions: '# Bench\n\nA page to render.', runtime: { model: { model_id: 'scripted:demo' } } } })).data!;
    for (let i = 0; i < 20; i++) await client.POST('/v1/deepagents/agents', { body: { name: `agent-${i}`, runtime: { model: { model_id: 'scripted:demo' } } } });
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const signIn = await context.newPage();
    await signIn.goto(`${hangar.url}/sign-in`);
    await signIn.getByLabel('API key').fill(apiKey);
    await signIn.getByRole('button', { name: 'Sign in' }).click();
    await signIn.getByRole('button', { name: 'Sign out' }).waitFor();
    await signIn.close();
    const pages: [string, string, (p: import('playwright-core').Page) => Promise<void>][] = [
      ['agents', '/agents', (p) => p.getByRole('link', { name: 'agent-0', exact: true }).waitFor()],
      ['agent', `/agents/${agent.id}`, (p) => p.getByLabel('Preview').getByRole('heading', { name: 'Bench' }).waitFor()],
      ['playground', `/agents/${agent.id}/playground`, (p) => p.getByLabel('Message', { exact: true }).waitFor()],
      ['traces', '/traces', (p) => p.getByRole('heading', { name: 'Traces' }).waitFor()],
      ['tool-servers', '/tool-servers', (p) => p.getByRole('heading', { name: 'Tool servers' }).waitFor()],
      ['deployments', '/deployments', (p) => p.getByRole('heading', { name: 'Deployments' }).waitFor()],
      ['usage', '/usage', (p) => p.getByLabel('Runs per day').waitFor()],
    ];
    const fmp: Record<string, number> = {};
    const fcp: Record<string, number> = {};
    print('Console first meaningful paint, Chromium on localhost (median of %d cold loads; a shared 2-core machine, other work running):', SAMPLES);
    for (const [name, url, ready] of pages) {
      const m: number[] = [];
      const c: number[] = [];
      for (let i = 0; i < SAMPLES; i++) {
        const page = await context.newPage();
        await page.goto(`${hangar.url}${url}`, { waitUntil: 'commit' });
        await ready(page);
        m.push(await page.evaluate<number>('performance.now()'));
        c.push(await page.evaluate<number>("performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? NaN"));
        await page.close();
      }
      fmp[name] = Math.round(median(m));
      fcp[name] = Math.round(median(c));
      print(`  ${name.padEnd(13)} FMP ${String(fmp[name]).padStart(5)} ms  FCP ${String(fcp[name]).padStart(5)} ms  FMP/budget ${(fmp[name]! / 1000).toFixed(2)}`);
    }
    print(`Initial route: JS ${bundle.initial_js_gzip_kb} KB gzipped (budget 350 KB, ratio ${(bundle.initial_js_gzip_kb / 350).toFixed(2)}), CSS ${bundle.initial_css_gzip_kb} KB; all JS ${bundle.all_js_gzip_kb} KB`);
    print('Page chunks (KB gzipped):', Object.entries(bundle.page_chunks_gzip_kb).map(([k, v]) => `${k} ${v}`).join(', '));
    const worst = Math.max(...Object.values(fmp));
    print(JSON.stringify({ bench: 'console', ...bundle, initial_js_budget_ratio: Math.round((bundle.initial_js_gzip_kb / 350) * 100) / 100, fmp_ms: fmp, fcp_ms: fcp, worst_fmp_budget_ratio: Math.round((worst / 1000) * 100) / 100 }));
  } finally {
    await browser.close();
    await hangar.close();
  }
}

await main();
