// The whole agent workflow with only the `hangar` command, against a real server: init a folder,
// push --dry-run, push, dev (watch + push each change + chat), chat with approvals (answered by a
// prompt, by flags, or left waiting with a non-zero exit), agents get/log/pull by name, tool servers,
// traces. The CLI runs as real processes where exit codes and output matter.
import { mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pullAgent, pushAgent, readAgentFolder, type PushPlan } from '../../src/cli/agents.js';
import { chat, type ChatOutput } from '../../src/cli/chat.js';
import { askingDecider, scriptedDecider } from '../../src/cli/decide.js';
import { dev, initFolder, toolsJson } from '../../src/cli/workflow.js';
import { startEverythingServer } from '../support/mcp.js';
import { runHangar } from '../support/cli.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let work: string;
beforeAll(async () => {
  server = await startTestServer();
  work = await mkdtemp(path.join(os.tmpdir(), 'hangar-workflow-'));
});
afterAll(() => server?.close());

function capture(): { io: ChatOutput; out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return { io: { out: (t) => void (out += t), err: (t) => void (err += t) }, out: () => out, err: () => err };
}

const writeMemory = '/call write_file {"file_path": "/memories/notes.md", "content": "remember tea"}';
const env = () => ({ HANGAR_URL: server.url, HANGAR_API_KEY: server.adminKey });

