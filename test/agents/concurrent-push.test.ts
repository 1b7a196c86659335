// Two people pushing one agent: `hangar agents push` computes its change from the revision it read,
// and sends that revision as If-Match, so an update that lands in between is never silently merged
// into (or overwritten by) a push that did not see it. The HTTP API offers the same precondition.
import { mkdir, mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pushAgent, readAgentFolder } from '../../src/cli/agents.js';
import { createHangarClient } from '../../src/client/index.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let work: string;

beforeAll(async () => {
  server = await startTestServer();
  work = await mkdtemp(path.join(os.tmpdir(), 'hangar-push-race-'));
});
afterAll(async () => {
  await server?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

const agentJson = (name: string) => `${JSON.stringify({ name, description: '', runtime: { model: { model_id: 'anthropic:claude-sonnet-4-6' } } }, null, 2)}\n`;

async function remoteFiles(id: string): Promise<Record<string, string>> {
  const res = await server.client.GET('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: id }, query: { include_files: 'true' } } });
  return Object.fromEntries(Object.entries(res.data!.files ?? {}).map(([p, f]) => [p, f.content ?? '']));
}

describe('concurrent updates of one agent', () => {
  it('PATCH with If-Match updates only while that revision is the head', async () => {
    const created = await server.client.POST('/v1/deepagents/agents', { body: { name: 'guarded', runtime: { model: { model_id: 'anthropic:claude-sonnet-4-6' } } } });
    const id = created.data!.id;
    const first = created.data!.revision;
    const ok = await server.client.PATCH('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: id }, header: { 'if-match': `"${first}"` } }, body: { description: 'one' } });
    expect(ok.response.status).toBe(200);

    const stale = await server.client.PATCH('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: id }, header: { 'if-match': `"${first}"` } }, body: { description: 'two' } });
    expect(stale.response.status).toBe(412);
    expect(stale.error).toMatchObject({ code: 'agent_revision_mismatch' });
    const after = await server.client.GET('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: id } } });
    expect(after.data).toMatchObject({ description: 'one', revision: ok.data!.revision });
    const revisions = await server.client.GET('/v1/deepagents/agents/{agent_id}/revisions', { params: { path: { agent_id: id } } });
    expect(revisions.data!.items).toHaveLength(2);

    const any = await server.client.PATCH('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: id }, header: { 'if-match': '*' } }, body: { description: 'three' } });
    expect(any.response.status).toBe(200);
  });

  it('a push that raced another update is refused whole; pushing again makes the agent the folder', async () => {
    const dir = path.join(work, 'raced');
    await mkdir(path.join(dir, 'notes'), { recursive: true });
    await writeFile(path.join(dir, 'agent.json'), agentJson('raced'));
    await writeFile(path.join(dir, 'AGENTS.md'), 'Be brief.\n');
    await writeFile(path.join(dir, 'notes/mine.md'), 'mine\n');
    const { id } = await pushAgent(server.client, dir);

    // Locally: delete notes/mine.md. Meanwhile, between this push's read and its write, a colleague
    // adds notes/theirs.md.
    await unlink(path.join(dir, 'notes/mine.md'));
    let interfered = false;
    const racing = createHangarClient({
      baseUrl: server.url,
      apiKey: server.adminKey,
      fetch: async (input, init) => {
        const request = new Request(input, init);
        const response = await fetch(request);
        if (!interfered && request.method === 'GET' && new URL(request.url).pathname === `/v1/deepagents/agents/${id}`) {
          interfered = true;
          const theirs = await server.client.PATCH('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: id } }, body: { files: { 'notes/theirs.md': { content: 'theirs\n' } } } });
          expect(theirs.response.status).toBe(200);
        }
        return response;
      },
    });
    await expect(pushAgent(racing, dir)).rejects.toThrow(/updated by someone else/);
    expect(interfered).toBe(true);
    // Nothing of the push landed: the colleague's file is there, and so is the one deleted locally.
    expect(Object.keys(await remoteFiles(id)).filter((p) => p.startsWith('notes/')).sort()).toEqual(['notes/mine.md', 'notes/theirs.md']);

    await pushAgent(server.client, dir);
    expect(await remoteFiles(id)).toEqual(await readAgentFolder(dir));
  });
});
