// A run's webhook across two worker processes on one database, when the process sending it stalls (a
// `hangar serve` child stopped with SIGSTOP while its attempt waits on the receiver, as a long pause
// or a suspended VM would stop it) past its claim: another process claims the delivery and delivers
// it. The stalled attempt, which times out once the child resumes, must not overwrite what the other
// process recorded (it used to replace the delivery log with its own failed attempt, losing the
// attempt that delivered). Orderings only: the child is resumed once the delivery is recorded, and
// stopped (its attempt recorded or refused) before the log is read.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Hangar } from '../../src/server.js';
import { spawnHangar, type RunningHangar } from '../support/cli.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent, createThread, startWorker } from '../runtime/support.js';
import { eventually } from './support.js';

const SETTINGS = { HANGAR_WEBHOOK_TIMEOUT_MS: '1000', HANGAR_WEBHOOK_POLL_MS: '100', HANGAR_WEBHOOK_BACKOFF_MS: '60000' };

let api: TestServer;
let receiver: Server;
let receiverUrl: string;
let child: RunningHangar | undefined;
let helper: Hangar | undefined;
/** Requests received, in order; the first is held unanswered until its connection closes. */
const received: IncomingMessage[] = [];
let firstClosed!: Promise<void>;

beforeAll(async () => {
  api = await startTestServer({ env: { HANGAR_ROLE: 'api' } });
  let closedFirst!: () => void;
  firstClosed = new Promise((resolve) => (closedFirst = resolve));
  receiver = createServer((req, res) => {
    received.push(req);
    req.resume();
    if (received.length === 1) {
      res.on('close', () => closedFirst());
      return;
    }
    req.on('end', () => res.writeHead(200).end());
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});
afterAll(async () => {
  if (child) {
    child.child.kill('SIGCONT');
    child.child.kill('SIGKILL');
    await child.exited;
  }
  await helper?.close();
  await api?.close();
  receiver?.closeAllConnections();
  await new Promise((resolve) => receiver?.close(resolve));
});

describe('run webhooks across worker processes', () => {
  it('a stalled attempt does not overwrite the delivery another process recorded', async () => {
    child = spawnHangar(['serve', '--port', '0', '--database-url', api.databaseUrl, '--data-dir', api.dataDir], {
      HANGAR_ROLE: 'worker',
      HANGAR_BOOTSTRAP_API_KEY: api.adminKey,
      LOG_LEVEL: 'info',
      ...SETTINGS,
      // Its attempt waits on the receiver this long (its claim, 5 s more): time to stop it first.
      HANGAR_WEBHOOK_TIMEOUT_MS: '3000',
    });
    await child.waitFor(/Hangar is listening on/);
    const agentId = await createAgent(api);
    const threadId = await createThread(api, agentId);
    // Executed by the child, the only worker; it then sends the webhook, which the receiver holds.
    const started = await api.client.POST('/v1/deepagents/threads/{thread_id}/runs', {
      params: { path: { thread_id: threadId } },
      body: { agent_id: agentId, messages: [{ role: 'user', content: 'hello hook' }], webhook: `${receiverUrl}/hook` },
    });
    expect(started.response.status).toBe(200);
    const runId = started.data!.run_id;
    await eventually(async () => (received.length > 0 ? true : undefined));
    child.child.kill('SIGSTOP');

    // Another worker claims the delivery once the child's claim has lapsed, and delivers it.
    helper = await startWorker(api, SETTINGS);
    const log = async () => {
      const res = await api.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}/webhooks', { params: { path: { thread_id: threadId, run_id: runId } } });
      expect(res.response.status).toBe(200);
      return res.data!;
    };
    const delivered = await eventually(async () => {
      const [delivery] = await log();
      return delivery?.state === 'delivered' ? delivery : undefined;
    });
    expect(received).toHaveLength(2);
    expect(delivered.attempts).toEqual([expect.objectContaining({ attempt: 1, status_code: 200, error: null })]);

    // The child resumes: its attempt times out (the receiver sees it hang up), then it stops, which
    // waits for its deliveries to be recorded.
    child.child.kill('SIGCONT');
    await firstClosed;
    child.child.kill('SIGTERM');
    expect(await child.exited).toBe(0);
    const output = child.output();
    child = undefined;

    const [after] = await log();
    expect(after).toMatchObject({ state: 'delivered', attempts: delivered.attempts });
    expect(output).toContain('recorded by another process');
    expect(received).toHaveLength(2);
  }, 120_000);
});
