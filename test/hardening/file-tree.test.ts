// Agent file trees from a red-team pass: two paths that differ only in letter case or Unicode
// normalisation name one file on macOS and Windows, so a clone or `hangar agents pull` there keeps one
// of them and a push from that folder changes the agent. Such a pair is refused (422 naming the file),
// whether it arrives in one request or the second path comes in a later update.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ env: { LOG_LEVEL: 'warn' } });
});
afterAll(async () => {
  await server?.close();
});

const runtime = { model: { model_id: 'scripted:echo' } };
const files = (...paths: string[]) => Object.fromEntries(paths.map((p) => [p, { content: `# ${p}\n` }]));

describe('paths that collide on case-insensitive or normalising file systems', () => {
  it.each([
    ['AGENTS.md and agents.md', ['AGENTS.md', 'agents.md'], 'agents.md'],
    ['a folder in two cases', ['notes/a.md', 'Notes/b.md'], 'notes/a.md'],
    ['a file and a folder', ['readme', 'README/x.md'], 'readme'],
    ['composed and decomposed é', ['caf\u00e9.md', 'cafe\u0301.md'], 'caf\u00e9.md'],
  ])('refuses %s in one request, naming the file', async (_what, paths, named) => {
    const res = await server.client.POST('/v1/deepagents/agents', { body: { name: `c-${Math.random().toString(36).slice(2)}`, runtime, files: files(...paths) } });
    expect(res.response.status).toBe(422);
    const error = res.error as { errors: { loc: string[]; msg: string }[] };
    expect(error.errors[0]!.loc).toEqual(['body', 'files', named]);
    expect(error.errors[0]!.msg).toMatch(/differ only in letter case or Unicode normalisation/);
  });

  it('refuses an update that adds the second path, and writes nothing', async () => {
    const created = await server.client.POST('/v1/deepagents/agents', { body: { name: 'collide-later', runtime, files: files('docs/notes.md') } });
    expect(created.response.status).toBe(201);
    const res = await server.client.PATCH('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: created.data!.id } }, body: { files: files('Docs/other.md') } });
    expect(res.response.status).toBe(422);
    expect((res.error as { errors: { loc: string[] }[] }).errors[0]!.loc).toEqual(['body', 'files', 'Docs/other.md']);
    const after = await server.client.GET('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: created.data!.id } } });
    expect(after.data!.revision).toBe(created.data!.revision);
    // Renaming in one update (delete one spelling, add the other) is no collision.
    const renamed = await server.client.PATCH('/v1/deepagents/agents/{agent_id}', {
      params: { path: { agent_id: created.data!.id } },
      body: { files: { 'docs/notes.md': { content: null }, 'docs/NOTES.md': { content: 'renamed\n' } } },
    });
    expect(renamed.response.status).toBe(200);
  });
});
