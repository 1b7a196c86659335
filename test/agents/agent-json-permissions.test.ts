// `permissions` in a raw agent.json (the hosted CLI's layout), written through the API's `files` (an
// update; a create names the agent with the `name` field, which owns agent.json): they
// are the agent's permissions, as the `permissions` field sets them; invalid ones are a 422 naming the
// file, and nothing is written.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

const agentJson = (name: string, permissions?: unknown) => ({ content: JSON.stringify({ name, model: 'scripted:demo', ...(permissions === undefined ? {} : { permissions }) }) });

async function read(agentId: string) {
  return (await server.client.GET('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: agentId } } })).data!;
}

describe('permissions in a raw agent.json', () => {
  it('are the agent’s permissions on update; an agent.json without them keeps the agent’s', async () => {
    const raw = await server.client.POST('/v1/deepagents/agents', {
      body: { name: 'perm-raw', runtime: { model: { model_id: 'scripted:demo' } } },
    });
    const rawId = raw.data!.id;
    const updated = await server.client.PATCH('/v1/deepagents/agents/{agent_id}', {
      params: { path: { agent_id: rawId } },
      body: { files: { 'agent.json': agentJson('perm-raw', { identity: 'shared', visibility: 'user', tenant_access_level: 'write' }) } },
    });
    expect(updated.response.status, JSON.stringify(updated.error)).toBe(200);
    expect(updated.data!.permissions).toEqual({ identity: 'shared', visibility: 'user', tenant_access_level: 'write' });
    expect((await read(rawId)).permissions).toEqual({ identity: 'shared', visibility: 'user', tenant_access_level: 'write' });
    const listed = (await server.client.GET('/v1/deepagents/agents', { params: { query: { name: 'perm-raw' } } })).data!.items;
    expect(listed[0]!.permissions).toMatchObject({ identity: 'shared', visibility: 'user' });

    // An agent.json without permissions leaves them as they are.
    const again = await server.client.PATCH('/v1/deepagents/agents/{agent_id}', {
      params: { path: { agent_id: rawId } },
      body: { files: { 'agent.json': agentJson('perm-raw') } },
    });
    expect(again.data!.permissions).toEqual({ identity: 'shared', visibility: 'user', tenant_access_level: 'write' });
  });

  it('invalid ones are a 422 naming agent.json and the field, and nothing is written', async () => {
    const created = await server.client.POST('/v1/deepagents/agents', { body: { name: 'perm-bad', runtime: { model: { model_id: 'scripted:demo' } } } });
    const agentId = created.data!.id;
    const before = await read(agentId);
    for (const [permissions, named] of [
      [{ identity: 'everyone' }, 'permissions.identity'],
      [{ visibility: 'world' }, 'permissions.visibility'],
      [{ tenant_access_level: 'admin' }, 'permissions.tenant_access_level'],
      ['shared', 'permissions'],
      [['shared'], 'permissions'],
    ] as const) {
      const res = await server.client.PATCH('/v1/deepagents/agents/{agent_id}', {
        params: { path: { agent_id: agentId } },
        body: { files: { 'agent.json': agentJson('perm-bad', permissions) } },
      });
      expect({ permissions, status: res.response.status }).toEqual({ permissions, status: 422 });
      const text = JSON.stringify(res.error);
      expect(text).toContain('agent.json');
      expect(text).toContain(named);
    }
    const after = await read(agentId);
    expect(after.revision).toBe(before.revision);
    expect(after.permissions).toEqual(before.permissions);
  });

  it('the field and the file may both say the same; different is a 422 naming both', async () => {
    const created = await server.client.POST('/v1/deepagents/agents', { body: { name: 'perm-both', runtime: { model: { model_id: 'scripted:demo' } } } });
    const agentId = created.data!.id;
    const same = await server.client.PATCH('/v1/deepagents/agents/{agent_id}', {
      params: { path: { agent_id: agentId } },
      body: { permissions: { identity: 'shared' }, files: { 'agent.json': agentJson('perm-both', { identity: 'shared' }) } },
    });
    expect(same.response.status, JSON.stringify(same.error)).toBe(200);
    expect(same.data!.permissions).toMatchObject({ identity: 'shared' });
    const differ = await server.client.PATCH('/v1/deepagents/agents/{agent_id}', {
      params: { path: { agent_id: agentId } },
      body: { permissions: { identity: 'personal' }, files: { 'agent.json': agentJson('perm-both', { identity: 'shared', visibility: 'user' }) } },
    });
    expect(differ.response.status).toBe(422);
    expect(JSON.stringify(differ.error)).toMatch(/permissions.*agent\.json/);
    expect((await read(agentId)).permissions).toMatchObject({ identity: 'shared', visibility: 'tenant' });
  });
});
