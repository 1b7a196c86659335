// The usage report and run metadata: callers cannot write the keys Hangar records (`usage`…), and the
// report does not fail on rows that hold what it cannot read (stored before those keys were refused).
// The server runs with HANGAR_ROLE=api (no worker), so created runs stay pending with their metadata.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent, createThread } from '../runtime/support.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ env: { HANGAR_ROLE: 'api' } });
});
afterAll(async () => {
  await server?.close();
});

describe('usage report', () => {
  it('refuses a run whose caller writes `usage` (or another key Hangar records) into its metadata; nothing is created', async () => {
    const agentId = await createAgent(server);
    const threadId = await createThread(server, agentId);
    for (const key of ['usage', 'attempt']) {
      const res = await startRun(agentId, threadId, { [key]: { model: 'forged', input_tokens: 1_000_000 } });
      expect(res.status).toBe(422);
      expect(JSON.stringify(await res.json())).toContain(`"metadata","${key}"`);
    }
    const runs = await server.client.GET('/v1/deepagents/threads/{thread_id}/runs', { params: { path: { thread_id: threadId } } });
    expect(runs.data).toHaveLength(0);
    const report = await server.client.GET('/v1/deepagents/usage', { params: { query: { agent_id: agentId } } });
    expect(report.data!.items).toEqual([]);
  });

  it('answers 200 when a run’s metadata holds a `usage` it cannot read as figures (written before such keys were refused)', async () => {
    const agentId = await createAgent(server);
    const threadId = await createThread(server, agentId);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await startRun(agentId, threadId, {});
      expect(res.status).toBe(200);
      ids.push(((await res.json()) as { run_id: string }).run_id);
    }
    // What an older Hangar stored when callers could write `usage` themselves.
    const db = new pg.Client({ connectionString: server.databaseUrl });
    await db.connect();
    try {
      const values = [
        { input_tokens: 'lots', output_tokens: { n: 1 }, model: 42 },
        { input_tokens: 1e40, output_tokens: -3 },
        { model: 'm-1', input_tokens: 7, output_tokens: 2.5 },
      ];
      for (const [i, usage] of values.entries()) await db.query(`UPDATE runs SET metadata = metadata || jsonb_build_object('usage', $2::jsonb) WHERE id = $1`, [ids[i], JSON.stringify(usage)]);
    } finally {
      await db.end();
    }

    const report = await server.client.GET('/v1/deepagents/usage', { params: { query: { agent_id: agentId } } });
    expect(report.response.status).toBe(200);
    expect(report.data!.items).toEqual([
      { agent_id: agentId, model: 'm-1', runs: 1, errors: 0, input_tokens: 7, output_tokens: 2 },
      { agent_id: agentId, model: 'unknown', runs: 2, errors: 0, input_tokens: 1e40, output_tokens: 0 },
    ]);
    expect(report.data!.totals).toMatchObject({ runs: 3, errors: 0, output_tokens: 2 });
  });
});

describe('usage of runs that ended before their agent was built', () => {
  it('counts a run cancelled while queued under its agent’s model, as a run that ran would be (it was "unknown")', async () => {
    // One agent with a direct model id, one naming a saved configuration: each counts under the
    // name its built model reports (the part after the provider).
    const saved = await server.client.POST('/v1/deepagents/model-configs', { body: { name: 'usage-cfg', model_id: 'scripted:echo' } });
    expect(saved.response.status).toBe(201);
    for (const [modelId, model] of [
      ['scripted:demo', 'demo'],
      ['usage-cfg', 'echo'],
    ] as const) {
      const agentId = await createAgent(server, { runtime: { model: { model_id: modelId } } });
      const threadId = await createThread(server, agentId);
      const res = await startRun(agentId, threadId, {});
      expect(res.status).toBe(200);
      const runId = ((await res.json()) as { run_id: string }).run_id;
      const cancel = await server.client.POST('/v1/deepagents/threads/{thread_id}/runs/{run_id}/cancel', { params: { path: { thread_id: threadId, run_id: runId } } });
      expect(cancel.response.status).toBeLessThan(300);
      const run = await server.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}', { params: { path: { thread_id: threadId, run_id: runId } } });
      expect(run.data!.status).toBe('interrupted');
      const report = await server.client.GET('/v1/deepagents/usage', { params: { query: { agent_id: agentId } } });
      expect(report.data!.items).toEqual([{ agent_id: agentId, model, runs: 1, errors: 0, input_tokens: 0, output_tokens: 0 }]);
    }
  });
});

function startRun(agentId: string, threadId: string, metadata: Record<string, unknown>): Promise<Response> {
  return fetch(`${server.url}/v1/deepagents/threads/${threadId}/runs`, {
    method: 'POST',
    headers: { 'x-api-key': server.adminKey, 'content-type': 'application/json' },
    body: JSON.stringify({ agent_id: agentId, input: { messages: [{ role: 'user', content: 'hi' }] }, metadata, multitask_strategy: 'enqueue' }),
  });
}
