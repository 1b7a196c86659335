// The usage report over runs whose metadata the caller wrote: it must not fail on what it cannot read.
// The server runs with HANGAR_ROLE=api (no worker), so created runs stay pending with their metadata.
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
  it('answers 200 when a run’s own metadata holds a `usage` it cannot read as figures', async () => {
    const agentId = await createAgent(server);
    const threadId = await createThread(server, agentId);
    const startRun = async (metadata: Record<string, unknown>) => {
      const res = await fetch(`${server.url}/v1/deepagents/threads/${threadId}/runs`, {
        method: 'POST',
        headers: { 'x-api-key': server.adminKey, 'content-type': 'application/json' },
        body: JSON.stringify({ agent_id: agentId, input: { messages: [{ role: 'user', content: 'hi' }] }, metadata, multitask_strategy: 'enqueue' }),
      });
      expect(res.status).toBe(200);
    };
    await startRun({ usage: { input_tokens: 'lots', output_tokens: { n: 1 }, model: 42 } });
    await startRun({ usage: { input_tokens: 1e40, output_tokens: -3 } });
    await startRun({ usage: { model: 'm-1', input_tokens: 7, output_tokens: 2.5 } });

    const report = await server.client.GET('/v1/deepagents/usage', { params: { query: { agent_id: agentId } } });
    expect(report.response.status).toBe(200);
    expect(report.data!.items).toEqual([
      { agent_id: agentId, model: 'm-1', runs: 1, errors: 0, input_tokens: 7, output_tokens: 2 },
      { agent_id: agentId, model: 'unknown', runs: 2, errors: 0, input_tokens: 1e40, output_tokens: 0 },
    ]);
    expect(report.data!.totals).toMatchObject({ runs: 3, errors: 0, output_tokens: 2 });
  });
});
