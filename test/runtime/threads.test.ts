// Threads and run lifecycle end to end: CRUD, search and count, state and history, one active run
// per thread (409), a deleted agent (502), client disconnects, and bad run bodies that start nothing.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect, joinRun } from '../../src/client/stream.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent, createThread, lastAiText, lastValues, run, start } from './support.js';

let server: TestServer;
let agentId: string;
let slowAgentId: string;

beforeAll(async () => {
  // Short heartbeats so that a slowed run shows them; one retry so that a dead provider fails fast.
  server = await startTestServer({ env: { HANGAR_HEARTBEAT_MS: '50', HANGAR_MODEL_MAX_RETRIES: '1', HANGAR_MODEL_TIMEOUT_MS: '2000' } });
  agentId = await createAgent(server);
  // A saved model configuration slows the scripted model down so that a run is still going while
  // the test acts; the test waits on events, never on time.
  const config = await server.client.POST('/v1/deepagents/model-configs', {
    body: { name: 'slow-scripted', model_id: 'scripted:slow', parameters: { delay_ms: 150 } },
  });
  expect(config.response.status).toBe(201);
  slowAgentId = await createAgent(server, { runtime: { model: { model_id: 'slow-scripted' } } });
});
afterAll(async () => {
  await server?.close();
});

async function runsOf(threadId: string) {
  return (await server.client.GET('/v1/deepagents/threads/{thread_id}/runs', { params: { path: { thread_id: threadId } } })).data!;
}

