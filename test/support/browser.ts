// A real browser for Console tests: Debian's Chromium driven by playwright-core (no browser
// download), with the page's console errors collected and axe-core run inside the page.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterEach } from 'vitest';

/** Where screenshots go (a CI artifact; not committed). */
export const ARTIFACTS = path.resolve('test-artifacts/console');

/** Build the Console when this checkout has not (npm install's `prepare` normally has). */
export function ensureConsoleBuilt(): void {
  if (existsSync(path.resolve('dist/console/index.html'))) return;
  execFileSync('npx', ['vite', 'build', '--config', 'ui/vite.config.ts'], { stdio: 'inherit' });
}

/** The system's Chromium (`apt-get install chromium`). */
export function chromiumPath(): string {
  for (const candidate of [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser']) {
    if (candidate && existsSync(candidate)) return candidate;
  }
  throw new Error('Chromium is not installed: apt-get install -y chromium (or set CHROMIUM_PATH)');
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
}

/** Console messages of level error, and uncaught page errors, seen by a page. */
export function collectErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  return errors;
}

export async function screenshot(page: Page, name: string): Promise<string> {
  await mkdir(ARTIFACTS, { recursive: true });
  const file = path.join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

let axeSource: string | undefined;

/** axe-core's serious and critical violations on the current page, as "rule: targets" lines. */
export async function axeViolations(page: Page): Promise<string[]> {
  axeSource ??= await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  // Once what moves has settled: a dialog still fading in (Mantine's ~200 ms transition) shows its
  // buttons half transparent, and axe, sampling then, reports their contrast (CI saw this once).
  // (Two frames first: a transition begins on the frame after the element is shown. Endless
  // animations, a loader's spinner, are not waited for; nor is anything for more than 2 s.)
  await page.evaluate(`new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))).then(() => Promise.race([
    Promise.all(document.getAnimations().filter((a) => Number.isFinite(a.effect?.getComputedTiming().endTime ?? Infinity)).map((a) => a.finished.catch(() => {}))),
    new Promise((r) => setTimeout(r, 2000)),
  ]))`);
  // Evaluated by the test driver, not loaded by the page: the page's CSP forbids inline scripts.
  await page.evaluate(`${axeSource}\n;void 0`);
  const violations = await page.evaluate<{ id: string; impact: string; targets: string[] }[]>(`(async () => {
    const result = await window.axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => n.target.join(' ')) }));
  })()`);
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}): ${v.targets.join(', ')}`);
}

/**
 * A test file's browser sessions against one server: `open` gives a fresh profile (no cookies) with
 * its error log, `signIn` signs in as a person does. A failed test leaves a picture of where it
 * stopped. Call at the file's top level; `browser` and `url` are read when a test runs.
 */
export function consoleSessions(browser: () => Browser, url: () => string): {
  open: (width?: number) => Promise<{ context: BrowserContext; page: Page; errors: string[] }>;
  signIn: (page: Page, key: string, path?: string) => Promise<void>;
} {
  let current: Page | undefined;
  afterEach(async (ctx) => {
    if (ctx.task.result?.state === 'fail' && current && !current.isClosed()) await screenshot(current, `failed-${ctx.task.name.slice(0, 40).replace(/\W+/g, '-')}`);
    current = undefined;
  });
  return {
    async open(width = 1280) {
      const context = await browser().newContext({ viewport: { width, height: 900 } });
      context.setDefaultTimeout(60_000); // generous: CI machines are small and shared
      const page = await context.newPage();
      current = page;
      return { context, page, errors: collectErrors(page) };
    },
    async signIn(page, key, path = '/') {
      await page.goto(`${url()}${path}`);
      await page.getByLabel('API key').fill(key);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('button', { name: 'Sign out' }).waitFor();
    },
  };
}
