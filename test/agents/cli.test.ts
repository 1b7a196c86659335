// The new-user path: `hangar agents push` a folder, see it through the API, PATCH it, `git clone` it,
// `hangar agents pull` it back unchanged, push an edit, `hangar agents log`. The CLI runs as a real process.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readAgentFolder } from '../../src/cli/agents.js';
import { startTestServer, type TestServer } from '../support/server.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
let server: TestServer;
let work: string;

beforeAll(async () => {
  server = await startTestServer();
  work = await mkdtemp(path.join(os.tmpdir(), 'hangar-cli-'));
});
afterAll(async () => {
  await server?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

async function hangar(...args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, [path.join(ROOT, 'dist/cli/main.js'), 'agents', ...args], {
    cwd: ROOT,
    env: { ...process.env, HANGAR_URL: server.url, HANGAR_API_KEY: server.adminKey },
  });
  return stdout;
}

async function git(args: string[], cwd?: string): Promise<string> {
  const env = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0' };
  return (await run('git', args, { cwd, env })).stdout;
}

async function writeTree(dir: string, files: Record<string, string>): Promise<void> {
  for (const [p, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, p)), { recursive: true });
    await writeFile(path.join(dir, p), content);
  }
}

describe('hangar agents CLI', () => {
  it('push → API → PATCH → git clone → pull round trip → push edit → log', async () => {
    const src = path.join(work, 'my-agent');
    const tree = {
      'agent.json': `${JSON.stringify({ name: 'cli-agent', description: 'From a folder', runtime: { model: { model_id: 'openai:gpt-5.4-mini' } } }, null, 2)}\n`,
      'AGENTS.md': 'You help with folders.\n',
      'tools.json': '{ "tools": [], "interrupt_config": {} }\n',
      'skills/summarise/SKILL.md': '---\nname: summarise\ndescription: Summaries\n---\nKeep it short.\n',
      'skills/summarise/examples/one.md': 'An example.\n',
      'subagents/checker/AGENTS.md': '---\ndescription: Checks\n---\nCheck everything.\n',
      'notes/todo.txt': 'nothing\n',
    };
    await writeTree(src, tree);

    const revision1 = (await hangar('push', src)).trim();
    expect(revision1).toMatch(/^[0-9a-f]{40}$/);
    const agentId = (await readFile(path.join(src, '.hangar-agent'), 'utf8')).trim();

    const got = await server.client.GET('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: agentId } } });
    expect(got.data).toMatchObject({ name: 'cli-agent', description: 'From a folder', revision: revision1, instructions: 'You help with folders.\n' });
    expect(got.data!.skills.map((s) => s.name)).toEqual(['summarise']);
    expect(await hangar('list')).toContain(agentId);

    const patched = await server.client.PATCH('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: agentId } }, body: { instructions: 'Patched.\n' } });
    const revision2 = patched.data!.revision;

    const clone = path.join(work, 'clone');
    const url = new URL(`/v1/deepagents/agents/${agentId}.git`, server.url);
    url.username = 'me';
    url.password = server.adminKey;
    await git(['clone', '--quiet', url.toString(), clone]);
    expect((await git(['log', '--format=%H'], clone)).trim().split('\n')).toEqual([revision2, revision1]);

    const pulled = path.join(work, 'pulled');
    await hangar('pull', agentId, pulled);
    expect(await readAgentFolder(pulled)).toEqual({ ...tree, 'AGENTS.md': 'Patched.\n' });

    // Edit the pulled folder (change, add, delete) and push: the marker file names the agent.
    await writeFile(path.join(pulled, 'AGENTS.md'), 'Edited locally.\n');
    await writeFile(path.join(pulled, 'notes/new.txt'), 'new\n');
    await rm(path.join(pulled, 'notes/todo.txt'));
    const revision3 = (await hangar('push', pulled)).trim();
    const after = await server.client.GET('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: agentId }, query: { include_files: 'true' } } });
    expect(after.data!.revision).toBe(revision3);
    expect(Object.fromEntries(Object.entries(after.data!.files!).map(([p, f]) => [p, f.content]))).toEqual(await readAgentFolder(pulled));

    const log = (await hangar('log', agentId)).trim().split('\n');
    expect(log.map((l) => l.split(/\s+/)[0])).toEqual([revision3, revision2, revision1]);
  });

  it('reports a server error with its code', async () => {
    const bad = path.join(work, 'bad');
    await writeTree(bad, { 'agent.json': JSON.stringify({ name: 'x', runtime: { model: { model_id: 'nope' } } }) });
    const failure = await hangar('push', bad).catch((e: { stderr: string; code: number }) => e);
    expect(failure).toMatchObject({ code: 1 });
    expect((failure as { stderr: string }).stderr).toMatch(/422 validation_failed: .*"nope" has no colon/);
  });
});
