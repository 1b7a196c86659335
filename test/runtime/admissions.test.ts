// Run starts go before new executions (src/runtime/admissions.ts): a real server on PostgreSQL holds
// its workers' claim while a start is in progress, and claims once it is done.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect } from '../../src/client/stream.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent, createThread, lastAiText, lastValues, start } from './support.js';

describe('workers claim after starts being accepted', () => {
  let server: TestServer;
  let agentId: string;
  beforeAll(async () => {
    server = await startTestServer();
    agentId = await createAgent(server);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('a stream gets its metadata while a start is in progress; the run is claimed once it is done', async () => {
    const admissions = server.hangar.runtime.queue.admissions;
    admissions.maxDeferMs = 600_000;
    const inProgress = admissions.enter();
    try {
      const threadId = await createThread(server, agentId);
      const stream = await start(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: 'after you' }] });
      expect(stream.status).toBe(200);
      const first = await stream.events.next();
      expect(first.value).toMatchObject({ event: 'metadata', data: { run_id: stream.runId, status: 'pending' } });
      // The worker holds its claim while the other start is in progress.
      const run = await server.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}', { params: { path: { thread_id: threadId, run_id: stream.runId! } } });
      expect(run.data!.status).toBe('pending');
      expect(server.hangar.workers!.size).toBe(0);
      inProgress();
      const events = await collect(stream);
      expect(lastAiText(lastValues(events))).toBe('You said: after you');
    } finally {
      inProgress();
      admissions.maxDeferMs = 1_000;
    }
  });
});