describe('init, push --dry-run, push', () => {
  it('scaffolds a folder that pushes as a new agent; a dry run sends nothing and lists each change', async () => {
    const dir = path.join(work, 'helper');
    await initFolder(dir);
    expect(Object.keys(await readAgentFolder(dir)).sort()).toEqual(['AGENTS.md', 'agent.json', 'tools.json']);
    await expect(initFolder(dir)).rejects.toThrow('is not empty');

    let plan: PushPlan | undefined;
    await pushAgent(server.client, dir, undefined, { dryRun: (p) => (plan = p) });
    expect(plan!.action).toBe('create');
    expect(plan!.files.map((f) => f.change)).toEqual(['added', 'added', 'added']);
    const before = await server.client.GET('/v1/deepagents/agents', { params: { query: { name: 'helper' } } });
    expect(before.data!.items).toEqual([]);

    const created = await pushAgent(server.client, dir);
    await writeFile(path.join(dir, 'AGENTS.md'), '# helper\n\nAnswer briefly.\n');
    await pushAgent(server.client, dir, undefined, { dryRun: (p) => (plan = p) });
    expect(plan!.action).toBe('update');
    expect(plan!.files).toContainEqual({ path: 'AGENTS.md', change: 'changed' });
    expect(plan!.request.body).toEqual({ files: { 'AGENTS.md': { content: '# helper\n\nAnswer briefly.\n' } } });
    const after = await server.client.GET('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: created.id } } });
    expect(after.data!.revision).toBe(created.revision);

    // init --from an existing agent, by name: the same files, and the folder pushes to that agent.
    const copy = path.join(work, 'helper-copy');
    const from = await initFolder(copy, { from: 'helper', client: () => server.client });
    expect(from.agentId).toBe(created.id);
    expect((await readAgentFolder(copy))['agent.json']).toBeDefined();
  });
});

describe('hangar chat with approvals', () => {
  it('asks about each pending action; edit, reject and approve answer it and the run resumes', async () => {
    const dir = path.join(work, 'approver');
    await initFolder(dir);
    await pushAgent(server.client, dir);

    // A prompt answered with "e" and new arguments: the edited call runs.
    const answers = ['e', '{"file_path": "/memories/notes.md", "content": "remember coffee"}'];
    const prompts: string[] = [];
    const first = capture();
    const r1 = await chat(
      { baseUrl: server.url, apiKey: server.adminKey, agent: 'approver', message: writeMemory, decide: askingDecider(async (q) => (prompts.push(q), answers.shift() ?? '')) },
      first.io,
    );
    expect(r1.pending).toEqual([]);
    expect(prompts[0]).toMatch(/^write_file \(1\/1\): \[a\]pprove \/ \[e\]dit \/ \[r\]eject \/ re\[s\]pond\? $/);
    expect(first.err()).toContain('paused for approval');
    expect(first.err()).toContain('write_file({"file_path":"/memories/notes.md","content":"remember tea"})');
    expect(first.out()).toContain('Done.');

    // Left unanswered: the chat reports the pending action; a later chat on the thread answers it
    // first (a new message would otherwise cancel the waiting call).
    const second = capture();
    const r2 = await chat({ baseUrl: server.url, apiKey: server.adminKey, agent: 'approver', message: writeMemory }, second.io);
    expect(r2.pending).toHaveLength(1);
    expect(second.err()).toContain('is waiting for approval');
    const third = capture();
    const r3 = await chat(
      { baseUrl: server.url, apiKey: server.adminKey, agent: 'approver', thread: r2.threadId, decide: scriptedDecider({ type: 'reject', message: 'not now' }) },
      third.io,
    );
    expect(r3.pending).toEqual([]);
    expect(third.err()).toContain(`thread ${r2.threadId} is waiting for approval`);
    const thread = await server.client.GET('/v1/deepagents/threads/{thread_id}', { params: { path: { thread_id: r2.threadId } } });
    expect(thread.data!.status).toBe('idle');
  });

  it('asks about the requests of subagents that paused in parallel, and answers each by its interrupt id', async () => {
    const created = await server.client.POST('/v1/deepagents/agents', {
      body: {
        name: 'parallel-approver',
        runtime: { model: { model_id: 'scripted:demo' } },
        tools: { tools: [], interrupt_config: { write_file: true } },
        subagents: [{ name: 'writer', description: 'Writes files', instructions: 'Write.' }],
      },
    });
    expect(created.response.status).toBe(201);
    const write = (file_path: string) => `/call write_file ${JSON.stringify({ file_path, content: file_path })}`;
    const task = (description: string) => `/call task ${JSON.stringify({ description, subagent_type: 'writer' })}`;
    const message = `${task(write('/one.txt'))}\n${task(write('/two.txt'))}`;
    const asked: string[] = [];
    const out = capture();
    const result = await chat(
      {
        baseUrl: server.url,
        apiKey: server.adminKey,
        agent: 'parallel-approver',
        message,
        decide: async (action) => (asked.push(String(action.args.file_path)), action.args.file_path === '/one.txt' ? { type: 'approve' } : { type: 'reject', message: 'no' }),
      },
      out.io,
    );
    expect(result.pending).toEqual([]);
    expect(asked.sort()).toEqual(['/one.txt', '/two.txt']);
    // Each action's description stays under it: its further lines ("Args: …") are indented, so the
    // list of pending actions reads as a list.
    expect(out.err()).toMatch(/^ {2}\[1\/2\] write_file\(.*\) — Built-in tool write_file requires approval\.\n {6}Args: \{/m);
    expect(out.err()).not.toMatch(/^Args:/m);
    const thread = await server.client.GET('/v1/deepagents/threads/{thread_id}', { params: { path: { thread_id: result.threadId } } });
    expect(thread.data!.status).toBe('idle');
    expect(Object.keys((thread.data!.values as { files?: Record<string, unknown> }).files ?? {})).toEqual(['/one.txt']);
  });

  it('as a process: an unanswered pause exits 3, --approve answers it, and a server that is down is named', async () => {
    const [paused, approved, down] = await Promise.all([
      runHangar(['chat', 'approver', writeMemory], env()),
      runHangar(['chat', 'approver', '--approve', writeMemory], env()),
      runHangar(['chat', 'approver', 'hi'], { HANGAR_URL: 'http://127.0.0.1:9', HANGAR_API_KEY: server.adminKey }),
    ]);
    expect(paused.code, paused.stderr).toBe(3);
    expect(paused.stderr).toContain('write_file(');
    expect(paused.stderr).toContain('--approve');
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toContain('Done.');
    expect(down.code).toBe(1);
    expect(down.stderr).toBe('hangar: cannot reach the Hangar server at http://127.0.0.1:9 (is it running? set --url or HANGAR_URL)\n');
  }, 240_000); // CLI processes compile the sources on start: slow on a busy machine
});

describe('names, tool servers and traces from the CLI', () => {
  it('agents get/log/pull take names; mcp-servers add/list/connect; traces list/show show the runs', async () => {
    const [got, log, pulled, added] = await Promise.all([
      runHangar(['agents', 'get', 'approver', '--include-files'], env()),
      runHangar(['agents', 'log', 'approver'], env()),
      runHangar(['agents', 'pull', 'approver', path.join(work, 'pulled')], env()),
      runHangar(['mcp-servers', 'add', '--name', 'Docs', '--url', 'https://tools.example.com/mcp', '--header', 'Authorization=Bearer sk-1'], env()),
    ]);
    expect(got.code, got.stderr).toBe(0);
    expect(JSON.parse(got.stdout).files['AGENTS.md'].content).toContain('# approver');
    expect(log.code, log.stderr).toBe(0);
    expect(log.stdout.trim().split('\n')).toHaveLength(1);
    expect(pulled.code, pulled.stderr).toBe(0);
    expect(await readFile(path.join(work, 'pulled/tools.json'), 'utf8')).toContain('interrupt_config');
    expect(added.code, added.stderr).toBe(0);

    const [list, connect, traces] = await Promise.all([
      runHangar(['mcp-servers', 'list'], env()),
      runHangar(['mcp-servers', 'connect', 'Docs'], env()),
      runHangar(['traces', 'list', '--json'], env()),
    ]);
    expect(list.stdout).toContain('https://tools.example.com/mcp');
    expect(connect.stdout).toContain('Docs uses its stored headers');
    const page = JSON.parse(traces.stdout) as { items: { id: string; status: string }[] };
    expect(page.items.length).toBeGreaterThan(0);
    const shown = await runHangar(['traces', 'show', page.items[0]!.id], env());
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/\(chain, (success|error)/);
  }, 480_000); // eight CLI processes, each compiling the sources: ~15 s on a quiet machine, minutes at load 20
});

describe('hangar mcp-servers tools', () => {
  it('prints a tools.json body naming each tool of a real MCP server, by server name', async () => {
    const everything = await startEverythingServer();
    try {
      const reg = await server.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'everything', url: everything.url } });
      expect(reg.response.status).toBe(201);
      const body = await toolsJson(server.client, 'everything');
      expect(body.tools).toContainEqual({ name: 'echo', mcp_server_url: everything.url, mcp_server_name: 'everything' });
      expect(body.interrupt_config).toEqual({});
      // As the hosted CLI: by URL too (a trailing slash or not).
      expect(await toolsJson(server.client, `${everything.url}/`)).toEqual(body);
      await expect(toolsJson(server.client, 'http://127.0.0.1:9/elsewhere')).rejects.toThrow('no tool server is registered at http://127.0.0.1:9/elsewhere');
    } finally {
      await everything.close();
    }
  });
});

