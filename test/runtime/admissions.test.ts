// Run starts go before new executions (src/runtime/admissions.ts), and a start with a free worker slot
// claims its run in the statement that records it (RunLifecycle.createOnThread): a real server on
// PostgreSQL with one worker slot holds executions while another start is in progress.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect } from '../../src/client/stream.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent, createThread, lastAiText, lastValues, start } from './support.js';

describe('starts go before executions', () => {
  let server: TestServer;
  let agentId: string;
  beforeAll(async () => {
    server = await startTestServer({ env: { HANGAR_WORKER_CONCURRENCY: '1' } });
    agentId = await createAgent(server);
  });
  afterAll(async () => {
    await server?.close();
  });

  /** Hold executions as a start in progress would (without the 1 s bound) until the result is called; calling it again is harmless. */
  const startInProgress = () => {
    const admissions = server.hangar.runtime.queue.admissions;
    admissions.maxDeferMs = 600_000;
    const leave = admissions.enter();
    return () => {
      leave();
      admissions.maxDeferMs = 1_000;
    };
  };

  const runOf = (threadId: string, runId: string) =>
    server.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}', { params: { path: { thread_id: threadId, run_id: runId } } });

  it('a start with a free slot claims its run at once, which executes once the starts in progress are accepted; a start without one is queued', async () => {
    const inProgress = startInProgress();
    try {
      // The slot is free: the statement that records the run also claims it for this worker.
      const firstThread = await createThread(server, agentId);
      const first = await start(server, firstThread, { agent_id: agentId, messages: [{ role: 'user', content: 'after you' }] });
      expect(first.status).toBe(200);
      expect((await first.events.next()).value).toMatchObject({ event: 'metadata', data: { run_id: first.runId, attempt: 1, status: 'running', queue_position: 0 } });
      const claimed = await runOf(firstThread, first.runId!);
      expect(claimed.data!.status).toBe('running');
      expect(server.hangar.workers!.size).toBe(1);
      // …but it does not execute while another start is in progress: no event log is open yet.
      expect(server.hangar.runtime.hub.activeWriters).toBe(0);

      // The one slot is taken: the next start's run waits in the queue and says so.
      const secondThread = await createThread(server, agentId);
      const second = await start(server, secondThread, { agent_id: agentId, messages: [{ role: 'user', content: 'and then me' }] });
      expect((await second.events.next()).value).toMatchObject({ event: 'metadata', data: { run_id: second.runId, attempt: 1, status: 'pending' } });
      expect((await runOf(secondThread, second.runId!)).data!.status).toBe('pending');

      inProgress();
      expect(lastAiText(lastValues(await collect(first)))).toBe('You said: after you');
      expect(lastAiText(lastValues(await collect(second)))).toBe('You said: and then me');
      const runs = await Promise.all([runOf(firstThread, first.runId!), runOf(secondThread, second.runId!)]);
      expect(runs.map((r) => r.data!.status)).toEqual(['success', 'success']);
    } finally {
      inProgress();
    }
  });

  it('a new connection counts as a start until its first request arrives (bounded)', async () => {
    const admissions = server.hangar.runtime.queue.admissions;
    admissions.maxDeferMs = 600_000;
    admissions.firstRequestHoldMs = 600_000;
    const { port, hostname } = new URL(server.url);
    // A client has connected and not sent its request yet (in a burst: not read yet).
    const silent = net.connect(Number(port), hostname);
    try {
      await new Promise<void>((resolve, reject) => silent.once('connect', resolve).once('error', reject));
      for (let i = 0; i < 500 && admissions.size === 0; i++) await new Promise((r) => setTimeout(r, 10));
      expect(admissions.size).toBe(1);
      const threadId = await createThread(server, agentId);
      const run = await start(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: 'behind a silent client' }] });
      expect((await run.events.next()).value).toMatchObject({ event: 'metadata', data: { status: 'running' } });
      // Claimed by its start, held back while the other connection's request has not arrived.
      expect(server.hangar.runtime.hub.activeWriters).toBe(0);
      // Its request arrives: the run executes.
      silent.write(`GET /ok HTTP/1.1\r\nHost: ${hostname}\r\n\r\n`);
      expect(lastAiText(lastValues(await collect(run)))).toBe('You said: behind a silent client');
      expect(admissions.size).toBe(0);

      // A connection that never sends anything holds executions back for firstRequestHoldMs only.
      admissions.firstRequestHoldMs = 50;
      const mute = net.connect(Number(port), hostname);
      try {
        await new Promise<void>((resolve, reject) => mute.once('connect', resolve).once('error', reject));
        const other = await start(server, await createThread(server, agentId), { agent_id: agentId, messages: [{ role: 'user', content: 'not for long' }] });
        expect(lastAiText(lastValues(await collect(other)))).toBe('You said: not for long');
        expect(mute.destroyed).toBe(false);
      } finally {
        mute.destroy();
      }
    } finally {
      silent.destroy();
      admissions.maxDeferMs = 1_000;
      admissions.firstRequestHoldMs = 250;
    }
  });

  it('a start does not claim its run while an older run waits in the queue: older runs go first', async () => {
    // An API-only server on the same database records a run its own process cannot execute: it waits
    // in the queue for this server's worker, whose claim is held while a start is in progress here.
    const api = await startTestServer({ databaseUrl: server.databaseUrl, dataDir: server.dataDir, adminKey: server.adminKey, env: { HANGAR_ROLE: 'api' } });
    const inProgress = startInProgress();
    try {
      const olderThread = await createThread(server, agentId);
      const older = await start(api, olderThread, { agent_id: agentId, messages: [{ role: 'user', content: 'first come' }] });
      expect((await older.events.next()).value).toMatchObject({ event: 'metadata', data: { status: 'pending' } });

      // This server's one slot is free, but the older run is claimable: the new run queues behind it.
      const newerThread = await createThread(server, agentId);
      const newer = await start(server, newerThread, { agent_id: agentId, messages: [{ role: 'user', content: 'first served' }] });
      expect((await newer.events.next()).value).toMatchObject({ event: 'metadata', data: { run_id: newer.runId, status: 'pending', queue_position: 1 } });
      expect((await runOf(newerThread, newer.runId!)).data!.status).toBe('pending');

      inProgress();
      expect(lastAiText(lastValues(await collect(older)))).toBe('You said: first come');
      expect(lastAiText(lastValues(await collect(newer)))).toBe('You said: first served');
    } finally {
      inProgress();
      await api.close();
    }
  });
});
