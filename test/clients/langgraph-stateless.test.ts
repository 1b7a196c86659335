// Stateless runs (LangGraph's `client.runs.stream / wait / create(null, assistantId, …)`): a run on a
// thread made for it, deleted once the run has ended unless `onCompletion: "keep"`. Driven through
// the official `@langchain/langgraph-sdk` against a real server and database.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@langchain/langgraph-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent } from '../runtime/support.js';
import { failure, human } from './sdk-support.js';

let server: TestServer;
let client: Client;
let agentId: string;
let receiver: Server;
let receiverUrl: string;
/** Webhook bodies received, by path. */
const received = new Map<string, Record<string, unknown>>();

const sdk = (apiKey: string) => new Client({ apiUrl: `${server.url}/v1/deepagents`, defaultHeaders: { 'X-Api-Key': apiKey }, callerOptions: { maxRetries: 0 } });

beforeAll(async () => {
  server = await startTestServer({ env: { HANGAR_WEBHOOK_POLL_MS: '100' } });
  agentId = await createAgent(server);
  client = sdk(server.adminKey);
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += String(c)));
    req.on('end', () => {
      received.set(req.url!, JSON.parse(body) as Record<string, unknown>);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await server?.close();
  await new Promise((resolve) => receiver?.close(resolve));
});

type Values = { messages?: { type: string; content: unknown }[] };

describe('LangGraph SDK: stateless runs', () => {
  it('runs.wait(null, …) answers the result; the thread it made is gone afterwards', async () => {
    let created: { run_id: string; thread_id?: string | undefined } | undefined;
    const result = (await client.runs.wait(null, agentId, { ...human('hello'), onRunCreated: (meta) => (created = meta) })) as Values;
    expect(result.messages?.map((m) => [m.type, m.content])).toEqual([
      ['human', 'hello'],
      ['ai', 'You said: hello'],
    ]);
    expect(created?.thread_id).toBeDefined();
    expect(await failure(client.threads.get(created!.thread_id!))).toMatchObject({ status: 404 });
  });

  it('runs.stream(null, …) streams the run; the thread is gone once the stream has ended', async () => {
    let created: { run_id: string; thread_id?: string | undefined } | undefined;
    const events: { event: string; data: unknown }[] = [];
    for await (const chunk of client.runs.stream(null, agentId, { ...human('stream me'), streamMode: ['values', 'messages-tuple'], onRunCreated: (meta) => (created = meta) })) events.push(chunk);
    expect(events[0]?.event).toBe('metadata');
    expect(events.map((e) => e.event)).toContain('messages');
    const last = events.filter((e) => e.event === 'values').at(-1)!.data as Values;
    expect(last.messages?.at(-1)?.content).toBe('You said: stream me');
    expect(await failure(client.threads.get(created!.thread_id!))).toMatchObject({ status: 404 });
  });

  it('onCompletion "keep" leaves an ordinary thread with the run, traced like any run', async () => {
    // The server's values are `delete` and `keep` (LangGraph's API schema); the JS SDK types others.
    const run = await client.runs.create(null, agentId, { ...human('keep me'), onCompletion: 'keep' as never });
    const result = (await client.runs.join(run.thread_id, run.run_id)) as Values;
    expect(result.messages?.at(-1)?.content).toBe('You said: keep me');
    const thread = await client.threads.get(run.thread_id);
    expect(thread.metadata).toMatchObject({ assistant_id: agentId });
    expect((await client.runs.list(run.thread_id)).map((r) => r.run_id)).toEqual([run.run_id]);
    const trace = await server.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}/trace', { params: { path: { thread_id: run.thread_id, run_id: run.run_id } } });
    expect(trace.response.status).toBe(200);
  });

  it('a webhook of a stateless run is sent with the run’s answer: its thread waits for it', async () => {
    await client.runs.wait(null, agentId, { ...human('hooked'), webhook: `${receiverUrl}/stateless` });
    await expect.poll(() => received.get('/stateless'), { timeout: 20_000, interval: 100 }).toBeDefined();
    expect(received.get('/stateless')).toMatchObject({ status: 'success', message: { type: 'ai', content: 'You said: hooked' } });
  });

  it('refuses what needs a thread, a viewer, and another workspace’s agent, and makes no thread', async () => {
    const before = await client.threads.count();
    const refused = [
      [{ command: { resume: { decisions: [{ type: 'approve' }] } } }, 'command'],
      [{ ...human('x'), checkpointId: '1f000000-0000-6000-8000-000000000000' }, 'checkpoint'],
      [{ input: null }, 'input'],
      [{ input: { messages: [] } }, 'messages'],
    ] as const;
    for (const [payload, named] of refused) {
      expect({ named, ...(await failure(client.runs.wait(null, agentId, payload as never))) }).toMatchObject({ named, status: 422, message: expect.stringContaining(named) });
    }
    const viewer = sdk(await server.createKey({ role: 'viewer' }));
    expect(await failure(viewer.runs.wait(null, agentId, human('no')))).toMatchObject({ status: 403 });
    const other = await server.createWorkspace(`other-${Date.now()}`);
    expect(await failure(sdk(other.adminKey).runs.wait(null, agentId, human('no')))).toMatchObject({ status: 404 });
    expect(await client.threads.count()).toBe(before);
  });

  it('a temporary thread nobody deleted (a background run, a process gone) is deleted by the sweeper of the next start', async () => {
    // A background run: nobody follows it here, so its thread is left to the sweeper.
    const run = await client.runs.create(null, agentId, human('background'));
    await client.runs.join(run.thread_id, run.run_id);
    expect((await client.threads.get(run.thread_id)).thread_id).toBe(run.thread_id);
    // A second replica (as after a crash and restart) sweeps at start; no grace, so its first pass deletes it.
    const again = await startTestServer({ databaseUrl: server.databaseUrl, dataDir: server.dataDir, adminKey: server.adminKey, env: { HANGAR_TEMPORARY_THREAD_GRACE_SECONDS: '0' } });
    try {
      await expect.poll(async () => (await failure(sdk(server.adminKey).threads.get(run.thread_id))).status, { timeout: 20_000, interval: 200 }).toBe(404);
      // Its checkpoints went with it: a thread made again with that id starts empty.
      await client.threads.create({ threadId: run.thread_id });
      expect((await client.threads.getState(run.thread_id)).values).toEqual({});
    } finally {
      await again.close();
    }
  });
});
