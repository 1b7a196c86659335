// The agents service as the runtime uses it: loadTree at the head and at an older revision, 404s after delete.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Caller } from '../../src/core/caller.js';
import { HangarError } from '../../src/core/errors.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let caller: Caller;

beforeAll(async () => {
  server = await startTestServer();
  caller = (await server.hangar.services.workspaces.authenticate(server.adminKey))!;
});
afterAll(async () => {
  await server?.close();
});

describe('agents service', () => {
  it('loadTree returns the files and definition of the head, or of an older revision', async () => {
    const agents = server.hangar.services.agents;
    const created = await agents.create(caller, {
      name: 'svc',
      runtime: { model: { model_id: 'scripted:echo' } },
      instructions: 'v1',
      skills: [{ name: 'notes', description: 'Take notes', instructions: 'Write them down.', files: { 'template.md': '# Notes\n' } }],
      subagents: [{ name: 'critic', description: 'Critic', instructions: 'Criticise.', model_id: 'scripted:critic' }],
    });
    const head = await agents.loadTree(caller.workspaceId, created.id);
    expect(head.revision).toMatch(/^[0-9a-f]{40}$/);
    expect(head.revision).toBe(created.revision);
    expect(head.definition.instructions).toBe('v1');
    expect(head.definition.skills).toEqual([{ name: 'notes', description: 'Take notes', instructions: 'Write them down.', files: { 'template.md': '# Notes\n' } }]);
    expect(head.definition.subagents[0]).toMatchObject({ name: 'critic', model_id: 'scripted:critic' });
    expect(head.files['skills/notes/template.md']).toBe('# Notes\n');

    const updated = await agents.update(caller, created.id, { instructions: 'v2' });
    expect(updated.revision).not.toBe(created.revision);
    expect((await agents.loadTree(caller.workspaceId, created.id)).definition.instructions).toBe('v2');
    const old = await agents.loadTree(caller.workspaceId, created.id, created.revision);
    expect(old.definition.instructions).toBe('v1');
    expect(old.revision).toBe(created.revision);

    await agents.delete(caller, created.id);
    const missing = await agents.loadTree(caller.workspaceId, created.id).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(HangarError);
    expect((missing as HangarError).code).toBe('agent_not_found');
  });

  it('loadTree of an unknown id or another workspace is agent_not_found', async () => {
    const agents = server.hangar.services.agents;
    const created = await agents.create(caller, { name: 'mine', runtime: { model: { model_id: 'scripted:echo' } } });
    const other = await server.hangar.services.workspaces.createWorkspace('svc-other', {});
    for (const [ws, id] of [
      [other.id, created.id],
      [caller.workspaceId, '00000000-0000-4000-8000-000000000000'],
      [caller.workspaceId, 'not-a-uuid'],
    ] as const) {
      const error = await agents.loadTree(ws, id).catch((e: unknown) => e);
      expect((error as HangarError).code).toBe('agent_not_found');
    }
  });
});
