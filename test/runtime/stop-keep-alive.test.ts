// A stopping `hangar serve` (a child process) closes each keep-alive connection once its answer is
// sent, instead of keeping it open until Node's keep-alive timeout (5 s), which the stop used to wait
// for after its last answer. Two requests in flight when SIGTERM comes, on raw HTTP/1.1 connections
// the test keeps open: a run's stream (its head sent before the stop) and a `…/runs/wait` (answered
// after it). Each answer is the last of its connection: the wait's says `Connection: close`, and a
// second request sent on either connection once its answer has ended gets no answer (it used to be
// served, the connection kept alive). Then the child exits. No durations are measured.
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { spawnHangar, type RunningHangar } from '../support/cli.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent, createThread } from './support.js';

const WORDS = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');

let api: TestServer;
let agentId: string;
let child: RunningHangar | undefined;

beforeAll(async () => {
  api = await startTestServer({ env: { HANGAR_ROLE: 'api' } });
  // About two seconds of tokens: the runs outlast the moment of the stop, not the drain (10 s).
  const config = await api.client.POST('/v1/deepagents/model-configs', { body: { name: 'slow', model_id: 'scripted:slow', parameters: { delay_ms: 50 } } });
  expect(config.response.status).toBe(201);
  agentId = await createAgent(api, { runtime: { model: { model_id: 'slow' } } });
});
afterEach(async () => {
  if (child) {
    child.child.kill('SIGKILL');
    await child.exited;
    child = undefined;
  }
});
afterAll(async () => {
  await api?.close();
});

/** One HTTP/1.1 connection, read as text, as a client holding a keep-alive connection sees it. */
class RawConnection {
  private text = '';
  private readonly waiters: (() => void)[] = [];
  readonly closed: Promise<void>;
  private readonly socket: net.Socket;

  constructor(port: number) {
    this.socket = net.connect(port, '127.0.0.1');
    this.socket.setEncoding('utf8');
    this.socket.on('data', (chunk: string) => {
      this.text += chunk;
      for (const w of this.waiters.splice(0)) w();
    });
    // A reset (the server gone as the second request arrives) is a close too.
    this.socket.on('error', () => undefined);
    this.closed = new Promise((resolve) => this.socket.on('close', () => resolve()));
    void this.closed.then(() => {
      for (const w of this.waiters.splice(0)) w();
    });
  }

  send(method: string, path: string, body?: unknown): void {
    const json = body === undefined ? '' : JSON.stringify(body);
    const head = [`${method} ${path} HTTP/1.1`, 'host: 127.0.0.1', `x-api-key: ${api.adminKey}`];
    if (body !== undefined) head.push('content-type: application/json', `content-length: ${Buffer.byteLength(json)}`);
    this.socket.write(`${head.join('\r\n')}\r\n\r\n${json}`);
  }

  /** Everything received so far. */
  received(): string {
    return this.text;
  }

  /** Until what was received matches `pattern` (rejects if the connection closes first). */
  async until(pattern: RegExp): Promise<void> {
    let isClosed = false;
    void this.closed.then(() => (isClosed = true));
    while (!pattern.test(this.text)) {
      if (isClosed) throw new Error(`the connection closed before ${pattern}: ${this.text}`);
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }
}

describe('a stopping server closes keep-alive connections once their answers are sent', () => {
  it('answers in flight at the stop end their connections; the process then exits', async () => {
    child = spawnHangar(['serve', '--port', '0', '--database-url', api.databaseUrl, '--data-dir', api.dataDir], {
      HANGAR_BOOTSTRAP_API_KEY: api.adminKey,
      LOG_LEVEL: 'info',
    });
    const [, port] = await child.waitFor(/Hangar is listening on http:\/\/127\.0\.0\.1:(\d+)/);
    const streamed = await createThread(api, agentId);
    const waited = await createThread(api, agentId);
    const body = { agent_id: agentId, messages: [{ role: 'user', content: WORDS }] };

    // A stream whose head (and first events) are sent before the stop.
    const stream = new RawConnection(Number(port));
    stream.send('POST', `/v1/deepagents/threads/${streamed}/runs/stream`, { ...body, stream_mode: ['messages-tuple'] });
    await stream.until(/event: messages/);
    // A wait, answered only once its run ends: in flight when the stop comes.
    const wait = new RawConnection(Number(port));
    wait.send('POST', `/v1/deepagents/threads/${waited}/runs/wait`, body);
    for (;;) {
      const runs = await api.client.GET('/v1/deepagents/threads/{thread_id}/runs', { params: { path: { thread_id: waited } } });
      if ((runs.data ?? []).length > 0) break;
      await sleep(20);
    }

    child.child.kill('SIGTERM');
    await child.waitFor(/"msg":"draining requests and stopping"/);

    await wait.until(/^HTTP\/1\.1 200 [^]*\r\n\r\n[^]*"You said: word0/);
    expect(wait.received()).toMatch(/\r\nconnection: close\r\n/i);
    await stream.until(/\r\n0\r\n\r\n$/);
    expect(stream.received()).toContain('"finish_reason":"stop"');
    // Once answered, neither connection serves another request: the server has let it go.
    for (const connection of [wait, stream]) {
      const answered = connection.received();
      connection.send('GET', '/ok');
      await connection.closed;
      expect(connection.received()).toBe(answered);
    }
    expect(await child.exited).toBe(0);
    expect(child.output()).toContain('hangar stopped');
    child = undefined;
  }, 90_000);
});
