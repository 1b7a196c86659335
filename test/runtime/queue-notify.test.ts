// A burst of starts on a process whose worker slots are all spoken for tells the other processes
// (NOTIFY on the queue channel), so their idle workers claim at once instead of at their next poll.
// Observed as another process would: a LISTEN on the queue channel of the same database.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect } from '../../src/client/stream.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent, createThread, start } from './support.js';

let server: TestServer;
let listener: pg.Client;
const notified: string[] = [];

beforeAll(async () => {
  server = await startTestServer({ env: { HANGAR_WORKER_CONCURRENCY: '1' } });
  listener = new pg.Client({ connectionString: server.databaseUrl });
  await listener.connect();
  listener.on('notification', (n) => notified.push(n.channel));
  await listener.query('LISTEN hangar_runs_queued');
});
afterAll(async () => {
  await listener?.end();
  await server?.close();
});

describe('queue wake-ups across processes', () => {
  it('starts beyond the free worker slots are announced to other processes, even before any claim', async () => {
    const agentId = await createAgent(server);
    const threads = await Promise.all([1, 2, 3].map(() => createThread(server, agentId)));
    // Three starts at once on a process with one slot: its worker claims only after the starts are
    // accepted, so "a free slot" must count the runs already promised to it.
    const streams = await Promise.all(threads.map((threadId) => start(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: 'hi' }] })));
    const results = await Promise.all(streams.map((s) => collect(s)));
    for (const events of results) expect(events.at(-1)?.event).not.toBe('error');
    // Another process's LISTEN heard at least one wake-up (one slot here, three runs).
    await listener.query('SELECT 1'); // notifications sent before this round trip have arrived
    expect(notified.filter((c) => c === 'hangar_runs_queued').length).toBeGreaterThanOrEqual(1);
  });
});
