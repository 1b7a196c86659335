// Agents end to end through the typed client: create → get → patch → history → git clone → delete.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

const run = promisify(execFile);
let server: TestServer;
const TOOLS_URL = 'https://tools.example.com/mcp';

beforeAll(async () => {
  server = await startTestServer();
  await server.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'Tools', url: TOOLS_URL } });
  await server.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'Other', url: 'https://other.example.com/mcp' } });
});
afterAll(async () => {
  await server?.close();
});

/** Run git with no inherited config or credential helpers, so the test sees what a fresh user sees. */
async function git(args: string[], cwd?: string): Promise<string> {
  const { stdout } = await run('git', args, {
    cwd,
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: '' },
  });
  return stdout;
}

async function listFiles(dir: string): Promise<Record<string, string>> {
  const out = await git(['ls-files', '-z'], dir);
  const files: Record<string, string> = {};
  for (const p of out.split('\0').filter(Boolean)) files[p] = await readFile(path.join(dir, p), 'utf8');
  return files;
}

describe('agents', () => {
  it('create, get, patch, history, clone, delete', async () => {
    const created = await server.client.POST('/v1/deepagents/agents', {
      body: {
        name: 'research-assistant',
        description: 'Searches and summarises.',
        runtime: { model: { model_id: 'anthropic:claude-sonnet-4-6' } },
        instructions: 'You are careful.',
        tools: {
          tools: [{ name: 'search', mcp_server_url: `${TOOLS_URL}/`, mcp_server_name: 'Tools' }],
          interrupt_config: { [`${TOOLS_URL}/::search::Tools`]: true, write_file: false },
        },
        skills: [{ name: 'citing', description: 'How to cite', instructions: 'Use APA.', files: { 'examples/apa.md': 'Doe (2020)\n' } }],
        subagents: [{ name: 'critic', description: 'Finds holes', instructions: 'Be harsh.' }],
        extras: { team: 'search' },
        files: { 'docs/README.md': { content: 'Extra file\n' } },
      },
    });
    expect(created.response.status).toBe(201);
    const a = created.data!;
    expect(a.revision).toMatch(/^[0-9a-f]{40}$/);
    expect(a.name).toBe('research-assistant');
    expect(a.instructions).toBe('You are careful.');
    expect(a.skills).toEqual([{ type: 'inline', name: 'citing', description: 'How to cite', instructions: 'Use APA.', files: { 'examples/apa.md': 'Doe (2020)\n' } }]);
    expect(a.subagents).toEqual([{ name: 'critic', description: 'Finds holes', instructions: 'Be harsh.' }]);
    expect(a.files).toBeUndefined();

    const got = await server.client.GET('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: a.id }, query: { include_files: 'true' } } });
    expect(got.response.status).toBe(200);
    const files = Object.fromEntries(Object.entries(got.data!.files!).map(([p, f]) => [p, f.content]));
    expect(Object.keys(files).sort()).toEqual([
      'AGENTS.md',
      'agent.json',
      'docs/README.md',
      'skills/citing/SKILL.md',
      'skills/citing/examples/apa.md',
      'subagents/critic/AGENTS.md',
      'tools.json',
    ]);
    expect(files['AGENTS.md']).toBe('You are careful.');
    expect(JSON.parse(files['tools.json']!)).toEqual(a.tools);

    // PATCH: tools replaced wholesale, other fields kept, new revision.
    const patched = await server.client.PATCH('/v1/deepagents/agents/{agent_id}', {
      params: { path: { agent_id: a.id } },
      body: { tools: { tools: [{ name: 'lookup', mcp_server_url: 'https://other.example.com/mcp' }] } },
    });
    expect(patched.response.status).toBe(200);
    expect(patched.data!.revision).not.toBe(a.revision);
    expect(patched.data!.tools).toEqual({ tools: [{ name: 'lookup', mcp_server_url: 'https://other.example.com/mcp' }], interrupt_config: {} });
    expect(patched.data!.instructions).toBe('You are careful.');
    expect(patched.data!.skills).toEqual(a.skills);

    const history = await server.client.GET('/v1/deepagents/agents/{agent_id}/revisions', { params: { path: { agent_id: a.id } } });
    expect(history.data!.items.map((r) => r.id)).toEqual([patched.data!.revision, a.revision]);
    expect(history.data!.items[0]).toMatchObject({ parent: a.revision, changed_paths: ['tools.json'], number: 2 });
    expect(history.data!.items[1]!.parent).toBeNull();
    expect(history.data!.next_cursor).toBeNull();

    const old = await server.client.GET('/v1/deepagents/agents/{agent_id}/revisions/{revision}', {
      params: { path: { agent_id: a.id, revision: a.revision.slice(0, 10) } },
    });
    expect(old.response.status).toBe(200);
    expect(old.data!.revision).toBe(a.revision);
    expect(old.data!.tools).toEqual(a.tools);
    expect(old.data!.files!['tools.json']!.content).toBe(files['tools.json']);
    // Hex digits in any case, abbreviated or whole, as git takes them.
    for (const revision of [a.revision.slice(0, 10).toUpperCase(), a.revision.toUpperCase()]) {
      const upper = await server.client.GET('/v1/deepagents/agents/{agent_id}/revisions/{revision}', { params: { path: { agent_id: a.id, revision } } });
      expect({ revision, status: upper.response.status, id: upper.data?.revision }).toEqual({ revision, status: 200, id: a.revision });
    }

    // git clone with the real git binary: same commits, same files.
    const dir = await mkdtemp(path.join(os.tmpdir(), 'hangar-clone-'));
    try {
      const url = new URL(`/v1/deepagents/agents/${a.id}.git`, server.url);
      url.username = 'git';
      url.password = server.adminKey;
      await git(['clone', '--quiet', url.toString(), dir]);
      expect((await git(['log', '--format=%H'], dir)).trim().split('\n')).toEqual([patched.data!.revision, a.revision]);
      expect(await git(['fsck', '--strict'], dir)).toBe('');
      const headFiles = await server.client.GET('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: a.id }, query: { include_files: 'true' } } });
      const apiFiles = Object.fromEntries(Object.entries(headFiles.data!.files!).map(([p, f]) => [p, f.content]));
      expect(await listFiles(dir)).toEqual(apiFiles);

      // A later update reaches the clone with git pull.
      const third = await server.client.PATCH('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: a.id } }, body: { instructions: 'Third.' } });
      await git(['pull', '--quiet', '--ff-only'], dir);
      expect((await git(['log', '--format=%H'], dir)).trim().split('\n')).toEqual([third.data!.revision, patched.data!.revision, a.revision]);
      expect(await readFile(path.join(dir, 'AGENTS.md'), 'utf8')).toBe('Third.');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }

    // Delete: 204 twice, then 404 everywhere.
    for (let i = 0; i < 2; i++) {
      const del = await server.client.DELETE('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: a.id } } });
      expect(del.response.status).toBe(204);
    }
    const gone = await server.client.GET('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: a.id } } });
    expect(gone.response.status).toBe(404);
    expect(gone.error).toMatchObject({ code: 'agent_not_found', status: 404 });
  });

  it('a revision message names only the fields that changed, when a client sends every field (as the Console does on Save)', async () => {
    const created = await server.client.POST('/v1/deepagents/agents', {
      body: { name: 'saved-whole', description: 'first', runtime: { model: { model_id: 'scripted:demo' } }, instructions: 'Be brief.', skills: [{ name: 's', instructions: 'do' }] },
    });
    const a = created.data!;
    const whole = { name: a.name, description: a.description, runtime: a.runtime, instructions: a.instructions, tools: a.tools, skills: a.skills, subagents: a.subagents };
    const patch = (body: Record<string, unknown>) => server.client.PATCH('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: a.id } }, body: body as never });
    expect((await patch({ ...whole, instructions: 'Be very brief.' })).response.status).toBe(200);
    expect((await patch({ ...whole, instructions: 'Be very brief.', description: 'second' })).response.status).toBe(200);
    expect((await patch({ ...whole, instructions: 'Be very brief.', description: 'second' })).response.status).toBe(200);
    const history = await server.client.GET('/v1/deepagents/agents/{agent_id}/revisions', { params: { path: { agent_id: a.id } } });
    expect(history.data!.items.map((r) => r.message)).toEqual(['Update (no changes)', 'Update description', 'Update instructions', 'Create agent "saved-whole"']);
  });

  it('an update may name its revision (as the Console does for a restore); a blank, multi-line or long message is a 422 and nothing is written', async () => {
    const created = await server.client.POST('/v1/deepagents/agents', { body: { name: 'titled', runtime: { model: { model_id: 'scripted:demo' } }, instructions: 'One.' } });
    const a = created.data!;
    const patch = (body: Record<string, unknown>) => server.client.PATCH('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: a.id } }, body: body as never });
    for (const message of ['  ', 'two\nlines', 'x'.repeat(201)]) {
      const refused = await patch({ instructions: 'Two.', message });
      expect(refused.response.status).toBe(422);
      expect(JSON.stringify(refused.error)).toContain('message');
    }
    expect((await server.client.GET('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: a.id } } })).data!.revision).toBe(a.revision);
    const named = await patch({ instructions: 'One again.', message: ' Restore revision #1 (abc1234) ' });
    expect(named.response.status).toBe(200);
    expect(named.data!.instructions).toBe('One again.');
    const history = await server.client.GET('/v1/deepagents/agents/{agent_id}/revisions', { params: { path: { agent_id: a.id } } });
    expect(history.data!.items.map((r) => r.message)).toEqual(['Restore revision #1 (abc1234)', 'Create agent "titled"']);
    // The message names the revision; it is not a field of the agent.
    expect(JSON.stringify(named.data)).not.toContain('Restore revision');
  });

  it('git clone of a URL naming the agent by its name says it wants the id, rather than asking for credentials again', async () => {
    const created = await server.client.POST('/v1/deepagents/agents', { body: { name: 'by-name', runtime: { model: { model_id: 'scripted:demo' } } } });
    expect(created.response.status).toBe(201);
    const dir = await mkdtemp(path.join(os.tmpdir(), 'hangar-clone-'));
    try {
      const url = new URL('/v1/deepagents/agents/by-name.git', server.url);
      url.username = 'git';
      url.password = server.adminKey;
      const failure = await git(['clone', '--quiet', url.toString(), path.join(dir, 'x')]).then(
        () => 'cloned',
        (e: { stderr: string }) => e.stderr,
      );
      expect(failure).not.toMatch(/Authentication failed/);
      expect(failure).toMatch(/"by-name" is not an agent id/);
      // The same request over plain HTTP: a 404 that names what to do.
      const refs = await fetch(`${server.url}/v1/deepagents/agents/by-name.git/info/refs?service=git-upload-pack`, { headers: { Authorization: `Basic ${Buffer.from(`git:${server.adminKey}`).toString('base64')}` } });
      expect(refs.status).toBe(404);
      expect(await refs.text()).toMatch(/agents\/<agent_id>\.git/);
      // A wrong key is still a 401 with git's challenge, whatever the path names.
      const wrong = await fetch(`${server.url}/v1/deepagents/agents/by-name.git/info/refs?service=git-upload-pack`, { headers: { Authorization: `Basic ${Buffer.from('git:wrong-key-wrong-key').toString('base64')}` } });
      expect(wrong.status).toBe(401);
      expect(wrong.headers.get('www-authenticate')).toMatch(/^Basic/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('git clone without a key is refused', async () => {
    const created = await server.client.POST('/v1/deepagents/agents', { body: { name: 'private', runtime: { model: { model_id: 'openai:gpt-5.4-mini' } } } });
    const dir = await mkdtemp(path.join(os.tmpdir(), 'hangar-clone-'));
    try {
      const url = new URL(`/v1/deepagents/agents/${created.data!.id}.git`, server.url);
      url.username = 'git';
      url.password = 'wrong-key-wrong-key';
      const failure = await git(['clone', '--quiet', url.toString(), path.join(dir, 'x')]).catch((e: { stderr: string }) => e.stderr);
      expect(failure).toMatch(/Authentication failed|401/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
