// `hangar schedules …` as a user types it, against a real server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runHangar } from '../support/cli.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent } from '../runtime/support.js';
import { eventually, ticksOf } from './support.js';

let server: TestServer;
let env: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer();
  env = { HANGAR_URL: server.url, HANGAR_API_KEY: server.adminKey };
});
afterAll(async () => {
  await server?.close();
});

describe('hangar schedules', () => {
  it('create prints the next run times; runs fire; list, runs and delete work by name and id', async () => {
    await createAgent(server, { name: 'reporter' });
    const created = await runHangar(['schedules', 'create', 'reporter', '*/2 * * * * *', '--message', 'status?', '--timezone', 'Europe/Paris'], env);
    expect(created.code, created.stderr).toBe(0);
    const id = /Created schedule ([0-9a-f-]{36})/.exec(created.stdout)![1]!;
    const times = [...created.stdout.matchAll(/^\s+(\d{4}-\d\d-\d\dT[\d:.]+Z)/gm)].map((m) => Date.parse(m[1]!));
    expect(times).toHaveLength(5);
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBe(2000);
    expect(created.stdout).toContain('Europe/Paris');

    await eventually(async () => ((await ticksOf(server, id)).some((t) => t.run?.status === 'success') ? true : undefined));
    const list = await runHangar(['schedules', 'list', '--agent', 'reporter'], env);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toContain(id);
    expect(list.stdout).toContain('*/2 * * * * *');
    const runs = await runHangar(['schedules', 'runs', id], env);
    expect(runs.stdout).toMatch(/started\s+[0-9a-f-]{36}/);

    const deleted = await runHangar(['schedules', 'delete', id], env);
    expect(deleted.stdout).toContain(`Deleted schedule ${id}`);
    const again = await runHangar(['schedules', 'delete', id], env);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain('no schedule');
  }, 180_000);

  it('list names each schedule\'s agent as it was created, and says when that agent was deleted', async () => {
    const agentId = await createAgent(server, { name: 'weekly-digest' });
    const res = await server.client.POST('/v1/deepagents/schedules', { body: { agent_id: agentId, schedule: '0 9 * * 1', messages: [{ role: 'user', content: 'digest' }], enabled: false } });
    const id = res.data!.id;
    const row = async () => {
      const list = await runHangar(['schedules', 'list', '--agent', agentId], env);
      expect(list.code, list.stderr).toBe(0);
      return list.stdout.split('\n').find((l) => l.startsWith(id))!;
    };
    expect(await row()).toMatch(new RegExp(`^${id}\\s+weekly-digest\\s+0 9 \\* \\* 1\\s`));
    await server.client.DELETE('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: agentId } } });
    expect(await row()).toContain(`(deleted agent ${agentId})`);
  });

  it('list shows every schedule, not only the first page', async () => {
    const agentId = await createAgent(server, { name: 'many' });
    const ids = new Set<string>();
    for (let i = 0; i < 101; i++) {
      const res = await server.client.POST('/v1/deepagents/schedules', { body: { agent_id: agentId, schedule: `${i % 60} 9 * * *`, messages: [{ role: 'user', content: 'x' }], enabled: false } });
      ids.add(res.data!.id);
    }
    const listed = await runHangar(['schedules', 'list', '--agent', 'many', '--json'], env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(new Set((JSON.parse(listed.stdout) as { id: string }[]).map((s) => s.id))).toEqual(ids);
    const table = await runHangar(['schedules', 'list', '--agent', 'many'], env);
    for (const id of ids) expect(table.stdout).toContain(id);
  }, 120_000);

  it('create takes the busy-thread strategy and the end time the API takes; a strategy it does not know is refused before any request', async () => {
    await createAgent(server, { name: 'bounded' });
    const created = await runHangar(['schedules', 'create', 'bounded', '0 9 * * *', '--message', 'hi', '--timezone', 'UTC', '--multitask-strategy', 'enqueue', '--end-time', '2999-01-01T00:00:00Z'], env);
    expect(created.code, created.stderr).toBe(0);
    const id = /Created schedule ([0-9a-f-]{36})/.exec(created.stdout)![1]!;
    const stored = (await server.client.GET('/v1/deepagents/schedules/{schedule_id}', { params: { path: { schedule_id: id } } })).data!;
    expect(stored.multitask_strategy).toBe('enqueue');
    expect(Date.parse(stored.end_time!)).toBe(Date.parse('2999-01-01T00:00:00Z'));

    const unknown = await runHangar(['schedules', 'create', 'bounded', '0 9 * * *', '--message', 'hi', '--multitask-strategy', 'queue'], env);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('enqueue');
    const all = (await server.client.GET('/v1/deepagents/schedules')).data!.items.filter((s) => s.agent_id === stored.agent_id);
    expect(all.map((s) => s.id)).toEqual([id]);
  }, 120_000);

  it('says what is wrong with a bad expression', async () => {
    const bad = await runHangar(['schedules', 'create', 'reporter', 'every minute', '--message', 'x'], env);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('schedule');
    expect(bad.stderr).toContain('5 fields');
  }, 120_000);
});
