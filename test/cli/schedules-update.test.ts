// `hangar schedules update ID`: changes only the fields given, and never silently overwrites a change
// made by someone else between its read and its write (it sends If-Match with the updated_at it read).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runHangar } from '../support/cli.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent } from '../runtime/support.js';

let server: TestServer;
let env: Record<string, string>;
let agentId: string;

beforeAll(async () => {
  server = await startTestServer();
  env = { HANGAR_URL: server.url, HANGAR_API_KEY: server.adminKey };
  agentId = await createAgent(server, { name: 'updater' });
});
afterAll(async () => {
  await server?.close();
});

async function newSchedule(): Promise<string> {
  const res = await server.client.POST('/v1/deepagents/schedules', {
    body: { agent_id: agentId, schedule: '0 9 * * *', timezone: 'UTC', messages: [{ role: 'user', content: 'first' }], webhook: 'http://127.0.0.1:9/hook', end_time: '2999-01-01T00:00:00Z' },
  });
  return res.data!.id;
}

async function read(id: string) {
  return (await server.client.GET('/v1/deepagents/schedules/{schedule_id}', { params: { path: { schedule_id: id } } })).data!;
}

/** A proxy to the server that runs `before` once, when the first PATCH arrives, before passing it on. */
async function proxyChangingFirst(before: () => Promise<void>): Promise<{ url: string; close: () => Promise<void> }> {
  let done = false;
  const proxy: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        if (req.method === 'PATCH' && !done) {
          done = true;
          await before();
        }
        const headers = Object.fromEntries(Object.entries(req.headers).filter(([k, v]) => typeof v === 'string' && !['host', 'connection', 'content-length'].includes(k))) as Record<string, string>;
        const upstream = await fetch(new URL(req.url!, server.url), { method: req.method, headers, ...(chunks.length ? { body: Buffer.concat(chunks) } : {}) });
        res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' });
        res.end(Buffer.from(await upstream.arrayBuffer()));
      })();
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, close: () => new Promise((resolve) => proxy.close(() => resolve())) };
}

describe('hangar schedules update', () => {
  it('changes the fields given and leaves the others', async () => {
    const id = await newSchedule();
    const out = await runHangar(['schedules', 'update', id, '--schedule', '30 8 * * 1-5', '--timezone', 'Europe/Paris', '--message', 'second', '--disabled'], env);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toContain(`Updated schedule ${id}: "30 8 * * 1-5" in Europe/Paris (disabled)`);
    const s = await read(id);
    expect(s).toMatchObject({ schedule: '30 8 * * 1-5', timezone: 'Europe/Paris', enabled: false, webhook: 'http://127.0.0.1:9/hook', end_time: '2999-01-01T00:00:00.000Z' });
    expect(s.input.messages).toEqual([{ role: 'user', content: 'second' }]);

    const cleared = await runHangar(['schedules', 'update', id, '--no-webhook', '--no-end-time', '--enabled', '--multitask-strategy', 'enqueue'], env);
    expect(cleared.code, cleared.stderr).toBe(0);
    expect(await read(id)).toMatchObject({ schedule: '30 8 * * 1-5', enabled: true, webhook: null, end_time: null, multitask_strategy: 'enqueue' });
  }, 120_000);

  it('refuses to overwrite a change made between its read and its write, and writes nothing', async () => {
    const id = await newSchedule();
    const proxy = await proxyChangingFirst(async () => {
      const res = await server.client.PATCH('/v1/deepagents/schedules/{schedule_id}', { params: { path: { schedule_id: id } }, body: { schedule: '15 7 * * *' } });
      expect(res.response.status).toBe(200);
    });
    try {
      const out = await runHangar(['schedules', 'update', id, '--schedule', '45 6 * * *', '--message', 'lost'], { ...env, HANGAR_URL: proxy.url });
      expect(out.code).not.toBe(0);
      expect(out.stderr).toContain('changed by someone else');
      expect(out.stderr).toContain('nothing was written');
    } finally {
      await proxy.close();
    }
    const s = await read(id);
    expect(s.schedule).toBe('15 7 * * *');
    expect(s.input.messages).toEqual([{ role: 'user', content: 'first' }]);
  }, 120_000);

  it('says what is wrong: nothing to change, an unknown schedule, a bad expression', async () => {
    const id = await newSchedule();
    const none = await runHangar(['schedules', 'update', id], env);
    expect(none.code).not.toBe(0);
    expect(none.stderr).toContain('nothing to change');
    const unknown = await runHangar(['schedules', 'update', '00000000-0000-4000-8000-000000000000', '--disabled'], env);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('no schedule');
    const bad = await runHangar(['schedules', 'update', id, '--schedule', 'every minute'], env);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('5 fields');
    expect((await read(id)).schedule).toBe('0 9 * * *');
  }, 120_000);
});
