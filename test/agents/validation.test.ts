// Bad agent inputs: each a clear 4xx naming the problem, with nothing written. Plus workspace isolation
// and concurrent updates.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
const TOOLS_URL = 'https://tools.example.com/mcp';
const model = { model: { model_id: 'anthropic:claude-sonnet-4-6' } };

beforeAll(async () => {
  server = await startTestServer();
  await server.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'Tools', url: TOOLS_URL } });
});
afterAll(async () => {
  await server?.close();
});

async function counts(): Promise<{ agents: number; revisions: number; objects: number }> {
  const client = new pg.Client({ connectionString: server.databaseUrl });
  await client.connect();
  try {
    const q = async (table: string) => Number((await client.query(`SELECT count(*) FROM ${table}`)).rows[0].count);
    return { agents: await q('agents'), revisions: await q('agent_revisions'), objects: await q('git_objects') };
  } finally {
    await client.end();
  }
}

type Body = Record<string, unknown>;
const base: Body = { name: 'bad', runtime: model };
const huge = 'x'.repeat(1024 * 1024 + 1);

const cases: [string, Body, number, string, RegExp][] = [
  ['path traversal', { ...base, files: { '../etc/passwd': { content: 'x' } } }, 422, 'validation_failed', /files\.\.\.\/etc\/passwd: the path has a "\.\." segment/],
  ['absolute path', { ...base, files: { '/etc/passwd': { content: 'x' } } }, 422, 'validation_failed', /is absolute/],
  ['NUL in a path', { ...base, files: { 'a\0b': { content: 'x' } } }, 422, 'validation_failed', /NUL/],
  ['.git in a path', { ...base, files: { '.git/config': { content: 'x' } } }, 422, 'validation_failed', /\.git/],
  ['.git. in a path (NTFS spelling of .git)', { ...base, files: { 'a/.git./config': { content: 'x' } } }, 422, 'validation_failed', /files\.a\/\.git\.\/config: .*names "\.git"/],
  ['git~1 in a path (NTFS short name of .git)', { ...base, files: { 'git~1/hooks/pre-commit': { content: 'x' } } }, 422, 'validation_failed', /names "\.git"/],
  ['a file name longer than file systems allow', { ...base, files: { [`notes/${'é'.repeat(128)}.md`]: { content: 'x' } } }, 422, 'validation_failed', /is 259 bytes long; file systems allow 255/],
  ['a file and a folder of one name', { ...base, files: { docs: { content: 'x' }, 'docs/a.md': { content: 'y' } } }, 422, 'validation_failed', /docs is both a file and a folder/],
  ['duplicate skill names', { ...base, skills: [{ name: 's', instructions: 'a' }, { name: 's', instructions: 'b' }] }, 422, 'validation_failed', /skills\.1\.name: skill name "s" is used twice/],
  ['bad skill name', { ...base, skills: [{ name: '../up' }] }, 422, 'validation_failed', /not a valid skill name/],
  ['duplicate subagent names', { ...base, subagents: [{ name: 'c' }, { name: 'c' }] }, 422, 'validation_failed', /subagent name "c" is used twice/],
  ['SKILL.md without front matter', { ...base, files: { 'skills/s/SKILL.md': { content: '# Skill\nno front matter' } } }, 422, 'validation_failed', /skills\/s\/SKILL\.md: must start with YAML front matter/],
  ['oversized file', { ...base, instructions: huge }, 413, 'agent_file_too_large', /AGENTS\.md is 1048577 bytes; the per-file limit is 1048576/],
  ['unknown tool server url', { ...base, tools: { tools: [{ name: 't', mcp_server_url: 'https://unknown.example.com/mcp' }] } }, 422, 'validation_failed', /no tool server is registered at https:\/\/unknown\.example\.com\/mcp/],
  ['unknown subagent tool server', { ...base, subagents: [{ name: 'c', tools: { tools: [{ name: 't', mcp_server_url: 'https://nope.example.com' }] } }] }, 422, 'validation_failed', /subagents\.0\.tools\.tools\.0\.mcp_server_url/],
  ['interrupt key with no tool', { ...base, tools: { tools: [], interrupt_config: { [`${TOOLS_URL}::`]: true } } }, 422, 'validation_failed', /a tool name must follow/],
  ['interrupt key with no url', { ...base, tools: { tools: [], interrupt_config: { 'tools::search': true } } }, 422, 'validation_failed', /must be the tool server's http\(s\) URL/],
  ['interrupt key with spaces', { ...base, tools: { tools: [], interrupt_config: { 'two words': true } } }, 422, 'validation_failed', /neither/],
  ['interrupt value not boolean', { ...base, tools: { tools: [], interrupt_config: { search: 'yes' } } }, 422, 'validation_failed', /interrupt_config/],
  ['model id with empty model', { ...base, runtime: { model: { model_id: 'anthropic:' } } }, 422, 'validation_failed', /runtime\.model\.model_id: "anthropic:" is not of the form <provider>:<model_id>/],
  ['model id with a bad provider', { ...base, runtime: { model: { model_id: 'Open AI:gpt' } } }, 422, 'validation_failed', /not of the form/],
  ['model id with a provider this server cannot run', { ...base, runtime: { model: { model_id: 'nosuchprovider:model' } } }, 422, 'validation_failed', /runtime\.model\.model_id: unknown provider "nosuchprovider"; known providers: scripted, openai, azure_openai, anthropic, google-genai, ollama/],
  ['subagent model id with a provider this server cannot run', { ...base, subagents: [{ name: 'c', model_id: 'groq:llama-3.3-70b' }] }, 422, 'validation_failed', /subagents\.0\.model_id: unknown provider "groq"; known providers: /],
  ['unknown saved model configuration', { ...base, runtime: { model: { model_id: 'my-config' } } }, 422, 'validation_failed', /"my-config" has no colon, so it names a saved model configuration/],
  ['bad subagent model id', { ...base, subagents: [{ name: 'c', model_id: 'nothing-saved' }] }, 422, 'validation_failed', /subagents\.0\.model_id/],
  ['no runtime', { name: 'bad' }, 422, 'validation_failed', /runtime\.model\.model_id: field required/],
  ['blank name', { ...base, name: '  ' }, 422, 'validation_failed', /name/],
  ['typed field and its file', { ...base, instructions: 'a', files: { 'AGENTS.md': { content: 'b' } } }, 422, 'validation_failed', /"instructions" and the file AGENTS\.md both set AGENTS\.md/],
  ['unknown backend type', { ...base, backend: { type: 'docker' } }, 422, 'validation_failed', /backend\.type: "docker" is not a backend type/],
  ['unknown sandbox scope', { ...base, backend: { type: 'sandbox', sandbox_config: { scope: 'workspace' } } }, 422, 'validation_failed', /backend\.sandbox_config\.scope: "workspace" is not a scope/],
  ['negative idle ttl', { ...base, backend: { type: 'sandbox', sandbox_config: { idle_ttl_seconds: -1 } } }, 422, 'validation_failed', /backend\.sandbox_config\.idle_ttl_seconds: must be a whole number of seconds/],
  ['unknown sandbox setting', { ...base, backend: { type: 'sandbox', sandbox_config: { network: true } } }, 422, 'validation_failed', /backend\.sandbox_config\.network: unknown field/],
  ['sandbox settings on the state backend', { ...base, backend: { type: 'state', sandbox_config: { scope: 'agent' } } }, 422, 'validation_failed', /backend\.sandbox_config: only a sandbox backend/],
  ['interrupt key that matches no tool', { ...base, tools: { tools: [], interrupt_config: { shell: true } } }, 422, 'validation_failed', /interrupt_config\.shell: "shell" matches no tool of this agent/],
  ['interrupt key of a tool the agent lacks', { ...base, tools: { tools: [], interrupt_config: { [`${TOOLS_URL}::search`]: true } } }, 422, 'validation_failed', /no tool search of https:\/\/tools\.example\.com\/mcp is in its tools/],
  ['tools.json that is not JSON', { ...base, files: { 'tools.json': { content: '{' } } }, 422, 'validation_failed', /tools\.json: not valid JSON/],
];

describe('bad agent inputs', () => {
  it.each(cases)('create with %s', async (_label, body, status, code, detail) => {
    const before = await counts();
    const res = await server.client.POST('/v1/deepagents/agents', { body: body as never });
    expect(res.response.status).toBe(status);
    expect(res.error).toMatchObject({ code, status });
    expect((res.error as { detail: string }).detail).toMatch(detail);
    expect(await counts()).toEqual(before);
  });

  it('an update with a bad input changes nothing', async () => {
    const created = await server.client.POST('/v1/deepagents/agents', { body: { name: 'good', runtime: model, instructions: 'v1' } });
    const id = created.data!.id;
    const before = await counts();
    for (const [, body, status] of cases.filter(([label]) => !['no runtime', 'blank name'].includes(label))) {
      // Keep the field under test; drop the create-only fields every case carries.
      const patch = Object.fromEntries(Object.entries(body).filter(([k, v]) => !(k === 'name' || (k === 'runtime' && v === model))));
      const res = await server.client.PATCH('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: id } }, body: patch as never });
      expect(res.response.status).toBe(status);
    }
    expect(await counts()).toEqual(before);
    const after = await server.client.GET('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: id } } });
    expect(after.data!.revision).toBe(created.data!.revision);
  });

  it('agent.json sent as a file obeys the rules of the name field: not blank, at most 200 characters', async () => {
    const created = await server.client.POST('/v1/deepagents/agents', { body: { name: 'named', runtime: model } });
    const id = created.data!.id;
    const before = await counts();
    for (const name of ['', '   ', 'x'.repeat(201)]) {
      const content = JSON.stringify({ name, runtime: model });
      const res = await server.client.PATCH('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: id } }, body: { files: { 'agent.json': { content } } } });
      expect(res.response.status, JSON.stringify(name)).toBe(422);
      expect(res.error).toMatchObject({ code: 'validation_failed', errors: [{ loc: ['body', 'files', 'agent.json'] }] });
      expect((res.error as { detail: string }).detail).toMatch(/name/);
    }
    expect(await counts()).toEqual(before);
    const after = await server.client.GET('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: id } } });
    expect(after.data!.name).toBe('named');
    const renamed = await server.client.PATCH('/v1/deepagents/agents/{agent_id}', {
      params: { path: { agent_id: id } },
      body: { files: { 'agent.json': { content: JSON.stringify({ name: 'y'.repeat(200), runtime: model }) } } },
    });
    expect(renamed.response.status).toBe(200);
    expect(renamed.data!.name).toBe('y'.repeat(200));
  });

  it('an agent whose tool server was deleted can still be updated; a URL the update adds must be registered', async () => {
    const url = 'https://deleted-later.example.com/mcp';
    const reg = await server.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'Deleted later', url } });
    const created = await server.client.POST('/v1/deepagents/agents', {
      body: { name: 'orphaned-tools', runtime: model, tools: { tools: [{ name: 'search', mcp_server_url: url }], interrupt_config: { [`${url}::search`]: true } } },
    });
    expect(created.response.status).toBe(201);
    const id = created.data!.id;
    expect((await server.client.DELETE('/v1/deepagents/mcp-servers/{mcp_server_id}', { params: { path: { mcp_server_id: reg.data!.id } } })).response.status).toBe(204);

    // A change that does not touch the tools.
    const renamed = await server.client.PATCH('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: id } }, body: { description: 'still here' } });
    expect(renamed.response.status).toBe(200);
    expect(renamed.data!.tools.tools).toEqual([{ name: 'search', mcp_server_url: url }]);
    // Nor does sending the same tools back (a client that saves every field).
    const same = await server.client.PATCH('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: id } }, body: { tools: renamed.data!.tools } });
    expect(same.response.status).toBe(200);
    // A URL the agent did not have is checked.
    const added = await server.client.PATCH('/v1/deepagents/agents/{agent_id}', {
      params: { path: { agent_id: id } },
      body: { tools: { tools: [...renamed.data!.tools.tools, { name: 'x', mcp_server_url: 'https://never-registered.example.com/mcp' }] } },
    });
    expect(added.response.status).toBe(422);
    expect(added.error).toMatchObject({ errors: [{ loc: ['body', 'tools', 'tools', 1, 'mcp_server_url'] }] });
  });

  it('a problem in a file sent raw (agent.json, tools.json, a subagent folder) names that file, not a field the request did not send', async () => {
    const created = await server.client.POST('/v1/deepagents/agents', { body: { name: 'raw-files', runtime: model } });
    const id = created.data!.id;
    const patch = (files: Record<string, { content: string }>) => server.client.PATCH('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: id } }, body: { files } });
    const cases: [Record<string, { content: string }>, string, RegExp][] = [
      [{ 'agent.json': { content: JSON.stringify({ name: 'x', model: 'nosuch:model' }) } }, 'agent.json', /agent\.json: runtime\.model\.model_id: unknown provider "nosuch"/],
      [{ 'agent.json': { content: JSON.stringify({ name: 'x', runtime: model, backend: { type: 'nope' } }) } }, 'agent.json', /agent\.json: backend\.type:/],
      [{ 'tools.json': { content: JSON.stringify({ tools: [{ name: 't', mcp_server_url: 'https://nowhere.example.com/mcp' }] }) } }, 'tools.json', /tools\.json: tools\.0\.mcp_server_url: no tool server is registered/],
      [
        { 'subagents/helper/agent.json': { content: JSON.stringify({ description: 'd', model: 'nosuch:m' }) }, 'subagents/helper/AGENTS.md': { content: 'Help.' } },
        'subagents/helper/agent.json',
        /subagents\/helper\/agent\.json: model_id: unknown provider/,
      ],
    ];
    for (const [files, file, detail] of cases) {
      const res = await patch(files);
      expect(res.response.status, file).toBe(422);
      expect(res.error).toMatchObject({ code: 'validation_failed', errors: [{ loc: ['body', 'files', file] }] });
      expect((res.error as { detail: string }).detail).toMatch(detail);
    }
    // The typed fields still name themselves.
    const typed = await server.client.PATCH('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: id } }, body: { runtime: { model: { model_id: 'nosuch:model' } } } });
    expect(typed.error).toMatchObject({ errors: [{ loc: ['body', 'runtime', 'model', 'model_id'] }] });
  });

  it('takes every model id form that can run: each known provider, and a saved configuration by name', async () => {
    const saved = await server.client.POST('/v1/deepagents/model-configs', { body: { name: 'forms-config', model_id: 'scripted:echo' } });
    expect(saved.response.status).toBe(201);
    const forms = ['scripted:echo', 'openai:gpt-5.4-mini', 'azure_openai:gpt-4o', 'anthropic:claude-sonnet-4-6', 'google-genai:gemini-2.5-flash', 'ollama:llama3.2', 'forms-config'];
    for (const [i, modelId] of forms.entries()) {
      const res = await server.client.POST('/v1/deepagents/agents', {
        body: { name: `forms-${i}`, runtime: { model: { model_id: modelId } }, subagents: [{ name: 'helper', description: 'helps', model_id: modelId }] },
      });
      expect(res.response.status, modelId).toBe(201);
      const patched = await server.client.PATCH('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: res.data!.id } }, body: { runtime: { model: { model_id: modelId } } } });
      expect(patched.response.status, modelId).toBe(200);
    }
  });

  it('a viewer key cannot create agents', async () => {
    const viewer = server.clientFor(await server.createKey({ role: 'viewer' }));
    const res = await viewer.POST('/v1/deepagents/agents', { body: { name: 'v', runtime: model } });
    expect(res.response.status).toBe(403);
  });
});

describe('workspace isolation', () => {
  it("another workspace's agent answers 404 everywhere, and its delete changes nothing", async () => {
    const created = await server.client.POST('/v1/deepagents/agents', { body: { name: 'mine', runtime: model } });
    const id = created.data!.id;
    const other = await server.createWorkspace('agents-other');
    const p = { params: { path: { agent_id: id } } };
    expect((await other.client.GET('/v1/deepagents/agents/{agent_id}', p)).response.status).toBe(404);
    expect((await other.client.PATCH('/v1/deepagents/agents/{agent_id}', { ...p, body: { instructions: 'x' } })).error).toMatchObject({ code: 'agent_not_found' });
    expect((await other.client.GET('/v1/deepagents/agents/{agent_id}/revisions', p)).response.status).toBe(404);
    expect(
      (await other.client.GET('/v1/deepagents/agents/{agent_id}/revisions/{revision}', { params: { path: { agent_id: id, revision: created.data!.revision } } })).response.status,
    ).toBe(404);
    const refs = await fetch(`${server.url}/v1/deepagents/agents/${id}.git/info/refs?service=git-upload-pack`, { headers: { 'X-Api-Key': other.adminKey } });
    expect(refs.status).toBe(404);
    expect((await other.client.GET('/v1/deepagents/agents')).data!.items).toEqual([]);
    expect((await other.client.DELETE('/v1/deepagents/agents/{agent_id}', p)).response.status).toBe(204);
    expect((await server.client.GET('/v1/deepagents/agents/{agent_id}', p)).response.status).toBe(200);
  });
});

describe('concurrent updates', () => {
  // Each PATCH names a tool server, so each validates against the workspace while updates queue on the
  // agent's row lock: as many as the connection pool holds.
  it('20 parallel PATCHes leave 20 new commits in one line', async () => {
    const created = await server.client.POST('/v1/deepagents/agents', { body: { name: 'busy', runtime: model, instructions: 'start' } });
    const id = created.data!.id;
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        server.client.PATCH('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: id } }, body: { extras: { writer: i }, tools: { tools: [{ name: `tool-${i}`, mcp_server_url: TOOLS_URL }] } } }),
      ),
    );
    expect(results.map((r) => r.response.status)).toEqual(Array(20).fill(200));
    const history = await server.client.GET('/v1/deepagents/agents/{agent_id}/revisions', { params: { path: { agent_id: id }, query: { page_size: 100 } } });
    const items = history.data!.items;
    expect(items).toHaveLength(21);
    // One line: each commit's parent is the next older one, down to the create commit.
    items.forEach((rev, i) => expect(rev.parent).toBe(items[i + 1]?.id ?? null));
    expect(items[20]!.id).toBe(created.data!.revision);
    // Every update landed: each response's revision is in the line, each once.
    expect(new Set(results.map((r) => r.data!.revision))).toEqual(new Set(items.slice(0, 20).map((r) => r.id)));
    const head = await server.client.GET('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: id } } });
    expect(head.data!.revision).toBe(items[0]!.id);
  });
});

describe('listing', () => {
  it('pages with next_cursor, filters by name and sorts', async () => {
    const ws = await server.createWorkspace('agents-list');
    for (const name of ['delta', 'alpha', 'charlie', 'bravo', 'echo']) {
      await ws.client.POST('/v1/deepagents/agents', { body: { name, runtime: model } });
    }
    const names: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await ws.client.GET('/v1/deepagents/agents', { params: { query: { page_size: 2, sort_by: 'name', sort_order: 'asc', ...(cursor ? { cursor } : {}) } } });
      expect(page.response.status).toBe(200);
      names.push(...page.data!.items.map((a) => a.name));
      cursor = page.data!.next_cursor ?? undefined;
    } while (cursor);
    expect(names).toEqual(['alpha', 'bravo', 'charlie', 'delta', 'echo']);
    const newest = await ws.client.GET('/v1/deepagents/agents', { params: { query: { page_size: 1 } } });
    expect(newest.data!.items.map((a) => a.name)).toEqual(['echo']);
    const filtered = await ws.client.GET('/v1/deepagents/agents', { params: { query: { name: 'HAR' } } });
    expect(filtered.data!.items.map((a) => a.name)).toEqual(['charlie']);
    const bad = await ws.client.GET('/v1/deepagents/agents', { params: { query: { page_size: 101 } } });
    expect(bad.response.status).toBe(422);
    const badCursor = await ws.client.GET('/v1/deepagents/agents', { params: { query: { cursor: 'nope' } } });
    expect(badCursor.response.status).toBe(422);
  });

  it('refuses, with a 422 naming the cursor, a cursor of another sort or one edited by hand (never a 500)', async () => {
    const ws = await server.createWorkspace('agents-cursors');
    for (const name of ['one', 'two', 'three']) await ws.client.POST('/v1/deepagents/agents', { body: { name, runtime: model } });
    const byName = await ws.client.GET('/v1/deepagents/agents', { params: { query: { page_size: 1, sort_by: 'name', sort_order: 'asc' } } });
    const nameCursor = byName.data!.next_cursor!;
    expect(nameCursor).toBeTruthy();
    const byTime = await ws.client.GET('/v1/deepagents/agents', { params: { query: { page_size: 1 } } });
    const timeCursor = byTime.data!.next_cursor!;
    const forged = (c: object) => Buffer.from(JSON.stringify(c)).toString('base64url');
    const id = byTime.data!.items[0]!.id;
    const cases: { sort_by?: 'created_at' | 'updated_at' | 'name'; sort_order?: 'asc' | 'desc'; cursor: string }[] = [
      { sort_by: 'created_at', cursor: nameCursor }, // a name where a time belongs
      { sort_by: 'updated_at', cursor: nameCursor },
      { sort_by: 'name', sort_order: 'asc', cursor: timeCursor }, // a time where a name belongs
      { cursor: forged({ v: 'not a time', id }) },
      { cursor: forged({ v: '2026-01-01T00:00:00.000Z', id: '0'.repeat(36) }) }, // not a UUID
      { sort_by: 'name', cursor: forged({ v: 'a\u0000b', id }) },
    ];
    for (const query of cases) {
      const res = await ws.client.GET('/v1/deepagents/agents', { params: { query } });
      expect(res.response.status, JSON.stringify(query)).toBe(422);
      expect(res.error).toMatchObject({ code: 'validation_failed', errors: [{ loc: ['query', 'cursor'] }] });
    }
    // The cursors still page their own listing.
    const next = await ws.client.GET('/v1/deepagents/agents', { params: { query: { page_size: 1, sort_by: 'name', sort_order: 'asc', cursor: nameCursor } } });
    expect(next.response.status).toBe(200);
    expect(next.data!.items.map((a) => a.name)).toEqual(['three']);
  });

  it('refuses a revisions cursor beyond any revision number with a 422, not a 500', async () => {
    const created = await server.client.POST('/v1/deepagents/agents', { body: { name: 'revision-cursor', runtime: model } });
    const agent_id = created.data!.id;
    for (const cursor of ['9999999999', '2147483648']) {
      const res = await server.client.GET('/v1/deepagents/agents/{agent_id}/revisions', { params: { path: { agent_id }, query: { cursor } } });
      expect(res.response.status, cursor).toBe(422);
      expect(res.error).toMatchObject({ code: 'validation_failed', errors: [{ loc: ['query', 'cursor'] }] });
    }
    const fine = await server.client.GET('/v1/deepagents/agents/{agent_id}/revisions', { params: { path: { agent_id }, query: { cursor: '2147483647' } } });
    expect(fine.response.status).toBe(200);
    expect(fine.data!.items).toHaveLength(1);
  });
});

describe('backends', () => {
  it('accepts state, sandbox (with its settings) and the older thread_scoped_sandbox, and returns them as sent', async () => {
    const backends = [
      { type: 'state' },
      { type: 'sandbox', sandbox_config: { scope: 'agent', idle_ttl_seconds: 60, delete_after_stop_seconds: 0, policy_ids: ['p-1'] } },
      { type: 'thread_scoped_sandbox' },
    ];
    for (const backend of backends) {
      const res = await server.client.POST('/v1/deepagents/agents', { body: { ...base, name: `b-${backend.type}`, backend } as never });
      expect(res.response.status).toBe(201);
      const got = await server.client.GET('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: res.data!.id } } });
      expect(got.data!.backend).toEqual(backend);
    }
  });

  it('refuses sandbox and sandbox_config (two names of one setting) when they disagree', async () => {
    const before = await counts();
    const backend = { type: 'sandbox', sandbox: { scope: 'agent' }, sandbox_config: { scope: 'thread' } };
    const res = await server.client.POST('/v1/deepagents/agents', { body: { ...base, name: 'two-configs', backend } as never });
    expect(res.response.status).toBe(422);
    expect(res.error).toMatchObject({ code: 'validation_failed', errors: [{ loc: ['body', 'backend', 'sandbox'] }] });
    expect(await counts()).toEqual(before);
    // The same settings under both names say one thing: accepted.
    const same = { type: 'sandbox', sandbox: { scope: 'agent' }, sandbox_config: { scope: 'agent' } };
    const ok = await server.client.POST('/v1/deepagents/agents', { body: { ...base, name: 'same-configs', backend: same } as never });
    expect(ok.response.status).toBe(201);
  });

  it('a bare interrupt key may name a built-in tool or an MCP tool of a subagent', async () => {
    const res = await server.client.POST('/v1/deepagents/agents', {
      body: {
        ...base,
        name: 'approvals',
        tools: { tools: [], interrupt_config: { execute: true, write_file: true, search: true } },
        subagents: [{ name: 'finder', tools: { tools: [{ name: 'search', mcp_server_url: TOOLS_URL }] } }],
      } as never,
    });
    expect(res.response.status).toBe(201);
  });
});