describe('threads', () => {
  it('create echoes options in metadata; get, search, count, state, history, runs, delete', async () => {
    const created = await server.client.POST('/v1/deepagents/threads', {
      body: { agent_id: agentId, options: { test_run: true }, metadata: { project: 'hangar-threads-test' } },
    });
    expect(created.response.status).toBe(201);
    const t = created.data!;
    expect(t).toMatchObject({ agent_id: agentId, status: 'idle' });
    expect(t.metadata).toMatchObject({ project: 'hangar-threads-test', is_test_run: true, skip_memory_write_protection: false });

    const got = await server.client.GET('/v1/deepagents/threads/{thread_id}', { params: { path: { thread_id: t.id } } });
    expect(got.data).toEqual(t);

    const found = await server.client.POST('/v1/deepagents/threads/search', { body: { metadata: { project: 'hangar-threads-test' }, limit: 10, offset: 0 } });
    expect(found.data!.map((x) => x.id)).toEqual([t.id]);
    const byAgent = await server.client.POST('/v1/deepagents/threads/search', { body: { agent_id: agentId, status: 'idle', limit: 100, offset: 0 } });
    expect(byAgent.data!.map((x) => x.id)).toContain(t.id);
    const counted = await server.client.POST('/v1/deepagents/threads/count', { body: { metadata: { project: 'hangar-threads-test' } } });
    expect(counted.data).toBe(1);

    const empty = await server.client.GET('/v1/deepagents/threads/{thread_id}/state', { params: { path: { thread_id: t.id } } });
    expect(empty.data).toMatchObject({ values: {}, next: [], checkpoint: null });

    const { stream } = await run(server, t.id, { agent_id: agentId, messages: [{ role: 'user', content: 'remember me' }] });
    const state = await server.client.GET('/v1/deepagents/threads/{thread_id}/state', { params: { path: { thread_id: t.id } } });
    expect(state.data!.next).toEqual([]);
    expect(lastAiText(state.data!.values)).toBe('You said: remember me');
    expect(state.data!.checkpoint!.thread_id).toBe(t.id);
    const history = await server.client.GET('/v1/deepagents/threads/{thread_id}/history', { params: { path: { thread_id: t.id }, query: { limit: 3 } } });
    expect(history.data!.length).toBeGreaterThan(0);
    expect(history.data!.length).toBeLessThanOrEqual(3);
    expect(history.data![0]!.checkpoint).toEqual(state.data!.checkpoint);
    expect(history.data![0]!.values).toEqual(state.data!.values);
    expect((await runsOf(t.id)).map((r) => [r.run_id, r.status])).toEqual([[stream.runId, 'success']]);

    const del = await server.client.DELETE('/v1/deepagents/threads/{thread_id}', { params: { path: { thread_id: t.id } } });
    expect(del.response.status).toBe(204);
    const gone = await server.client.GET('/v1/deepagents/threads/{thread_id}', { params: { path: { thread_id: t.id } } });
    expect(gone.response.status).toBe(404);
    expect(gone.error).toMatchObject({ code: 'thread_not_found' });
    const again = await server.client.DELETE('/v1/deepagents/threads/{thread_id}', { params: { path: { thread_id: t.id } } });
    expect(again.response.status).toBe(404);
  });

  it("a thread's checkpoints go in the statement that deletes it, whoever deletes it", async () => {
    const admin = new pg.Client({ connectionString: server.databaseUrl });
    await admin.connect();
    try {
      const stored = async (threadId: string) => {
        const { rows } = await admin.query<{ n: number }>(
          `SELECT (SELECT count(*) FROM langgraph.checkpoints WHERE thread_id = $1) + (SELECT count(*) FROM langgraph.checkpoint_blobs WHERE thread_id = $1)
             + (SELECT count(*) FROM langgraph.checkpoint_writes WHERE thread_id = $1) AS n`,
          [threadId],
        );
        return Number(rows[0]!.n);
      };
      const [byApi, bySql] = [await createThread(server, agentId), await createThread(server, agentId)];
      for (const threadId of [byApi, bySql]) {
        await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: 'remember me' }] });
        expect(await stored(threadId)).toBeGreaterThan(0);
      }
      expect((await server.client.DELETE('/v1/deepagents/threads/{thread_id}', { params: { path: { thread_id: byApi } } })).response.status).toBe(204);
      expect(await stored(byApi)).toBe(0);
      // A statement of its own (an operator's, or a process that stopped right after it): nothing of
      // the thread's state is left behind, for a thread made again with its id to read.
      await admin.query('DELETE FROM threads WHERE id = $1', [bySql]);
      expect(await stored(bySql)).toBe(0);
    } finally {
      await admin.end();
    }
  });

  it('search and count work without a body', async () => {
    await createThread(server, agentId);
    for (const path of ['search', 'count']) {
      const res = await fetch(`${server.url}/v1/deepagents/threads/${path}`, { method: 'POST', headers: { 'x-api-key': server.adminKey } });
      expect(res.status).toBe(200);
      const body = (await res.json()) as unknown;
      if (path === 'search') expect(Array.isArray(body) && body.length > 0 && body.length <= 10).toBe(true);
      else expect(body).toBeGreaterThan(0);
    }
  });

  it('a thread for an unknown agent is a 404; another workspace cannot see a thread', async () => {
    const bad = await server.client.POST('/v1/deepagents/threads', { body: { agent_id: '00000000-0000-4000-8000-000000000000' } });
    expect(bad.response.status).toBe(404);
    expect(bad.error).toMatchObject({ code: 'agent_not_found' });
    const threadId = await createThread(server, agentId);
    const other = await server.createWorkspace('threads-other');
    const peek = await other.client.GET('/v1/deepagents/threads/{thread_id}', { params: { path: { thread_id: threadId } } });
    expect(peek.response.status).toBe(404);
  });
});

