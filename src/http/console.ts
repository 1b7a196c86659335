// The Console: the single-page app built from ui/ into dist/console/ (at install, by `prepare`),
// served from the package with caching headers and a strict Content-Security-Policy. Its routes
// load index.html, and so does a browser's unknown address outside the API (status 404: the app says
// the page is not there); API paths keep their prefixes and their JSON 404s.
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Context, Hono } from 'hono';
import type { AppEnv } from './env.js';
import { surfaceOf } from './surface.js';

/** Where `npm run build:console` writes the app (the same from src/http and dist/http). */
export const DEFAULT_CONSOLE_DIR = fileURLToPath(new URL('../../dist/console/', import.meta.url));

/** First path segments that belong to the app (deep links load index.html). */
export const CONSOLE_ROUTES = ['agents', 'threads', 'traces', 'schedules', 'deployments', 'tool-servers', 'usage', 'settings', 'sign-in'];

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
};

const NONCE_PLACEHOLDER = '__CSP_NONCE__';

/**
 * The page's policy: nothing but this origin. Styles allow one per-response nonce, for the
 * `<style>` element the component library writes its theme variables into.
 */
export function contentSecurityPolicy(nonce: string): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    `style-src 'self' 'nonce-${nonce}'`,
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function securityHeaders(c: Context<AppEnv>): void {
  c.header('x-content-type-options', 'nosniff');
  c.header('referrer-policy', 'no-referrer');
  c.header('x-frame-options', 'DENY');
}

/** Mount the Console at `/` (its routes) and `/assets/*` (content-hashed, immutable). */
export function mountConsole(app: Hono<AppEnv>, dir: string = DEFAULT_CONSOLE_DIR): (c: Context<AppEnv>, status?: 200 | 404) => Promise<Response> {
  let index: Promise<string | undefined> | undefined;
  const loadIndex = () =>
    (index ??= readFile(path.join(dir, 'index.html'), 'utf8').catch(() => {
      index = undefined; // built later (npm run build:console) → picked up without a restart
      return undefined;
    }));

  const page = async (c: Context<AppEnv>, status: 200 | 404 = 200) => {
    const html = await loadIndex();
    securityHeaders(c);
    c.header('cache-control', 'no-cache');
    if (!html) {
      c.header('content-security-policy', "default-src 'none'");
      return c.html('<!doctype html><title>Hangar</title><p>The Console is not built. Run <code>npm run build:console</code>; the API reference is at <a href="/docs">/docs</a>.</p>', 503);
    }
    const nonce = randomBytes(16).toString('base64');
    c.header('content-security-policy', contentSecurityPolicy(nonce));
    return c.html(html.replaceAll(NONCE_PLACEHOLDER, nonce), status);
  };

  app.get('/', (c) => page(c));
  for (const route of CONSOLE_ROUTES) {
    app.get(`/${route}`, (c) => page(c));
    app.get(`/${route}/*`, (c) => page(c));
  }

  const files = new Map<string, Buffer>();
  const serveFile = (cacheControl: string) => async (c: Context<AppEnv>) => {
    const rel = c.req.path.slice(1);
    // Only plain file names under the build directory: no traversal, no dot files.
    if (!/^(assets\/)?[\w.-]+$/.test(rel) || rel.split('/').some((p) => p.startsWith('.'))) return c.notFound();
    const type = TYPES[path.extname(rel)];
    if (!type) return c.notFound();
    let body = files.get(rel);
    if (!body) {
      try {
        body = await readFile(path.join(dir, rel));
      } catch {
        return c.notFound();
      }
      files.set(rel, body);
    }
    securityHeaders(c);
    return c.body(new Uint8Array(body), 200, { 'content-type': type, 'cache-control': cacheControl });
  };
  // Vite names every asset by its content hash: a changed file is a new URL.
  app.get('/assets/:file', serveFile('public, max-age=31536000, immutable'));
  app.get('/favicon.svg', serveFile('public, max-age=3600'));
  return page;
}

/**
 * Whether an unknown path is a person's mistyped Console address: a browser asking for a page (not an
 * API client) outside the API's prefixes. It gets the Console, status 404, which says the page is not there.
 */
export function wantsConsolePage(c: Context<AppEnv>): boolean {
  return (c.req.method === 'GET' || c.req.method === 'HEAD') && surfaceOf(c.req.path) === 'public' && (c.req.header('accept') ?? '').includes('text/html');
}
