// HTTP hygiene and abuse limits (issue 14): errors answered before the body was read close the
// connection instead of leaving a dead keep-alive; failed authentication is throttled per address;
// an optional per-key rate; Basic auth only where git needs it.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ env: { HANGAR_BODY_LIMIT_BYTES: String(2 * 1024 * 1024), HANGAR_AUTH_FAILURE_LIMIT: '5', HANGAR_AUTH_FAILURE_WINDOW_SECONDS: '600' } });
});
afterAll(async () => {
  await server?.close();
});

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  socket: unknown;
}

/** One request through `agent` (a keep-alive agent with one socket), as a plain HTTP client sends it. */
function request(agent: http.Agent, method: string, path: string, headers: Record<string, string> = {}, body?: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, server.url);
    const req = http.request({ agent, host: url.hostname, port: url.port, method, path: url.pathname + url.search, headers: { ...headers, ...(body ? { 'content-length': String(body.length) } : {}) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString('utf8'), socket: req.socket }));
    });
    req.on('error', reject);
    if (body) req.write(body);
    req.end();
  });
}

const MEGABYTE = Buffer.alloc(1024 * 1024, 'x');
const TOO_LARGE = Buffer.alloc(3 * 1024 * 1024, 'x');

describe('an error before the body was read never leaves a dead keep-alive', () => {
  it.each([
    ['413 (larger than the limit)', { 'x-api-key': 'adminKey', 'content-type': 'application/json' }, '/v1/deepagents/threads', 413, TOO_LARGE],
    ['401 to a 1 MB body', { 'content-type': 'application/json' }, '/v1/deepagents/threads', 401, MEGABYTE],
    ['404 to a 1 MB body', { 'x-api-key': 'adminKey', 'content-type': 'application/octet-stream' }, '/v1/deepagents/nothing-here', 404, MEGABYTE],
  ])('%s: Connection: close, and the next request on the same client works', async (_name, headers, path, status, body) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const h = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, v === 'adminKey' ? server.adminKey : v]));
      const first = await request(agent, 'POST', path, h, body);
      expect(first.status).toBe(status);
      expect(first.headers.connection).toBe('close');
      const next = await request(agent, 'GET', '/ok');
      expect(next.status).toBe(200);
    } finally {
      agent.destroy();
    }
  });

  it('a validation error after the body was read keeps the connection alive', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const first = await request(agent, 'POST', '/v1/deepagents/threads', { 'x-api-key': server.adminKey, 'content-type': 'application/json' }, Buffer.from('{"metadata": 5}'));
      expect(first.status).toBe(422);
      expect(first.headers.connection).toBe('keep-alive');
      const next = await request(agent, 'GET', '/ok');
      expect(next.status).toBe(200);
      expect(next.socket).toBe(first.socket);
    } finally {
      agent.destroy();
    }
  });
});

describe('a 204 answer has no body and no content-type', () => {
  it('deletes answer 204 without content-type', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const auth = { 'x-api-key': server.adminKey };
      const created = await server.client.POST('/v1/deepagents/agents', { body: { name: 'no-content', runtime: { model: { model_id: 'scripted:demo' } }, instructions: 'x' } });
      const thread = await server.client.POST('/v1/deepagents/threads', { body: { agent_id: created.data!.id } });
      for (const path of [`/v1/deepagents/threads/${thread.data!.id}`, `/v1/deepagents/agents/${created.data!.id}`]) {
        const answer = await request(agent, 'DELETE', path, auth);
        expect({ path, status: answer.status, contentType: answer.headers['content-type'], body: answer.body }).toEqual({ path, status: 204, contentType: undefined, body: '' });
      }
    } finally {
      agent.destroy();
    }
  });
});

