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

  it.each(['inline', 'thread'])('stopping the only server hands back runs that outlast the drain timeout: the next start finishes them (executor %s)', async (executor) => {
    const env = { HANGAR_DRAIN_TIMEOUT_MS: '300', HANGAR_EXECUTOR: executor };
    const server = await startTestServer({ env });
    let closed = false;
    try {
      const config = await server.client.POST('/v1/deepagents/model-configs', {
        body: { name: 'very-slow', model_id: 'scripted:very-slow', parameters: { delay_ms: 150 } },
      });
      expect(config.response.status).toBe(201);
      const agentId = await createAgent(server, { runtime: { model: { model_id: 'very-slow' } } });
      const threadId = await createThread(server, agentId);
      const question = 'a reply that takes a few seconds to stream out word by word here';
      const stream = await start(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: question }] });
      const first = (await stream.events.next()).value;
      expect(first).toMatchObject({ event: 'metadata' });
      // The client reads on while the server stops: its stream ends cleanly, not cut off, and
      // without an error: the run is not over.
      const rest = collect(stream).then(
        (events) => ({ events, failure: undefined }),
        (error: unknown) => ({ events: [] as { event: string; data: unknown; id: string | undefined }[], failure: String(error) }),
      );
      await server.close();
      closed = true;
      const read = await rest;
      expect(read.failure).toBeUndefined();
      expect(read.events.filter((e) => e.event === 'error')).toEqual([]);

      // No other worker: the run waits in the queue, its thread held for it.
      const db = new pg.Client({ connectionString: server.databaseUrl });
      await db.connect();
      try {
        const runRow = (await db.query('SELECT status, error, metadata, lease_owner FROM runs WHERE id = $1', [stream.runId])).rows[0];
        expect(runRow).toMatchObject({ status: 'pending', error: null, lease_owner: null, metadata: { attempt: 1, handed_back: true } });
        expect((await db.query('SELECT status FROM threads WHERE id = $1', [threadId])).rows[0].status).toBe('busy');
      } finally {
        await db.end();
      }
      // The worker's log line says so, as JSON a log pipeline keeps whole: no key twice (pino wrote
      // the runtime's `component` and the worker's as two "component" keys of one object).
      const lines = server.logs().split('\n').filter((l) => l.startsWith('{'));
      const handed = lines.find((l) => l.includes('run handed back to the queue') && l.includes(stream.runId!));
      expect(handed, server.logs()).toBeDefined();
      for (const line of lines) expect(line.match(/"component":/g)?.length ?? 0, line).toBeLessThanOrEqual(1);

      // The next start continues the run from its checkpoint; its client joins again and reads on.
      const again = await startTestServer({ databaseUrl: server.databaseUrl, dataDir: server.dataDir, adminKey: server.adminKey, env });
      try {
        const seen = [first!, ...read.events];
        const joined = await collect(await joinRun({ baseUrl: again.url, apiKey: again.adminKey, threadId, runId: stream.runId!, lastEventId: seen.at(-1)!.id! }));
        const ids = [...seen, ...joined].map((e) => Number(e.id));
        expect(ids).toEqual(Array.from({ length: ids.length }, (_, i) => i + 1));
        expect(joined[0]).toMatchObject({ event: 'metadata', data: { attempt: 2 } });
        const values = lastValues(joined);
        expect(lastAiText(values)).toBe(`You said: ${question}`);
        expect((values.messages as { type: string }[]).map((m) => m.type)).toEqual(['human', 'ai']);
        const record = await again.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}', { params: { path: { thread_id: threadId, run_id: stream.runId! } } });
        expect(record.data).toMatchObject({ status: 'success', metadata: { attempt: 2 } });
      } finally {
        await again.close();
      }
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
