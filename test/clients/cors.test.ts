// CORS: preflights are answered before authentication for the configured origins only, and every
// surface (JSON, errors, run streams) tells an allowed browser it may read the response.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent, createThread } from '../runtime/support.js';

const ALLOWED = 'https://chat.example.test';
let server: TestServer;
let plain: TestServer;

beforeAll(async () => {
  [server, plain] = await Promise.all([startTestServer({ env: { HANGAR_CORS_ORIGINS: `${ALLOWED}, http://127.0.0.1:5173` } }), startTestServer()]);
});
afterAll(async () => {
  await Promise.all([server?.close(), plain?.close()]);
});

const preflight = (base: string, origin: string, path = '/v1/deepagents/threads', method = 'POST') =>
  fetch(`${base}${path}`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'x-api-key, content-type, last-event-id' },
  });

describe('CORS', () => {
  it('answers a preflight without an API key, allowing the key, JSON and Last-Event-ID', async () => {
    const res = await preflight(server.url, ALLOWED);
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(ALLOWED);
    const allowed = res.headers.get('access-control-allow-headers')!.toLowerCase();
    for (const h of ['x-api-key', 'content-type', 'last-event-id']) expect(allowed).toContain(h);
    expect(res.headers.get('access-control-allow-methods')).toContain('PATCH');
  });

  it('allows the hosted SDK’s X-User-Timezone and an update’s If-Match', async () => {
    const res = await fetch(`${server.url}/v1/deepagents/agents`, {
      method: 'OPTIONS',
      headers: { origin: ALLOWED, 'access-control-request-method': 'PATCH', 'access-control-request-headers': 'x-api-key, content-type, x-user-timezone, if-match' },
    });
    const allowed = res.headers.get('access-control-allow-headers')!.toLowerCase();
    for (const h of ['x-user-timezone', 'if-match']) expect(allowed).toContain(h);
  });

  it('does not allow other origins, and allows none by default', async () => {
    const other = await preflight(server.url, 'https://evil.example.test');
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    const byDefault = await preflight(plain.url, ALLOWED);
    expect(byDefault.headers.get('access-control-allow-origin')).toBeNull();
    expect(byDefault.status).toBe(401); // no CORS: an OPTIONS is just another unauthenticated request
  });

  it('marks JSON answers, errors and run streams readable, exposing Content-Location', async () => {
    const agentId = await createAgent(server);
    const threadId = await createThread(server, agentId);
    const json = await fetch(`${server.url}/v1/deepagents/threads/${threadId}`, { headers: { origin: ALLOWED, 'x-api-key': server.adminKey } });
    expect(json.headers.get('access-control-allow-origin')).toBe(ALLOWED);
    const denied = await fetch(`${server.url}/v1/deepagents/threads/${threadId}`, { headers: { origin: ALLOWED } });
    expect(denied.status).toBe(401);
    expect(denied.headers.get('access-control-allow-origin')).toBe(ALLOWED);
    const stream = await fetch(`${server.url}/v1/deepagents/threads/${threadId}/runs/stream`, {
      method: 'POST',
      headers: { origin: ALLOWED, 'x-api-key': server.adminKey, 'content-type': 'application/json' },
      body: JSON.stringify({ assistant_id: agentId, input: { messages: [{ role: 'user', content: 'hi' }] } }),
    });
    expect(stream.headers.get('content-type')).toContain('text/event-stream');
    expect(stream.headers.get('access-control-allow-origin')).toBe(ALLOWED);
    expect(stream.headers.get('access-control-expose-headers')!.toLowerCase()).toContain('content-location');
    expect(stream.headers.get('content-location')).toMatch(/\/runs\//);
    await stream.text();
  });
});
