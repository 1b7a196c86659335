// The hosted contract's `X-User-Timezone` header on agent create and update: the zone is stamped on
// the agent (`runtime.user_timezone`), and a run that sends no zone of its own tells the model the
// date and time there (read back from the run's trace, the model's exact input).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { createThread, run } from '../runtime/support.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

/** The local-time line of the system prompt the model got in the run's first model call. */
async function clockLine(agentId: string, userTimezone?: string): Promise<string> {
  const threadId = await createThread(server, agentId);
  const { stream } = await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: 'hi' }], ...(userTimezone ? { user_timezone: userTimezone } : {}) });
  const trace = await server.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}/trace', { params: { path: { thread_id: threadId, run_id: stream.runId! } } });
  const line = /The user's local date and time: [^"]*?\(([^)]+)\)\./.exec(JSON.stringify(trace.data));
  return line?.[1] ?? 'no clock line';
}

describe('X-User-Timezone', () => {
  it('stamps the zone on create; runs without a zone of their own use it, runs with one keep theirs', async () => {
    const res = await server.client.POST('/v1/deepagents/agents', {
      params: { header: { 'x-user-timezone': 'Asia/Tokyo' } },
      body: { name: 'tz-agent', runtime: { model: { model_id: 'scripted:demo' } } },
    });
    expect(res.response.status).toBe(201);
    expect(res.data!.runtime).toEqual({ model: { model_id: 'scripted:demo' }, user_timezone: 'Asia/Tokyo' });
    const agentId = res.data!.id;
    expect(await clockLine(agentId)).toBe('Asia/Tokyo');
    expect(await clockLine(agentId, 'Europe/Paris')).toBe('Europe/Paris');
    const files = (await server.client.GET('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: agentId }, query: { include_files: 'true' } } })).data!.files!;
    expect(JSON.parse(files['agent.json']!.content!).runtime.user_timezone).toBe('Asia/Tokyo');
  });

  it('an update with the header alone restamps the zone and keeps the model', async () => {
    const created = await server.client.POST('/v1/deepagents/agents', { body: { name: 'tz-later', runtime: { model: { model_id: 'scripted:demo' } } } });
    const agentId = created.data!.id;
    expect(await clockLine(agentId)).toBe('UTC');
    const updated = await server.client.PATCH('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: agentId }, header: { 'x-user-timezone': 'America/Los_Angeles' } }, body: {} });
    expect(updated.response.status).toBe(200);
    expect(updated.data!.runtime).toEqual({ model: { model_id: 'scripted:demo' }, user_timezone: 'America/Los_Angeles' });
    expect(await clockLine(agentId)).toBe('America/Los_Angeles');
  });

  it('stamps a raw agent.json in the hosted CLI’s form too, keeping its other keys', async () => {
    const created = await server.client.POST('/v1/deepagents/agents', { body: { name: 'tz-raw', runtime: { model: { model_id: 'scripted:demo' } } } });
    const agentJson = { name: 'tz-raw', model: 'scripted:demo', permissions: { identity: 'personal' } };
    const res = await server.client.PATCH('/v1/deepagents/agents/{agent_id}', {
      params: { path: { agent_id: created.data!.id }, header: { 'x-user-timezone': 'Australia/Sydney' }, query: { include_files: 'true' } },
      body: { files: { 'agent.json': { content: JSON.stringify(agentJson) } } },
    });
    expect(res.response.status, JSON.stringify(res.error)).toBe(200);
    expect(res.data!.runtime).toEqual({ model: { model_id: 'scripted:demo' }, user_timezone: 'Australia/Sydney' });
    expect(JSON.parse(res.data!.files!['agent.json']!.content!)).toEqual({
      name: 'tz-raw',
      permissions: { identity: 'personal' },
      runtime: { model: { model_id: 'scripted:demo' }, user_timezone: 'Australia/Sydney' },
    });
    expect(await clockLine(res.data!.id)).toBe('Australia/Sydney');
  });

  it('a zone that is not an IANA name is a 422 naming the header, and nothing is written', async () => {
    const res = await fetch(`${server.url}/v1/deepagents/agents`, {
      method: 'POST',
      headers: { 'x-api-key': server.adminKey, 'content-type': 'application/json', 'x-user-timezone': 'Mars/Olympus' },
      body: JSON.stringify({ name: 'tz-bad', runtime: { model: { model_id: 'scripted:demo' } } }),
    });
    expect(res.status).toBe(422);
    expect(JSON.stringify(await res.json()).toLowerCase()).toContain('x-user-timezone');
    const listed = (await server.client.GET('/v1/deepagents/agents', { params: { query: { name: 'tz-bad' } } })).data!;
    expect(listed.items).toEqual([]);
    const body = await fetch(`${server.url}/v1/deepagents/agents`, {
      method: 'POST',
      headers: { 'x-api-key': server.adminKey, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'tz-bad-body', runtime: { model: { model_id: 'scripted:demo' }, user_timezone: 'Nowhere' } }),
    });
    expect(body.status).toBe(422);
    expect(JSON.stringify(await body.json())).toContain('runtime.user_timezone');
  });
});