describe('hangar dev', () => {
  it('pushes the folder, pushes again on each change, and chats with the latest revision', async () => {
    const dir = path.join(work, 'devving');
    await initFolder(dir);
    const input = new PassThrough();
    const pushes: string[] = [];
    let pushed: () => void = () => {};
    const out = capture();
    const running = dev(dir, { client: server.client, baseUrl: server.url, apiKey: server.adminKey, input, debounceMs: 50, onPush: (r) => (pushes.push(r), pushed()) }, out.io);
    const nextPush = () => new Promise<void>((resolve) => (pushed = resolve));
    while (pushes.length === 0) await nextPush();
    const waitSecond = nextPush();
    await writeFile(path.join(dir, 'AGENTS.md'), '# devving\n\nAnswer in one line.\n');
    await waitSecond;
    expect(pushes).toHaveLength(2);
    input.write('hello dev\n');
    input.end();
    await running;
    expect(out.out()).toContain('You said: hello dev');
    // dev keeps its thread itself and has no --thread flag: it names the thread, nothing more.
    expect(out.err()).toMatch(/^thread: [0-9a-f-]{36}$/m);
    expect(out.err()).not.toContain('--thread');
    const agent = await server.client.GET('/v1/deepagents/agents', { params: { query: { name: 'devving' } } });
    expect(agent.data!.items[0]!.revision).toBe(pushes[1]);
  });

  it('after a failed run, says so once and sends the next line to the same thread', async () => {
    // A saved model configuration deleted after the push: every run of the agent fails at its start.
    const config = await server.client.POST('/v1/deepagents/model-configs', { body: { name: 'dev-gone', model_id: 'scripted:demo' } });
    expect(config.response.status).toBe(201);
    const dir = path.join(work, 'dev-failing');
    await initFolder(dir);
    const agentJson = JSON.parse(await readFile(path.join(dir, 'agent.json'), 'utf8')) as { runtime: { model: { model_id: string } } };
    agentJson.runtime.model.model_id = 'dev-gone';
    await writeFile(path.join(dir, 'agent.json'), JSON.stringify(agentJson));
    const input = new PassThrough();
    let pushed: () => void = () => {};
    const firstPush = new Promise<void>((resolve) => (pushed = resolve));
    const out = capture();
    const running = dev(dir, { client: server.client, baseUrl: server.url, apiKey: server.adminKey, input, onPush: () => pushed() }, out.io);
    await firstPush;
    await server.client.DELETE('/v1/deepagents/model-configs/{model_config_id}', { params: { path: { model_config_id: config.data!.id } } });
    input.write('first\nsecond\n');
    input.end();
    await running;
    const failures = [...out.err().matchAll(/^\[dev\] the run failed \((\w+)\); the thread ([0-9a-f-]{36}) takes the next message$/gm)];
    expect(failures, out.err()).toHaveLength(2);
    expect(failures[1]![2]).toBe(failures[0]![2]);
    expect(out.err()).not.toContain('--thread');
    // Each failure's reason is printed once, on its `error:` line.
    expect(out.err().match(/^error: /gm)).toHaveLength(2);
  });
});

