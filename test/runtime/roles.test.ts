// An API-only server and a worker-only server on one database: the run is executed by the worker
// process and its events reach the API's client through the run log and PostgreSQL NOTIFY.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect, joinRun } from '../../src/client/stream.js';
import type { Hangar } from '../../src/server.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent, createThread, lastAiText, lastValues, run, startWorker } from './support.js';

let api: TestServer;
let worker: Hangar;

beforeAll(async () => {
  api = await startTestServer({ env: { HANGAR_ROLE: 'api' } });
  worker = await startWorker(api);
});
afterAll(async () => {
  await worker?.close();
  await api?.close();
});

describe('api and worker roles', () => {
  it('a run started on the API server is executed by the worker server and streamed back', async () => {
    const agentId = await createAgent(api);
    const threadId = await createThread(api, agentId);
    const { stream, events } = await run(api, threadId, {
      agent_id: agentId,
      messages: [{ role: 'user', content: 'across processes' }],
      stream_mode: ['values', 'messages-tuple'],
    });
    expect(events[0]).toMatchObject({ event: 'metadata', data: { run_id: stream.runId } });
    expect(lastAiText(lastValues(events))).toBe('You said: across processes');
    const ids = events.map((e) => Number(e.id));
    expect(ids).toEqual(ids.map((_, i) => i + 1));
    // The worker server holds no HTTP client of this run; the API server read everything from the log.
    const replay = await collect(await joinRun({ baseUrl: worker.url, apiKey: api.adminKey, threadId, runId: stream.runId! }));
    expect(replay).toEqual(events);
  });
});
