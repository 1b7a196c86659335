// Listing a tool server's tools is an outbound request like any other: it goes through the outbound
// policy at connect time (after DNS), and a failure never hands the upstream's reply back to the caller
// or the log. A stored URL that now names a loopback address stands for a registered name that
// resolves there (as `vm` or `runsc` do in some /etc/hosts), or that DNS rebinding sent there.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

const INTERNAL_REPLY = 'internal-admin-console-reply-7d3f';
let strict: TestServer; // HANGAR_EGRESS_ALLOW=none
let laptop: TestServer; // loopback allowed
let internal: Server;
let internalPort: number;
const seen: { method: string | undefined; authorization: string | undefined }[] = [];

beforeAll(async () => {
  internal = createServer((req, res) => {
    seen.push({ method: req.method, authorization: req.headers.authorization });
    req.resume();
    res.writeHead(404, { 'content-type': 'text/plain' }).end(INTERNAL_REPLY);
  });
  await new Promise<void>((resolve) => internal.listen(0, '127.0.0.1', resolve));
  internalPort = (internal.address() as AddressInfo).port;
  [strict, laptop] = await Promise.all([startTestServer({ env: { HANGAR_EGRESS_ALLOW: 'none' } }), startTestServer()]);
});
afterAll(async () => {
  await Promise.all([strict?.close(), laptop?.close(), new Promise((resolve) => internal?.close(resolve))]);
});

async function register(server: TestServer, url: string): Promise<string> {
  const res = await fetch(`${server.url}/v1/deepagents/mcp-servers`, {
    method: 'POST',
    headers: { 'x-api-key': server.adminKey, 'content-type': 'application/json' },
    body: JSON.stringify({ name: `t${Math.random().toString(36).slice(2, 8)}`, url, headers: [{ key: 'Authorization', value: 'Bearer stored-secret' }] }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

const listTools = (server: TestServer, id: string) => fetch(`${server.url}/v1/deepagents/mcp-servers/${id}/tools`, { headers: { 'x-api-key': server.adminKey } });

describe('GET /v1/deepagents/mcp-servers/{id}/tools', () => {
  it('refuses, at connect time, a name that resolves to a refused address, and sends nothing there', async () => {
    const id = await register(strict, 'https://tools.example.com/mcp');
    await strict.hangar.database.pool.query('UPDATE mcp_servers SET url = $1 WHERE id = $2', [`http://localhost:${internalPort}/`, id]);
    const before = seen.length;
    const res = await listTools(strict, id);
    expect(res.status).toBe(502);
    const body = (await res.json()) as { detail: string };
    expect(body.detail).toMatch(/localhost resolves to a refused address: 127\.0\.0\.1 is a loopback address/);
    expect(seen.length).toBe(before);
  });

  it('says what failed (the status code), not what the server answered, in the reply and the log', async () => {
    const id = await register(laptop, `http://127.0.0.1:${internalPort}/`);
    const res = await listTools(laptop, id);
    expect(res.status).toBe(502);
    const text = await res.text();
    expect(text).not.toContain(INTERNAL_REPLY);
    expect(JSON.parse(text).detail).toMatch(/HTTP 404/);
    expect(laptop.logs()).toMatch(/HTTP 404/);
    expect(laptop.logs()).not.toContain(INTERNAL_REPLY);
  });
});