describe('Basic auth only on the git endpoints', () => {
  const basic = () => `Basic ${Buffer.from(`x:${server.adminKey}`).toString('base64')}`;
  it('the API refuses a key sent as a basic-auth password', async () => {
    const res = await fetch(`${server.url}/v1/deepagents/agents`, { headers: { authorization: basic() } });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBeNull();
  });
  it('git endpoints accept it', async () => {
    const created = await server.client.POST('/v1/deepagents/agents', { body: { name: 'git', runtime: { model: { model_id: 'scripted:echo' } } } });
    const res = await fetch(`${server.url}/v1/deepagents/agents/${created.data!.id}.git/info/refs?service=git-upload-pack`, { headers: { authorization: basic() } });
    expect(res.status).toBe(200);
  });
});

describe('failed authentication is throttled per client address', () => {
  it('after the limit, 429 with Retry-After (in the surface’s shape), even before the key is looked at', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await fetch(`${server.url}/v1/deepagents/agents`, { headers: { 'x-api-key': `wrong-${i}` } })).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401]);
    const deep = await fetch(`${server.url}/v1/deepagents/agents`, { headers: { 'x-api-key': 'wrong-again' } });
    expect(deep.status).toBe(429);
    expect(Number(deep.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await deep.json()).toMatchObject({ code: 'too_many_requests', status: 429 });
    const cp = await fetch(`${server.url}/v2/deployments`, { headers: { 'x-api-key': 'wrong-again' } });
    expect(cp.status).toBe(429);
    expect(await cp.json()).toEqual({ detail: expect.stringMatching(/too many failed authentications/) });
    // Unauthenticated service endpoints stay open.
    expect((await fetch(`${server.url}/ok`)).status).toBe(200);
  });
});

describe('Console sign-in shares the failed-authentication throttle', () => {
  // Each case gets its own server: the throttle counts per client address, and every test here is 127.0.0.1.
  const signIn = (on: TestServer, apiKey: string) =>
    fetch(`${on.url}/v1/console/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: apiKey }) });
  const throttled = () => startTestServer({ env: { HANGAR_AUTH_FAILURE_LIMIT: '5', HANGAR_AUTH_FAILURE_WINDOW_SECONDS: '600' } });

  it('bad keys sent to sign-in count; past the limit sign-in and X-Api-Key requests get 429, even with a good key', async () => {
    const own = await throttled();
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await signIn(own, `wrong-${i}`)).status);
      expect(statuses).toEqual([401, 401, 401, 401, 401]);
      const good = await signIn(own, own.adminKey);
      expect(good.status).toBe(429);
      expect(Number(good.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(good.headers.get('set-cookie')).toBeNull();
      expect((await fetch(`${own.url}/v2/deployments`, { headers: { 'x-api-key': own.adminKey } })).status).toBe(429);
    } finally {
      await own.close();
    }
  });

  it('an address throttled by X-Api-Key failures cannot sign in either', async () => {
    const own = await throttled();
    try {
      for (let i = 0; i < 5; i++) expect((await fetch(`${own.url}/v2/deployments`, { headers: { 'x-api-key': `wrong-${i}` } })).status).toBe(401);
      expect((await signIn(own, own.adminKey)).status).toBe(429);
    } finally {
      await own.close();
    }
  });
});

describe('per-key rate', () => {
  it('beyond HANGAR_KEY_RATE_LIMIT requests per second a key gets 429; other keys are unaffected', async () => {
    const limited = await startTestServer({ env: { HANGAR_KEY_RATE_LIMIT: '2' } });
    try {
      const answers = await Promise.all(Array.from({ length: 30 }, () => fetch(`${limited.url}/v1/deepagents/mcp-servers`, { headers: { 'x-api-key': limited.adminKey } })));
      const statuses = answers.map((a) => a.status);
      expect(statuses).toContain(429);
      expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
      expect(answers.find((a) => a.status === 429)!.headers.get('retry-after')).toBe('1');
      const other = await limited.createKey({ role: 'viewer' });
      expect((await fetch(`${limited.url}/v1/deepagents/mcp-servers`, { headers: { 'x-api-key': other } })).status).toBe(200);
    } finally {
      await limited.close();
    }
  });
});
