// Run webhooks end to end: a receiver started here verifies each Standard Webhooks signature with the
// workspace secret (the official `standardwebhooks` verifier), sees retries after answering 500, and
// never hears of a delivery again after its last attempt.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@langchain/langgraph-sdk';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent, createThread, run } from '../runtime/support.js';
import { runHangar } from '../support/cli.js';
import { createSchedule, eventually, sleep, ticksOf } from './support.js';

interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
  verified: Record<string, unknown> | null;
}

let server: TestServer;
let receiver: Server;
let receiverUrl: string;
let secret: string;
const received: Received[] = [];
/** How the receiver answers each path: a list of statuses used in turn (the last one repeats). */
const plans = new Map<string, number[]>();

beforeAll(async () => {
  server = await startTestServer({ env: { HANGAR_WEBHOOK_BACKOFF_MS: '200', HANGAR_WEBHOOK_MAX_ATTEMPTS: '3', HANGAR_WEBHOOK_POLL_MS: '100' } });
  const got = await server.client.GET('/v1/deepagents/webhooks/secret', {});
  secret = got.data!.secret;
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += String(c)));
    req.on('end', () => {
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
      let verified: Record<string, unknown> | null = null;
      try {
        verified = new Webhook(secret).verify(body, headers) as Record<string, unknown>;
      } catch {
        verified = null;
      }
      received.push({ path: req.url!, headers, body, verified });
      const plan = plans.get(req.url!) ?? [200];
      const status = plan.length > 1 ? plan.shift()! : plan[0]!;
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await server?.close();
  await new Promise((resolve) => receiver?.close(resolve));
});

const at = (path: string) => received.filter((r) => r.path === path);