describe('folders in the hosted CLI’s layout, and pulls that would lose work', () => {
  it('deploys a hosted-layout folder to the agent its agent.json names; a pull refuses a folder it would overwrite', async () => {
    const target = await pushAgent(server.client, await (async () => {
      const dir = path.join(work, 'hosted-target');
      await initFolder(dir);
      return dir;
    })());
    const dir = path.join(work, 'hosted');
    await mkdir(path.join(dir, 'subagents/helper'), { recursive: true });
    await writeFile(path.join(dir, 'agent.json'), JSON.stringify({ name: 'hosted-target', agent_id: target.id, model: 'scripted:demo', permissions: {} }));
    await writeFile(path.join(dir, 'AGENTS.md'), 'Answer briefly.\n');
    await writeFile(path.join(dir, 'subagents/helper/agent.json'), JSON.stringify({ name: 'helper', description: 'Looks things up' }));
    await writeFile(path.join(dir, 'subagents/helper/AGENTS.md'), 'You look things up.\n');
    await writeFile(path.join(dir, 'subagents/helper/tools.json'), JSON.stringify({ tools: [] }));

    // `hangar deploy`, the hosted CLI's verb: a dry run names the agent from agent.json and sends nothing.
    const dry = await runHangar(['deploy', dir, '--dry-run'], env());
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stderr).toContain(`Would update agent ${target.id}`);
    const deployed = await runHangar(['deploy', dir], env());
    expect(deployed.code, deployed.stderr).toBe(0);
    expect(deployed.stderr).toContain(`Updated agent ${target.id}`);
    const agent = await server.client.GET('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: target.id } } });
    expect(agent.data!.subagents).toEqual([expect.objectContaining({ name: 'helper', description: 'Looks things up', instructions: 'You look things up.\n' })]);
    const named = await server.client.GET('/v1/deepagents/agents', { params: { query: { name: 'hosted-target' } } });
    expect(named.data!.items).toHaveLength(1); // updated, not a second agent of the same name

    // Pulling another agent over this folder would replace local files and relink the folder: refused.
    const other = await pushAgent(server.client, await (async () => {
      const d = path.join(work, 'other-agent');
      await initFolder(d);
      return d;
    })());
    await writeFile(path.join(work, 'other-agent', 'AGENTS.md'), 'local edit, not pushed\n');
    await expect(pullAgent(server.client, target.id, path.join(work, 'other-agent'))).rejects.toThrow(`is the folder of agent ${other.id}`);
    expect(await readFile(path.join(work, 'other-agent', 'AGENTS.md'), 'utf8')).toBe('local edit, not pushed\n');
    // Its own agent, over an unpushed edit: refused too; --force overwrites.
    await expect(pullAgent(server.client, other.id, path.join(work, 'other-agent'))).rejects.toThrow("holds files that differ from the agent's (AGENTS.md)");
    await pullAgent(server.client, other.id, path.join(work, 'other-agent'), { force: true });
    expect(await readFile(path.join(work, 'other-agent', 'AGENTS.md'), 'utf8')).not.toBe('local edit, not pushed\n');
  }, 240_000);

  it('every client command names a server it cannot reach, and refuses a URL that is not one', async () => {
    const down = { HANGAR_URL: 'http://127.0.0.1:9', HANGAR_API_KEY: server.adminKey };
    const [schedules, repos, badUrl, noKey] = await Promise.all([
      runHangar(['schedules', 'list'], down),
      runHangar(['repos', '00000000-0000-4000-8000-000000000000'], down),
      runHangar(['agents', 'list', '--url', 'not-a-url'], { HANGAR_API_KEY: server.adminKey }),
      runHangar(['agents', 'list'], { HANGAR_URL: server.url }),
    ]);
    for (const r of [schedules, repos]) {
      expect(r.code).toBe(1);
      expect(r.stderr).toBe('hangar: cannot reach the Hangar server at http://127.0.0.1:9 (is it running? set --url or HANGAR_URL)\n');
    }
    // init --from an agent that does not exist leaves no empty folder behind.
    const missing = path.join(work, 'from-nothing');
    await expect(initFolder(missing, { from: 'no-such-agent', client: () => server.client })).rejects.toThrow('no agent named');
    await expect(readdir(missing)).rejects.toThrow('ENOENT');
    expect(badUrl.code).toBe(2);
    expect(badUrl.stderr).toContain('"not-a-url" is not an http(s) URL');
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toBe('hangar: an API key is needed: --api-key or HANGAR_API_KEY\n');
  }, 240_000);
});
