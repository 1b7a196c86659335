// `hangar chat` across a server's stop: the stream of its run ends before the run does (a stopping
// server hands its runs on and ends its streams). Behind one URL with another replica (a proxy that
// sends new requests to the other API process, as a rolling restart behind a load balancer does),
// chat joins the run again after the last event it read and prints the whole answer once. With no
// server answering any more, it says the run goes on and how to continue (exit 1), instead of
// printing half an answer as if the run were done.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Hangar } from '../../src/server.js';
import { spawnHangar } from '../support/cli.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent, startWorker } from '../runtime/support.js';

const WORDS = Array.from({ length: 30 }, (_, i) => `word${i}`).join(' ');

let api: TestServer;
let worker: Hangar;
let agentId: string;
let proxy: http.Server;
let target: URL;
let proxyUrl: string;

beforeAll(async () => {
  api = await startTestServer({ env: { HANGAR_ROLE: 'api' } });
  worker = await startWorker(api);
  const config = await api.client.POST('/v1/deepagents/model-configs', { body: { name: 'slow', model_id: 'scripted:slow', parameters: { delay_ms: 100 } } });
  expect(config.response.status).toBe(201);
  agentId = await createAgent(api, { runtime: { model: { model_id: 'slow' } } });
  // Forwards each request to whichever server `target` names when it arrives.
  proxy = http.createServer((req, res) => {
    const up = http.request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});
afterAll(async () => {
  proxy?.closeAllConnections();
  await new Promise((resolve) => proxy?.close(resolve));
  await worker?.close();
  await api?.close();
});

/** An API-only server on the same database that stops after a drain of 300 ms. */
function front(): Promise<TestServer> {
  return startTestServer({ databaseUrl: api.databaseUrl, dataDir: api.dataDir, adminKey: api.adminKey, env: { HANGAR_ROLE: 'api', HANGAR_DRAIN_TIMEOUT_MS: '300' } });
}

describe('hangar chat when the server streaming its run stops', () => {
  it('joins the run again behind the same URL and prints the whole answer once', async () => {
    const first = await front();
    target = new URL(first.url);
    const chat = spawnHangar(['chat', agentId, WORDS], { HANGAR_URL: proxyUrl, HANGAR_API_KEY: api.adminKey });
    await chat.waitFor(/You said/);
    // New requests go to the other API process; the open stream stays on the one that stops.
    target = new URL(api.url);
    await first.close();
    expect(await chat.exited, chat.output()).toBe(0);
    expect(chat.stdout()).toBe(`You said: ${WORDS}\n`);
  }, 90_000);

  it('with no server answering any more, says the run goes on and how to continue (exit 1)', async () => {
    const only = await front();
    target = new URL(only.url);
    const chat = spawnHangar(['chat', agentId, WORDS], { HANGAR_URL: only.url, HANGAR_API_KEY: api.adminKey });
    await chat.waitFor(/You said/);
    await only.close();
    expect(await chat.exited, chat.output()).toBe(1);
    expect(chat.output()).toMatch(/hangar: the stream ended before run [0-9a-f-]{36} did \(the server stopped and none answers\); the run goes on once a server takes it: continue with --thread [0-9a-f-]{36}/);
  }, 90_000);
});
