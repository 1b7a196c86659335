// A run stopped in the middle (multitask `interrupt`, a cancel) keeps what it did: the thread's next run
// starts from the stopped run's last checkpoint, even when that checkpoint is slow to be written.
// LangChain rejects an aborted graph stream at once, while LangGraph is still writing the run's last
// checkpoint (with the default `exit` durability, its only one). Before the worker waited for it, it
// freed the thread at once: the next run could start from the state before, and the late checkpoint
// was then refused by the stopped run's lease (so the stopped run's question vanished from the thread),
// as CI saw once under load. Here the checkpoint table is locked while the first run is stopped, which
// holds that write back for as long as the test wants, on any machine.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect, type RunStream } from '../../src/client/stream.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent, createThread, lastAiText, lastValues, start } from './support.js';

const LONG = Array.from({ length: 60 }, (_, i) => `word${i}`).join(' ');

let server: TestServer;
let admin: pg.Client;
let agentId: string;

/** Read a stream up to its first token and leave it open. */
async function untilToken(stream: RunStream): Promise<void> {
  for (;;) {
    const next = await stream.events.next();
    if (next.done) throw new Error('the stream ended before a token');
    if (next.value.event === 'messages') return;
  }
}

async function runStatus(threadId: string, runId: string): Promise<string> {
  const { data } = await server.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}', { params: { path: { thread_id: threadId, run_id: runId } } });
  return data!.status;
}

async function humans(threadId: string): Promise<string[]> {
  const { data, response } = await server.client.GET('/v1/deepagents/threads/{thread_id}/state', { params: { path: { thread_id: threadId } } });
  expect(response.status).toBe(200);
  const messages = (data!.values as { messages: { type: string; content: string }[] }).messages;
  return messages.filter((m) => m.type === 'human').map((m) => (m.content === LONG ? 'LONG' : m.content));
}

/** Run `during` with writes to the checkpoint table held back (reads go on), then let them go. */
async function checkpointsLocked<T>(during: () => Promise<T>): Promise<T> {
  const { rows } = await admin.query<{ name: string }>(`SELECT quote_ident(schemaname) || '.' || quote_ident(tablename) AS name FROM pg_tables WHERE tablename = 'checkpoints'`);
  expect(rows).toHaveLength(1);
  await admin.query('BEGIN');
  await admin.query(`LOCK TABLE ${rows[0]!.name} IN EXCLUSIVE MODE`);
  try {
    return await during();
  } finally {
    await admin.query('COMMIT');
  }
}

/** What `read` says every 100 ms for 1.5 s: long enough for a worker to take a run, or a cancel to answer. */
async function watchFor(read: () => Promise<string>): Promise<string[]> {
  const seen = new Set<string>();
  for (let i = 0; i < 15; i++) {
    await new Promise((r) => setTimeout(r, 100));
    seen.add(await read());
  }
  return [...seen];
}

/** A thread with a run under way (its first token streamed). */
async function runUnderWay(): Promise<{ threadId: string; first: RunStream }> {
  const threadId = await createThread(server, agentId);
  const first = await start(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: LONG }], stream_mode: ['messages-tuple'] });
  expect(first.status).toBe(200);
  await untilToken(first);
  return { threadId, first };
}

// Inline, and on the executor thread (the graph runs there, the worker's slot and lease here).
describe.each(['inline', 'thread'])('a run stopped while its last checkpoint is slow to write (executor %s)', (executor) => {
  beforeAll(async () => {
    server = await startTestServer({ env: { HANGAR_EXECUTOR: executor } });
    admin = new pg.Client({ connectionString: server.databaseUrl });
    await admin.connect();
    const config = await server.client.POST('/v1/deepagents/model-configs', { body: { name: 'slow', model_id: 'scripted:slow', parameters: { delay_ms: 20 } } });
    expect(config.response.status).toBe(201);
    agentId = await createAgent(server, { runtime: { model: { model_id: 'slow' } } });
  });
  afterAll(async () => {
    await admin?.end();
    await server?.close();
  });

  it('multitask interrupt: the next run waits for that checkpoint and starts from it', async () => {
    const { threadId, first } = await runUnderWay();
    const { next, during } = await checkpointsLocked(async () => {
      const next = await start(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: 'next' }], multitask_strategy: 'interrupt' });
      expect(next.status).toBe(200);
      expect(await runStatus(threadId, first.runId!)).toBe('interrupted');
      return { next, during: await watchFor(() => runStatus(threadId, next.runId!)) };
    });
    // The next run did not start while the stopped run's checkpoint could not be written.
    expect(during).toEqual(['pending']);
    const events = await collect(next);
    expect(lastAiText(lastValues(events))).toBe('You said: next');
    expect(await runStatus(threadId, next.runId!)).toBe('success');
    // The stopped run's question is still in the thread, before the next one.
    expect(await humans(threadId)).toEqual(['LONG', 'next']);
    await collect(first);
  }, 60_000);

  it('a cancel with wait=true answers once that checkpoint is written; the thread keeps what the run did', async () => {
    const { threadId, first } = await runUnderWay();
    let answered = false;
    const cancel = server.client
      .POST('/v1/deepagents/threads/{thread_id}/runs/{run_id}/cancel', { params: { path: { thread_id: threadId, run_id: first.runId! }, query: { wait: 'true' } } })
      .finally(() => (answered = true));
    const during = await checkpointsLocked(() => watchFor(async () => (answered ? 'answered' : 'waiting')));
    expect(during).toEqual(['waiting']);
    expect((await cancel).data?.status).toBe('interrupted');
    expect(await humans(threadId)).toEqual(['LONG']);
    await collect(first);
  }, 60_000);
});