describe('run webhooks', () => {
  it('POST a signed summary of the run when it ends, retried after a 500, with every attempt in the delivery log', async () => {
    plans.set('/flaky', [500, 200]);
    const agentId = await createAgent(server);
    const threadId = await createThread(server, agentId);
    const { stream } = await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: 'hello hook' }], webhook: `${receiverUrl}/flaky` });
    const runId = stream.runId!;
    await eventually(async () => (at('/flaky').length >= 2 ? true : undefined));
    const [first, second] = at('/flaky');
    // Both attempts carry a valid signature over the exact body, under the same delivery id.
    expect(first!.verified).not.toBeNull();
    expect(second!.verified).not.toBeNull();
    expect(first!.headers['webhook-id']).toBe(second!.headers['webhook-id']);
    expect(Number(first!.headers['webhook-timestamp'])).toBeGreaterThan(0);
    expect(second!.verified).toMatchObject({
      event: 'run.completed',
      run_id: runId,
      thread_id: threadId,
      agent_id: agentId,
      status: 'success',
      error: null,
      message: { type: 'ai', content: 'You said: hello hook' },
    });
    expect(typeof (second!.verified as { duration_ms: unknown }).duration_ms).toBe('number');

    // A forged body fails verification with the same headers.
    expect(() => new Webhook(secret).verify(second!.body.replace('success', 'error'), second!.headers)).toThrow();

    const log = await eventually(async () => {
      const res = await server.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}/webhooks', { params: { path: { thread_id: threadId, run_id: runId } } });
      return res.data?.[0]?.state === 'delivered' ? res.data : undefined;
    });
    expect(log).toHaveLength(1);
    expect(log[0]!.attempts.map((a) => a.status_code)).toEqual([500, 200]);
    expect(log[0]!.attempts[0]!.error).toContain('500');
    expect(log[0]!.next_attempt_at).toBeNull();
  });

  it('gives up after the last attempt and never sends again', async () => {
    plans.set('/down', [500]);
    const agentId = await createAgent(server);
    const threadId = await createThread(server, agentId);
    const { stream } = await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: 'nobody listens' }], webhook: `${receiverUrl}/down` });
    const log = await eventually(async () => {
      const res = await server.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}/webhooks', { params: { path: { thread_id: threadId, run_id: stream.runId! } } });
      return res.data?.[0]?.state === 'failed' ? res.data : undefined;
    });
    expect(log[0]!.attempts).toHaveLength(3);
    expect(at('/down')).toHaveLength(3);
    await sleep(1_500); // several backoff periods: nothing more arrives
    expect(at('/down')).toHaveLength(3);
  });

  it('a schedule’s runs notify its webhook, and a rotated secret signs from then on', async () => {
    const rotated = await server.client.POST('/v1/deepagents/webhooks/secret/rotate', {});
    expect(rotated.data!.secret).not.toBe(secret);
    secret = rotated.data!.secret;
    const agentId = await createAgent(server);
    const schedule = await createSchedule(server, { agent_id: agentId, schedule: '* * * * * *', messages: [{ role: 'user', content: 'scheduled' }], webhook: `${receiverUrl}/scheduled` });
    await eventually(async () => (at('/scheduled').length >= 1 ? true : undefined));
    await server.client.DELETE('/v1/deepagents/schedules/{schedule_id}', { params: { path: { schedule_id: schedule.id } } });
    expect(at('/scheduled')[0]!.verified).toMatchObject({ schedule_id: schedule.id, agent_id: agentId, status: 'success', message: { content: 'You said: scheduled' } });
  });

  it('LangGraph clients set the webhook on runs.create (the LangGraph field)', async () => {
    const lg = new Client({ apiUrl: `${server.url}/v1/deepagents`, defaultHeaders: { 'X-Api-Key': server.adminKey } });
    const agentId = await createAgent(server);
    const thread = await lg.threads.create({ metadata: { agent_id: agentId } });
    const created = await lg.runs.create(thread.thread_id, agentId, { input: { messages: [{ role: 'user', content: 'from langgraph' }] }, webhook: `${receiverUrl}/langgraph` });
    await eventually(async () => (at('/langgraph').length >= 1 ? true : undefined));
    expect(at('/langgraph')[0]!.verified).toMatchObject({ run_id: created.run_id, thread_id: thread.thread_id, status: 'success', message: { content: 'You said: from langgraph' } });
  });

  it('does not read what the receiver answers: an endless response body neither fills memory nor holds the delivery', async () => {
    // A receiver that answers 200 and then streams without end, as fast as Hangar reads.
    const cap = 256 * 1024 * 1024;
    const seen = { bytes: 0, closed: false };
    const endless = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        const chunk = Buffer.alloc(64 * 1024, 120);
        const pump = () => {
          while (!res.destroyed && seen.bytes < cap) {
            seen.bytes += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          if (seen.bytes >= cap) res.destroy(); // read this far: Hangar is buffering the body
        };
        pump();
      });
      res.on('close', () => (seen.closed = true));
    });
    await new Promise<void>((resolve) => endless.listen(0, '127.0.0.1', resolve));
    try {
      const agentId = await createAgent(server);
      const threadId = await createThread(server, agentId);
      const url = `http://127.0.0.1:${(endless.address() as AddressInfo).port}/endless`;
      const { stream } = await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: 'answer at length' }], webhook: url });
      await eventually(async () => (seen.closed ? true : undefined));
      // Hangar hung up after the status line: the receiver could write no more than socket buffers hold.
      expect(seen.bytes).toBeLessThan(32 * 1024 * 1024);
      const log = await eventually(async () => {
        const res = await server.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}/webhooks', { params: { path: { thread_id: threadId, run_id: stream.runId! } } });
        return res.data?.[0]?.state === 'pending' ? undefined : res.data;
      });
      expect(log[0]).toMatchObject({ state: 'delivered', attempts: [{ status_code: 200, error: null }] });
    } finally {
      endless.closeAllConnections();
      await new Promise((resolve) => endless.close(resolve));
    }
  });

  it('shows a viewer only where a webhook POSTs, never the token in its URL (API, LangGraph crons, CLI, delivery log)', async () => {
    const agentId = await createAgent(server);
    const hook = `${receiverUrl}/hooks/T0/B0/path-token?token=query-secret`;
    const masked = `${receiverUrl}/…`;
    const schedule = await createSchedule(server, { agent_id: agentId, schedule: '0 0 1 1 *', messages: [{ role: 'user', content: 'x' }], webhook: hook, enabled: false });
    expect(schedule.webhook).toBe(hook);
    const viewerKey = await server.createKey({ role: 'viewer' });
    const viewer = server.clientFor(viewerKey);
    const member = server.clientFor(await server.createKey({ role: 'member' }));

    const got = await viewer.GET('/v1/deepagents/schedules/{schedule_id}', { params: { path: { schedule_id: schedule.id } } });
    expect(got.data!.webhook).toBe(masked);
    const listed = await viewer.GET('/v1/deepagents/schedules', { params: { query: { agent_id: agentId } } });
    expect(listed.data!.items.map((s) => s.webhook)).toEqual([masked]);
    const crons = await fetch(`${server.url}/v1/deepagents/runs/crons/search`, {
      method: 'POST',
      headers: { 'x-api-key': viewerKey, 'content-type': 'application/json' },
      body: JSON.stringify({ assistant_id: agentId }),
    });
    const cronText = await crons.text();
    // Viewers may not POST a search (a 403), and the answer names no URL either way.
    expect(crons.status).toBe(403);
    const cli = await runHangar(['schedules', 'list', '--agent', agentId, '--json'], { HANGAR_URL: server.url, HANGAR_API_KEY: viewerKey });
    expect(cli.code).toBe(0);
    expect(cli.stdout).toContain(masked);
    for (const text of [JSON.stringify(got.data), JSON.stringify(listed.data), cronText, cli.stdout]) {
      for (const secretPart of ['query-secret', 'path-token']) expect(text).not.toContain(secretPart);
    }
    // Keys that may change the schedule see the URL they set.
    expect((await member.GET('/v1/deepagents/schedules/{schedule_id}', { params: { path: { schedule_id: schedule.id } } })).data!.webhook).toBe(hook);

    // The delivery log of a run, likewise.
    const threadId = await createThread(server, agentId);
    const { stream } = await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: 'hook with a token' }], webhook: hook });
    const path = { thread_id: threadId, run_id: stream.runId! };
    const seen = await viewer.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}/webhooks', { params: { path } });
    expect(seen.data!.map((d) => d.url)).toEqual([masked]);
    const full = await member.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}/webhooks', { params: { path } });
    expect(full.data!.map((d) => d.url)).toEqual([hook]);
  });

  it('a run that ends at once (it fails at start) is still delivered: the outbox waits for the run, not the other way round', async () => {
    // An agent naming a saved model configuration deleted after it was saved: its runs fail at start.
    const name = `gone-${Math.random().toString(36).slice(2)}`;
    const config = await server.client.POST('/v1/deepagents/model-configs', { body: { name, model_id: 'scripted:echo' } });
    const agentId = await createAgent(server, { runtime: { model: { model_id: name } } });
    await server.client.DELETE('/v1/deepagents/model-configs/{model_config_id}', { params: { path: { model_config_id: config.data!.id } } });
    const threadId = await createThread(server, agentId);
    const { stream } = await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: 'fail now' }], webhook: `${receiverUrl}/at-once` });
    await eventually(async () => (at('/at-once').length >= 1 ? true : undefined));
    expect(at('/at-once')).toHaveLength(1);
    expect(at('/at-once')[0]!.verified).toMatchObject({ run_id: stream.runId, status: 'error' });
  });

  it('a run is never recorded without its webhook: when the webhook cannot be recorded, neither is the run (request or schedule)', async () => {
    // The database refuses webhook rows for one receiver path: it stands for the registration failing
    // (a lost connection, or the server dying) after the run was recorded, which used to be a second
    // statement: the run then went on and ended, and its webhook was never sent.
    const db = new pg.Client({ connectionString: server.databaseUrl });
    await db.connect();
    try {
      await db.query(`CREATE FUNCTION refuse_test_hook() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW.url LIKE '%/refused%' THEN RAISE EXCEPTION 'webhook rows refused by the test'; END IF; RETURN NEW; END $$`);
      await db.query('CREATE TRIGGER refuse_test_hook BEFORE INSERT ON webhook_deliveries FOR EACH ROW EXECUTE FUNCTION refuse_test_hook()');
      const agentId = await createAgent(server);
      const threadId = await createThread(server, agentId);
      const res = await fetch(`${server.url}/v1/deepagents/threads/${threadId}/runs/stream`, {
        method: 'POST',
        headers: { 'x-api-key': server.adminKey, 'content-type': 'application/json' },
        body: JSON.stringify({ agent_id: agentId, messages: [{ role: 'user', content: 'ends at once' }], webhook: `${receiverUrl}/refused` }),
      });
      await res.text();
      expect(res.ok).toBe(false);
      const runs = await server.client.GET('/v1/deepagents/threads/{thread_id}/runs', { params: { path: { thread_id: threadId } } });
      expect(runs.data).toEqual([]);
      const thread = await server.client.GET('/v1/deepagents/threads/{thread_id}', { params: { path: { thread_id: threadId } } });
      expect(thread.data!.status).toBe('idle');

      // A schedule's tick: it fails, and no run of it went on without the webhook.
      const schedule = await createSchedule(server, { agent_id: agentId, schedule: '* * * * * *', messages: [{ role: 'user', content: 'tick' }], webhook: `${receiverUrl}/refused-schedule` });
      const tick = await eventually(async () => (await ticksOf(server, schedule.id)).find((t) => t.state === 'failed'));
      await server.client.DELETE('/v1/deepagents/schedules/{schedule_id}', { params: { path: { schedule_id: schedule.id } } });
      expect(tick.thread_id).not.toBeNull();
      const tickRuns = await server.client.GET('/v1/deepagents/threads/{thread_id}/runs', { params: { path: { thread_id: tick.thread_id! } } });
      expect(tickRuns.data).toEqual([]);
    } finally {
      await db.query('DROP TRIGGER IF EXISTS refuse_test_hook ON webhook_deliveries');
      await db.query('DROP FUNCTION IF EXISTS refuse_test_hook()');
      await db.end();
    }
  });

  it('refuses a webhook that is not an http(s) URL or that the outbound policy forbids', async () => {
    const agentId = await createAgent(server);
    const threadId = await createThread(server, agentId);
    const res = await fetch(`${server.url}/v1/deepagents/threads/${threadId}/runs/stream`, {
      method: 'POST',
      headers: { 'x-api-key': server.adminKey, 'content-type': 'application/json' },
      body: JSON.stringify({ agent_id: agentId, messages: [{ role: 'user', content: 'x' }], webhook: 'file:///etc/passwd' }),
    });
    expect(res.status).toBe(422);
    expect(await res.text()).toContain('webhook');
    // The outbound policy applies: a cloud-metadata address is refused at registration, nothing starts.
    const metadata = await fetch(`${server.url}/v1/deepagents/threads/${threadId}/runs/stream`, {
      method: 'POST',
      headers: { 'x-api-key': server.adminKey, 'content-type': 'application/json' },
      body: JSON.stringify({ agent_id: agentId, messages: [{ role: 'user', content: 'x' }], webhook: 'http://169.254.169.254/latest/meta-data' }),
    });
    expect(metadata.status).toBe(422);
    expect(await metadata.text()).toContain('webhook');
    const schedule = await server.client.POST('/v1/deepagents/schedules', {
      body: { agent_id: agentId, schedule: '0 9 * * *', messages: [{ role: 'user', content: 'x' }], webhook: 'http://169.254.169.254/' },
    });
    expect(schedule.response.status).toBe(422);
    const runs = await server.client.GET('/v1/deepagents/threads/{thread_id}/runs', { params: { path: { thread_id: threadId } } });
    expect(runs.data).toHaveLength(0);
  });
});
