// Service endpoints, authentication, error surfaces and the OpenAPI document, over real HTTP.
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateClientSchema } from '../../src/client/generate.js';
import { errorCatalogue, runErrorCatalogue } from '../../src/core/errors.js';
import { VERSION } from '../../src/server.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

describe('service endpoints', () => {
  it('GET /ok and /info need no key', async () => {
    expect(await (await fetch(`${server.url}/ok`)).json()).toEqual({ ok: true });
    const info = await server.client.GET('/info');
    expect(info.data).toEqual({ name: 'hangar', version: VERSION, storage: 'external', role: 'all', tracing: true });
  });

  it('/docs is a readable page whose assets are served locally', async () => {
    const page = await fetch(`${server.url}/docs`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('/openapi.json');
    const asset = await fetch(`${server.url}/docs/assets/swagger-ui-bundle.js`);
    expect(asset.status).toBe(200);
    expect((await asset.arrayBuffer()).byteLength).toBeGreaterThan(100_000);
  });
});

describe('authentication', () => {
  const get = (key?: string, path = '/v1/deepagents/mcp-servers') =>
    fetch(`${server.url}${path}`, { headers: key ? { 'x-api-key': key } : {} });

  it('a missing, unknown or revoked key is 401 {"error":"Unauthorized"}', async () => {
    for (const res of [await get(), await get('hgr_not-a-real-key')]) {
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ error: 'Unauthorized' });
    }
    const key = await server.createKey({ role: 'member' });
    expect((await get(key)).status).toBe(200);
    const [record] = (await server.hangar.services.workspaces.listKeys()).filter((k) => k.role === 'member');
    await server.hangar.services.workspaces.revokeKey(record!.id);
    expect((await get(key)).status).toBe(401);
  });

  it('the control plane answers 401 in its own format', async () => {
    const res = await get(undefined, '/v2/deployments');
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ detail: 'send an API key in the X-Api-Key header' });
  });

  it('a workspace without preview access is 403 on /v1/deepagents', async () => {
    const ws = await server.createWorkspace('no-preview', { previewAccess: false });
    const res = await get(ws.adminKey);
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ error: 'Forbidden' });
  });

  it('unknown routes are 404 in the format of their surface', async () => {
    const agentRuntime = await get(server.adminKey, '/v1/deepagents/no-such-thing');
    expect(agentRuntime.status).toBe(404);
    expect(await agentRuntime.json()).toMatchObject({ code: 'route_not_found', status: 404 });
    const controlPlane = await get(server.adminKey, '/v2/no-such-thing');
    expect(controlPlane.status).toBe(404);
    expect(await controlPlane.json()).toEqual({ detail: 'no such route; the API reference is at /docs' });
    const publicPath = await get(undefined, '/nothing-here');
    expect(publicPath.status).toBe(404);
  });
});

describe('a method the path does not answer', () => {
  const send = (method: string, path: string, key: string | null = server.adminKey) =>
    fetch(`${server.url}${path}`, { method, headers: key ? { 'x-api-key': key } : {} });
  it('is 405 with Allow listing the methods the path answers, in the format of its surface', async () => {
    const deep = await send('PUT', '/v1/deepagents/mcp-servers');
    expect(deep.status).toBe(405);
    expect(deep.headers.get('allow')).toBe('GET, HEAD, POST');
    expect(await deep.json()).toMatchObject({ code: 'method_not_allowed', status: 405 });
    const withParam = await send('DELETE', '/v1/deepagents/mcp-servers/00000000-0000-4000-8000-000000000000/tools');
    expect(withParam.status).toBe(405);
    expect(withParam.headers.get('allow')).toBe('GET, HEAD');
    const controlPlane = await send('PUT', '/v2/deployments');
    expect(controlPlane.status).toBe(405);
    expect(controlPlane.headers.get('allow')).toBe('GET, HEAD, POST');
    expect(await controlPlane.json()).toEqual({ detail: expect.stringMatching(/PUT is not allowed.*GET, HEAD, POST/) });
    const open = await send('POST', '/openapi.json', null);
    expect(open.status).toBe(405);
    expect(open.headers.get('allow')).toBe('GET, HEAD');
  });
  it('authentication still comes first, and paths that do not exist stay 404', async () => {
    expect((await send('PUT', '/v1/deepagents/mcp-servers', null)).status).toBe(401);
    const missing = await send('PUT', '/v1/deepagents/no-such-thing');
    expect(missing.status).toBe(404);
    expect(missing.headers.get('allow')).toBeNull();
    // A route of this method that finds nothing (a docs asset that is not there) is a 404, not a 405.
    const noAsset = await send('GET', '/docs/assets/no-such-file.js', null);
    expect(noAsset.status).toBe(404);
    expect(noAsset.headers.get('allow')).toBeNull();
  });
});

describe('OpenAPI document', () => {
  it('is OpenAPI 3.1, declares the API key scheme and documents every error code', async () => {
    const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
      openapi: string;
      info: { description: string; version: string };
      components: { securitySchemes: Record<string, unknown> };
      paths: Record<string, unknown>;
    };
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe(VERSION);
    expect(doc.components.securitySchemes.ApiKeyAuth).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-Api-Key' });
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/v1/deepagents/mcp-servers', '/v1/deepagents/mcp-servers/{mcp_server_id}', '/ok', '/info']));
    for (const code of Object.keys(errorCatalogue)) expect(doc.info.description).toContain(`\`${code}\``);
    for (const code of Object.keys(runErrorCatalogue)) expect(doc.info.description).toContain(`| \`${code}\` |`);
  });

  it('the committed typed client matches the served document (run `npm run gen:client` if not)', async () => {
    const committed = await readFile(new URL('../../src/client/schema.ts', import.meta.url), 'utf8');
    expect(committed).toBe(await generateClientSchema(VERSION));
  });
});
