// A thread's conversation survives a server restart: checkpoints live in PostgreSQL.
import { Writable } from 'node:stream';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { startHangar } from '../../src/server.js';
import { collect, joinRun } from '../../src/client/stream.js';
import { startTestServer } from '../support/server.js';
import { createAgent, createThread, lastAiText, lastValues, run, start } from './support.js';

describe('restart', () => {
  it('continues a thread after the server is stopped and started again on the same database', async () => {
    const first = await startTestServer();
    const agentId = await createAgent(first);
    const threadId = await createThread(first, agentId);
    await run(first, threadId, { agent_id: agentId, messages: [{ role: 'user', content: 'before the restart' }] });
    await first.close();

    const config = loadConfig({
      flags: { port: 0, databaseUrl: first.databaseUrl, dataDir: first.dataDir },
      env: { HANGAR_BOOTSTRAP_API_KEY: first.adminKey, LOG_LEVEL: 'silent' },
    });
    const hangar = await startHangar(config, { logDestination: new Writable({ write: (_c, _e, done) => done() }), announce: () => {} });
    try {
      const again = { ...first, url: hangar.url, hangar };
      const { events } = await run(again, threadId, { agent_id: agentId, messages: [{ role: 'user', content: 'after the restart' }] });
      const values = lastValues(events);
      expect(lastAiText(values)).toBe('You said: after the restart');
      const humans = (values.messages as { type: string; content: string }[]).filter((m) => m.type === 'human').map((m) => m.content);
      expect(humans).toEqual(['before the restart', 'after the restart']);
    } finally {
      await hangar.close();
    }
  });

  it.each(['inline', 'thread'])('stopping the server stops runs that outlast the drain timeout: nothing is left running (executor %s)', async (executor) => {
    const server = await startTestServer({ env: { HANGAR_DRAIN_TIMEOUT_MS: '300', HANGAR_EXECUTOR: executor } });
    let closed = false;
    try {
      const config = await server.client.POST('/v1/deepagents/model-configs', {
        body: { name: 'very-slow', model_id: 'scripted:very-slow', parameters: { delay_ms: 1000 } },
      });
      expect(config.response.status).toBe(201);
      const agentId = await createAgent(server, { runtime: { model: { model_id: 'very-slow' } } });
      const threadId = await createThread(server, agentId);
      const stream = await start(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: 'a reply that takes about twenty seconds to stream out word by word here' }] });
      expect((await stream.events.next()).value).toMatchObject({ event: 'metadata' });
      // The client reads on while the server stops: its stream ends cleanly with the run's end (an
      // `error` event saying why), not cut off before the run is stopped.
      const rest = collect(stream).then(
        (events) => ({ events, failure: undefined }),
        (error: unknown) => ({ events: [] as { event: string; data: unknown }[], failure: String(error) }),
      );
      await server.close();
      closed = true;
      const read = await rest;
      expect(read.failure).toBeUndefined();
      expect(read.events.at(-1)).toMatchObject({ event: 'error', data: { message: 'the server is shutting down' } });

      const db = new pg.Client({ connectionString: server.databaseUrl });
      await db.connect();
      try {
        const runRow = (await db.query('SELECT status, error FROM runs WHERE id = $1', [stream.runId])).rows[0];
        expect(runRow.status).toBe('error');
        expect(runRow.error.message).toContain('shutting down');
        expect((await db.query('SELECT status FROM threads WHERE id = $1', [threadId])).rows[0].status).toBe('error');
        const last = (await db.query('SELECT event FROM run_events WHERE run_id = $1 ORDER BY seq DESC LIMIT 1', [stream.runId])).rows[0];
        expect(last.event).toBe('error');
      } finally {
        await db.end();
      }
      // The worker's log line says so, as JSON a log pipeline keeps whole: no key twice (pino wrote
      // the runtime's `component` and the worker's as two "component" keys of one object).
      const lines = server.logs().split('\n').filter((l) => l.startsWith('{'));
      const failed = lines.find((l) => l.includes('"run failed"') && l.includes(stream.runId!));
      expect(failed, server.logs()).toBeDefined();
      for (const line of lines) expect(line.match(/"component":/g)?.length ?? 0, line).toBeLessThanOrEqual(1);
    } finally {
      if (!closed) await server.close();
    }
  });

  it('a run whose worker died (lease expired) and used its attempts is failed, its log closed with an error, its thread freed', async () => {
    // One attempt allowed: the expired run is failed instead of retried (retries: test/approvals/crash.test.ts).
    const server = await startTestServer({ env: { HANGAR_RUN_LEASE_MS: '1500', HANGAR_RUN_MAX_ATTEMPTS: '1' } });
    try {
      const agentId = await createAgent(server);
      const threadId = await createThread(server, agentId);
      // What a worker killed mid-run leaves behind: a running run whose lease nobody renews.
      const db = new pg.Client({ connectionString: server.databaseUrl });
      await db.connect();
      let runId: string;
      try {
        await db.query(`UPDATE threads SET status = 'busy' WHERE id = $1`, [threadId]);
        runId = (
          await db.query(
            `INSERT INTO runs (workspace_id, thread_id, agent_id, revision, status, input, principal, attempt, lease_owner, lease_expires_at)
             SELECT workspace_id, id, agent_id, 'dead', 'running', '{}', principal, 1, 'worker-that-died', now() - interval '1 second'
             FROM threads WHERE id = $1 RETURNING id`,
            [threadId],
          )
        ).rows[0].id as string;
        await db.query(`INSERT INTO run_events (run_id, seq, event, data) VALUES ($1, 1, 'metadata', $2)`, [runId, JSON.stringify({ run_id: runId, attempt: 1 })]);
      } finally {
        await db.end();
      }
      const events = await collect(await joinRun({ baseUrl: server.url, apiKey: server.adminKey, threadId, runId }));
      expect(events.map((e) => [e.id, e.event])).toEqual([
        ['1', 'metadata'],
        ['2', 'error'],
      ]);
      expect(events[1]!.data).toMatchObject({ error: 'LeaseExpired' });
      const record = await server.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}', { params: { path: { thread_id: threadId, run_id: runId } } });
      expect(record.data).toMatchObject({ status: 'error', error: { error: 'LeaseExpired' } });
      const thread = await server.client.GET('/v1/deepagents/threads/{thread_id}', { params: { path: { thread_id: threadId } } });
      expect(thread.data!.status).toBe('error');
      const next = await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: 'still here' }] });
      expect(lastAiText(lastValues(next.events))).toBe('You said: still here');
    } finally {
      await server.close();
    }
  });
});
