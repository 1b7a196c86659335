// The stable URL of a deployment shares Hangar's origin with the Console, and the application behind
// it is not trusted (docs/security.md): a signed-in Console user who opens it must not hand the
// application their session, let it set cookies on Hangar's origin, or run its scripts as themselves.
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import * as tar from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { apiCall } from './api.js';
import { waitFor } from './git-fixture.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ env: { HANGAR_DEPLOY_POLL_MS: '300' } });
});
afterAll(async () => {
  await server?.close();
});

const api = (method: string, p: string, body?: unknown, type?: string) => apiCall(server, method, p, body, type);

/** An application with a custom HTTP app (langgraph.json `http.app`) that shows what reached it and tries to plant a cookie. */
async function hostileApp(): Promise<Buffer> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'hangar-proxy-'));
  const app = path.join(dir, 'app');
  await mkdir(app);
  await writeFile(path.join(app, 'package.json'), JSON.stringify({ name: 'hostile', type: 'module' }));
  await writeFile(path.join(app, 'langgraph.json'), JSON.stringify({ graphs: { noop: './graph.mjs:graph' }, http: { app: './http.mjs:app' } }));
  await writeFile(
    path.join(app, 'graph.mjs'),
    `import { Annotation, StateGraph, START, END } from '@langchain/langgraph';
const S = Annotation.Root({ text: Annotation() });
export const graph = new StateGraph(S).addNode('n', (s) => s).addEdge(START, 'n').addEdge('n', END).compile();
`,
  );
  await writeFile(
    path.join(app, 'http.mjs'),
    `import { Hono } from 'hono';
export const app = new Hono();
app.all('/echo-headers', (c) => c.json(Object.fromEntries(c.req.raw.headers)));
app.get('/page', (c) => {
  c.header('set-cookie', 'hangar_session=planted; Path=/');
  return c.html('<script>fetch("/v1/console/session").then((r) => r.json())</script>');
});
`,
  );
  const file = path.join(dir, 'app.tar.gz');
  await tar.c({ gzip: true, file, cwd: dir }, ['app']);
  return readFile(file);
}

describe('the stable URL of a deployment', () => {
  it('forwards none of Hangar’s credentials, drops the application’s cookies and sandboxes its pages', { timeout: 120_000 }, async () => {
    const upload = await api('POST', '/v2/deployments/uploads');
    expect((await api('PUT', upload.body.upload_url, await hostileApp(), 'application/gzip')).status).toBe(200);
    const created = await api('POST', '/v2/deployments', {
      name: 'hostile',
      source: 'internal_source',
      source_config: {},
      source_revision_config: { source_tarball_path: upload.body.source_tarball_path },
      secrets: [],
    });
    expect(created.status).toBe(201);
    const appUrl = await waitFor('the deployment to be READY', async () => {
      const d = (await api('GET', `/v2/deployments/${created.body.id}`)).body;
      const rev = (await api('GET', `/v2/deployments/${created.body.id}/revisions/${d.latest_revision_id}`)).body;
      if (rev.status.endsWith('_FAILED')) throw new Error(`${rev.status}: ${rev.status_message}`);
      return d.status === 'READY' ? (d.source_config.custom_url as string) : undefined;
    });

    // A Console user signs in (as the browser does) and opens the deployment's link.
    const signIn = await fetch(`${server.url}/v1/console/session`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ api_key: server.adminKey }) });
    expect(signIn.status).toBe(200);
    const session = /hangar_session=([^;]+)/.exec(signIn.headers.get('set-cookie') ?? '')![1]!;
    const { csrf_token: csrf } = (await signIn.json()) as { csrf_token: string };
    const cookie = `hangar_session=${session}; hangar_console=1`;

    const seen = await fetch(`${appUrl}/echo-headers`, { method: 'POST', headers: { Cookie: cookie, 'X-CSRF-Token': csrf, 'X-Custom': 'kept' } });
    expect(seen.status).toBe(200);
    const forwarded = (await seen.json()) as Record<string, string>;
    expect(forwarded['x-custom']).toBe('kept');
    expect(JSON.stringify(forwarded)).not.toContain(session);
    expect(JSON.stringify(forwarded)).not.toContain(csrf);
    expect(forwarded).not.toHaveProperty('cookie');
    expect(forwarded).not.toHaveProperty('x-csrf-token');

    const withKey = await fetch(`${appUrl}/echo-headers`, { headers: { 'X-Api-Key': server.adminKey } });
    expect(JSON.stringify(await withKey.json())).not.toContain(server.adminKey);

    const page = await fetch(`${appUrl}/page`, { headers: { Cookie: cookie } });
    expect(page.status).toBe(200);
    expect(page.headers.get('set-cookie')).toBeNull();
    expect(page.headers.get('content-security-policy')).toBe('sandbox');
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    // The session still works: the application could not replace it.
    const me = await fetch(`${server.url}/v1/console/session`, { headers: { Cookie: cookie } });
    expect(me.status).toBe(200);
  });
});
