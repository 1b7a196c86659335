// `/docs`: a readable API reference (Swagger UI, served from the installed package, works offline).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Hono } from 'hono';
import swaggerUi from 'swagger-ui-dist';
import type { AppEnv } from './env.js';

const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
};

const PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Hangar API reference</title>
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css"></head>
<body><div id="api"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#api', deepLinking: true });</script>
</body></html>`;

/** Mount `/docs` and its assets. */
export function mountDocs(app: Hono<AppEnv>): void {
  const cache = new Map<string, Buffer>();
  app.get('/docs', (c) => c.html(PAGE));
  app.get('/docs/assets/:file', async (c) => {
    const file = c.req.param('file');
    const type = ASSETS[file];
    if (!type) return c.notFound();
    let body = cache.get(file);
    if (!body) {
      body = await readFile(path.join(swaggerUi.getAbsoluteFSPath(), file));
      cache.set(file, body);
    }
    return c.body(new Uint8Array(body), 200, { 'content-type': type, 'cache-control': 'public, max-age=86400' });
  });
}