describe('run lifecycle', () => {
  it('a second run while one is active is a 409; a client disconnect does not stop the run', async () => {
    const threadId = await createThread(server, slowAgentId);
    const first = await start(server, threadId, { agent_id: slowAgentId, messages: [{ role: 'user', content: 'a slow answer with several words' }], stream_mode: ['messages-tuple', 'values'] });
    expect(first.status).toBe(200);
    const firstEvent = await first.events.next();
    expect(firstEvent.value).toMatchObject({ event: 'metadata' });

    const busyThread = await server.client.GET('/v1/deepagents/threads/{thread_id}', { params: { path: { thread_id: threadId } } });
    expect(busyThread.data!.status).toBe('busy');
    const second = await start(server, threadId, { agent_id: slowAgentId, messages: [{ role: 'user', content: 'me too' }] });
    expect(second.status).toBe(409);
    expect(second.error).toMatchObject({ code: 'thread_busy', status: 409, type: 'conflict' });
    const deleteBusy = await server.client.DELETE('/v1/deepagents/threads/{thread_id}', { params: { path: { thread_id: threadId } } });
    expect(deleteBusy.response.status).toBe(409);
    expect(deleteBusy.error).toMatchObject({ code: 'thread_busy' });
    // Nothing is pending while it runs: resolving says the thread is busy, not that nothing is pending.
    const resolveBusy = await server.client.POST('/v1/deepagents/threads/{thread_id}/resolve-interrupt', { params: { path: { thread_id: threadId } } });
    expect(resolveBusy.response.status).toBe(409);
    expect(resolveBusy.error).toMatchObject({ code: 'thread_busy', detail: expect.stringContaining('active run') });
    const resumeBusy = await start(server, threadId, { agent_id: slowAgentId, command: { resume: { decisions: [{ type: 'approve' }] } } } as never);
    expect(resumeBusy.status).toBe(409);
    expect(resumeBusy.error).toMatchObject({ code: 'thread_busy', detail: expect.stringContaining('no pending interrupt to resume') });

    // Walk away mid-run, then follow the run from another connection until it ends.
    await first.events.return(undefined);
    await first.response.body?.cancel().catch(() => {});
    const joined = await joinRun({ baseUrl: server.url, apiKey: server.adminKey, threadId, runId: first.runId! });
    const events = await collect(joined);
    expect(events[0]).toMatchObject({ event: 'metadata', id: '1' });
    expect(lastAiText(lastValues(events))).toBe('You said: a slow answer with several words');
    const ids = events.map((e) => Number(e.id));
    expect(ids).toEqual(ids.map((_, i) => i + 1));
    // 150 ms between tokens and 50 ms heartbeats: the idle stream carried `: heartbeat` comments.
    expect(joined.heartbeats()).toBeGreaterThan(0);

    const after = await server.client.GET('/v1/deepagents/threads/{thread_id}', { params: { path: { thread_id: threadId } } });
    expect(after.data!.status).toBe('idle');
    expect((await runsOf(threadId)).map((r) => r.status)).toEqual(['success']);
  });

  it('a joined stream with Last-Event-ID replays exactly what came after it', async () => {
    const threadId = await createThread(server, agentId);
    const { stream, events } = await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: 'x y z' }], stream_mode: ['messages-tuple'] });
    const rest = await collect(await joinRun({ baseUrl: server.url, apiKey: server.adminKey, threadId, runId: stream.runId!, lastEventId: '3' }));
    expect(rest).toEqual(events.slice(3));
  });

  it('a run on a thread whose agent was deleted is a 502; the thread stays readable', async () => {
    const doomed = await createAgent(server);
    const threadId = await createThread(server, doomed);
    await run(server, threadId, { agent_id: doomed, messages: [{ role: 'user', content: 'before' }] });
    const del = await server.client.DELETE('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: doomed } } });
    expect(del.response.status).toBe(204);
    const refused = await start(server, threadId, { agent_id: doomed, messages: [{ role: 'user', content: 'after' }] });
    expect(refused.status).toBe(502);
    expect(refused.error).toMatchObject({ code: 'agent_deleted', status: 502 });
    const thread = await server.client.GET('/v1/deepagents/threads/{thread_id}', { params: { path: { thread_id: threadId } } });
    expect(thread.data!.status).toBe('idle');
    const state = await server.client.GET('/v1/deepagents/threads/{thread_id}/state', { params: { path: { thread_id: threadId } } });
    expect(lastAiText(state.data!.values)).toBe('You said: before');
    expect((await runsOf(threadId)).length).toBe(1);
    // Its state cannot be written either, and says why as a run does (it was a 404 "no agent").
    const write = await server.client.POST('/v1/deepagents/threads/{thread_id}/state', { params: { path: { thread_id: threadId } }, body: { values: { todos: [] } } as never });
    expect(write.response.status).toBe(502);
    expect(write.error).toMatchObject({ code: 'agent_deleted' });
  });

  it('a failing model ends the run with an error event and the thread in error', async () => {
    // An agent naming a saved model configuration that was deleted after (a provider no server can run is refused on save).
    const config = await server.client.POST('/v1/deepagents/model-configs', { body: { name: 'gone-model', model_id: 'scripted:echo' } });
    const broken = await createAgent(server, { runtime: { model: { model_id: 'gone-model' } } });
    await server.client.DELETE('/v1/deepagents/model-configs/{model_config_id}', { params: { path: { model_config_id: config.data!.id } } });
    const threadId = await createThread(server, broken);
    const { stream, events } = await run(server, threadId, { agent_id: broken, messages: [{ role: 'user', content: 'hi' }] });
    expect(events[0]!.event).toBe('metadata');
    const error = events.at(-1)!;
    expect(error.event).toBe('error');
    expect(error.data).toMatchObject({ error: expect.any(String), message: expect.stringContaining('gone-model') });
    const record = await server.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}', { params: { path: { thread_id: threadId, run_id: stream.runId! } } });
    expect(record.data!.status).toBe('error');
    const thread = await server.client.GET('/v1/deepagents/threads/{thread_id}', { params: { path: { thread_id: threadId } } });
    expect(thread.data!.status).toBe('error');
    // Its usage counts under the model its agent names (no model was built; it said "unknown").
    const usage = await server.client.GET('/v1/deepagents/usage', { params: { query: { agent_id: broken } } });
    expect(usage.data!.items).toEqual([{ agent_id: broken, model: 'gone-model', runs: 1, errors: 1, input_tokens: 0, output_tokens: 0 }]);
  });

  it('a dead model provider fails the run quickly with a clear error event', async () => {
    // Stand-in for an unreachable provider: an OpenAI-compatible base URL on a port nobody listens on.
    const probe = await import('node:net').then((net) => net.createServer());
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as { port: number }).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const config = await server.client.POST('/v1/deepagents/model-configs', {
      body: { name: 'dead-provider', model_id: 'openai:gpt-4o-mini', parameters: { base_url: `http://127.0.0.1:${port}/v1` }, api_key: 'sk-test-not-real' },
    });
    expect(config.response.status).toBe(201);
    const deadAgent = await createAgent(server, { runtime: { model: { model_id: 'dead-provider' } } });
    const threadId = await createThread(server, deadAgent);
    const { events } = await run(server, threadId, { agent_id: deadAgent, messages: [{ role: 'user', content: 'hello?' }] });
    const error = events.at(-1)!;
    expect(error.event).toBe('error');
    expect((error.data as { message: string }).message).toMatch(/connect|connection|ECONNREFUSED/i);
    const thread = await server.client.GET('/v1/deepagents/threads/{thread_id}', { params: { path: { thread_id: threadId } } });
    expect(thread.data!.status).toBe('error');
  });

  const badBodies: [string, Record<string, unknown>, (string | number)[]][] = [
    ['missing agent_id', { messages: [{ role: 'user', content: 'hi' }] }, ['body', 'agent_id']],
    ['empty messages', { agent_id: 'AGENT', messages: [] }, ['body', 'messages']],
    ['unknown stream mode', { agent_id: 'AGENT', messages: [{ role: 'user', content: 'hi' }], stream_mode: ['events'] }, ['body', 'stream_mode', 0]],
    ['bad role', { agent_id: 'AGENT', messages: [{ role: 'robot', content: 'hi' }] }, ['body', 'messages', 0, 'role']],
    ['content not a string', { agent_id: 'AGENT', messages: [{ role: 'user', content: 5 }] }, ['body', 'messages', 0, 'content']],
    ['another agent', { agent_id: '00000000-0000-4000-8000-000000000000', messages: [{ role: 'user', content: 'hi' }] }, ['body', 'agent_id']],
  ];

  it.each(badBodies)('%s is a 422 and starts nothing', async (_name, body, loc) => {
    const threadId = await createThread(server, agentId);
    const sent = body.agent_id === 'AGENT' ? { ...body, agent_id: agentId } : body;
    // Sent by hand: the typed helper would not let these bodies through.
    const res = await fetch(`${server.url}/v1/deepagents/threads/${threadId}/runs/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': server.adminKey },
      body: JSON.stringify(sent),
    });
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({ code: 'validation_failed', errors: [expect.objectContaining({ loc })] });
    expect(await runsOf(threadId)).toEqual([]);
    const thread = await server.client.GET('/v1/deepagents/threads/{thread_id}', { params: { path: { thread_id: threadId } } });
    expect(thread.data!.status).toBe('idle');
  });

  it('invalid JSON is a 400 and an unknown thread a 404', async () => {
    const threadId = await createThread(server, agentId);
    const raw = await fetch(`${server.url}/v1/deepagents/threads/${threadId}/runs/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': server.adminKey },
      body: '{"agent_id": ',
    });
    expect(raw.status).toBe(400);
    const missing = await start(server, '00000000-0000-4000-8000-000000000000', { agent_id: agentId, messages: [{ role: 'user', content: 'hi' }] });
    expect(missing.status).toBe(404);
    expect(missing.error).toMatchObject({ code: 'thread_not_found' });
  });
});
