// LangGraph `crons` through the official @langchain/langgraph-sdk Client, on the same schedules.
import { Client } from '@langchain/langgraph-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent, createThread } from '../runtime/support.js';
import { eventually } from './support.js';

let server: TestServer;
let client: Client;

beforeAll(async () => {
  server = await startTestServer();
  client = new Client({ apiUrl: `${server.url}/v1/deepagents`, defaultHeaders: { 'X-Api-Key': server.adminKey } });
});
afterAll(async () => {
  await server?.close();
});

describe('LangGraph crons', () => {
  it('create, search, count, update and delete map onto schedules', async () => {
    const agentId = await createAgent(server);
    const cron = await client.crons.create(agentId, {
      schedule: '0 7 * * 1',
      timezone: 'Asia/Tokyo',
      input: { messages: [{ role: 'human', content: 'weekly summary' }] },
      metadata: { owner: 'ops' },
    });
    expect(cron).toMatchObject({ assistant_id: agentId, thread_id: null, schedule: '0 7 * * 1', timezone: 'Asia/Tokyo', enabled: true, metadata: { owner: 'ops' } });
    // 07:00 on Monday in Tokyo is 22:00 on Sunday in UTC.
    const next = new Date(cron.next_run_date!);
    expect([next.getUTCDay(), next.getUTCHours(), next.getUTCMinutes()]).toEqual([0, 22, 0]);

    // The same record through the REST surface.
    const schedule = await server.client.GET('/v1/deepagents/schedules/{schedule_id}', { params: { path: { schedule_id: cron.cron_id } } });
    expect(schedule.data).toMatchObject({ agent_id: agentId, input: { messages: [{ role: 'user', content: 'weekly summary' }] }, thread: 'new' });

    const found = await client.crons.search({ assistantId: agentId });
    expect(found.map((c) => c.cron_id)).toEqual([cron.cron_id]);
    expect(await client.crons.count({ assistantId: agentId })).toBe(1);
    expect(await client.crons.count({ metadata: { owner: 'nobody' } })).toBe(0);

    const updated = await client.crons.update(cron.cron_id, { schedule: '30 6 * * *', enabled: false });
    expect(updated).toMatchObject({ schedule: '30 6 * * *', enabled: false, next_run_date: null });
    expect((await client.crons.search({ assistantId: agentId, enabled: true }))).toHaveLength(0);

    await client.crons.delete(cron.cron_id);
    expect(await client.crons.count({ assistantId: agentId })).toBe(0);
    await expect(client.crons.delete(cron.cron_id)).rejects.toThrow(/404/);
  });

  it('search sorts by each field LangGraph offers', async () => {
    const batch = `sort-${Date.now()}`;
    const crons: { cron_id: string; assistant_id: string }[] = [];
    for (let i = 0; i < 4; i++) {
      const agentId = await createAgent(server);
      crons.push(await client.crons.create(agentId, { schedule: `0 ${i} * * *`, input: { messages: [{ role: 'human', content: 'x' }] }, metadata: { batch }, enabled: false }));
    }
    const sorted = (key: 'cron_id' | 'assistant_id') => crons.map((c) => c[key]).sort();
    const byAgent = await client.crons.search({ metadata: { batch }, sortBy: 'assistant_id', sortOrder: 'asc' });
    expect(byAgent.map((c) => c.assistant_id)).toEqual(sorted('assistant_id'));
    const byId = await client.crons.search({ metadata: { batch }, sortBy: 'cron_id', sortOrder: 'desc' });
    expect(byId.map((c) => c.cron_id)).toEqual(sorted('cron_id').reverse());
  });

  it('a thread cron may go on a thread that has had no run yet (LangGraph threads start unbound)', async () => {
    const agentId = await createAgent(server);
    const thread = await client.threads.create();
    const cron = await client.crons.createForThread(thread.thread_id, agentId, { schedule: '* * * * * *', input: { messages: [{ type: 'human', content: 'first' }] } });
    expect(cron).toMatchObject({ thread_id: thread.thread_id, assistant_id: agentId });
    // Its first run binds the thread to the agent, as any first run does.
    const runs = await eventually(async () => {
      const list = await client.runs.list(thread.thread_id);
      return list.some((r) => r.status === 'success') ? list : undefined;
    });
    await client.crons.delete(cron.cron_id);
    expect(runs.every((r) => r.assistant_id === agentId)).toBe(true);
  });

  it('a thread cron runs on its thread, visible through runs.list', async () => {
    const agentId = await createAgent(server);
    const threadId = await createThread(server, agentId);
    const cron = await client.crons.createForThread(threadId, agentId, { schedule: '* * * * * *', input: { messages: [{ type: 'human', content: 'ping' }] }, multitaskStrategy: 'enqueue' });
    expect(cron.thread_id).toBe(threadId);
    const runs = await eventually(async () => {
      const list = await client.runs.list(threadId);
      return list.filter((r) => r.status === 'success').length >= 2 ? list : undefined;
    });
    await client.crons.delete(cron.cron_id);
    expect(runs.length).toBeGreaterThanOrEqual(2);
    const gone = await server.client.GET('/v1/deepagents/schedules/{schedule_id}/runs', { params: { path: { schedule_id: cron.cron_id } } });
    expect(gone.response.status).toBe(404);
    const state = await client.threads.getState(threadId);
    const messages = (state.values as { messages: { type: string; content: string }[] }).messages;
    expect(messages.filter((m) => m.type === 'ai').at(-1)!.content).toBe('You said: ping');
  });

  it('refuses what it cannot do, with the field named', async () => {
    const agentId = await createAgent(server);
    await expect(client.crons.create(agentId, { schedule: 'every day', input: { messages: [{ role: 'user', content: 'x' }] } })).rejects.toThrow(/schedule/);
    await expect(client.crons.create(agentId, { schedule: '* * * * *', input: { messages: [{ role: 'user', content: 'x' }] }, onRunCompleted: 'delete' })).rejects.toThrow(/on_run_completed/);
    await expect(client.crons.create(agentId, { schedule: '* * * * *', input: { messages: [{ role: 'robot', content: 'x' }] } })).rejects.toThrow(/role/);
    await expect(client.crons.create(agentId, { schedule: '* * * * *', interruptBefore: ['tools'], input: { messages: [{ role: 'user', content: 'x' }] } })).rejects.toThrow(/interrupt_before/);
    await expect(client.crons.createForThread('00000000-0000-4000-8000-000000000000', agentId, { schedule: '* * * * *', input: { messages: [{ role: 'user', content: 'x' }] } })).rejects.toThrow(/404/);
    expect(await client.crons.count({ assistantId: agentId })).toBe(0);
  });
});
