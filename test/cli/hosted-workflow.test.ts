// The hosted CLI's workflow as a new user runs it with `hangar`, as real processes against a real
// server: a project folder in the hosted layout deployed (dry run and for real), bad project folders
// refused with a message naming the file, agents deleted, and what agents' names may not do to a
// terminal.
import { mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runHangar } from '../support/cli.js';
import { startEverythingServer } from '../support/mcp.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let work: string;
beforeAll(async () => {
  server = await startTestServer();
  work = await mkdtemp(path.join(os.tmpdir(), 'hangar-hosted-workflow-'));
});
afterAll(async () => {
  await server?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

const env = () => ({ HANGAR_URL: server.url, HANGAR_API_KEY: server.adminKey });

async function folder(name: string, files: Record<string, string>): Promise<string> {
  const dir = path.join(work, name);
  for (const [p, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, p)), { recursive: true });
    await writeFile(path.join(dir, p), content);
  }
  return dir;
}

async function agentsNamed(name: string) {
  const res = await server.client.GET('/v1/deepagents/agents', { params: { query: { name } } });
  return res.data!.items.filter((a) => a.name === name);
}

describe('hangar deploy of a new folder in the hosted layout', () => {
  it('creates the agent from `model` in agent.json; the dry run shows the runtime it will send', async () => {
    const dir = await folder('hosted-new', {
      'agent.json': JSON.stringify({ name: 'hosted-new', description: 'From the hosted CLI', model: 'scripted:demo' }),
      'AGENTS.md': 'Answer briefly.\n',
    });
    const dry = await runHangar(['deploy', dir, '--dry-run'], env());
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({ name: 'hosted-new', runtime: { model: { model_id: 'scripted:demo' } } });
    expect(await agentsNamed('hosted-new')).toEqual([]);

    const deployed = await runHangar(['deploy', dir], env());
    expect(deployed.code, deployed.stderr).toBe(0);
    const [agent] = await agentsNamed('hosted-new');
    expect(agent).toMatchObject({ runtime: { model: { model_id: 'scripted:demo' } }, description: 'From the hosted CLI' });
    expect((await readFile(path.join(dir, '.hangar-agent'), 'utf8')).trim()).toBe(agent!.id);

    // {model_id} is the other spelling the hosted CLI accepts.
    const objectForm = await folder('hosted-object', { 'agent.json': JSON.stringify({ name: 'hosted-object', model: { model_id: 'scripted:demo' } }) });
    const second = await runHangar(['deploy', objectForm], env());
    expect(second.code, second.stderr).toBe(0);
    expect(await agentsNamed('hosted-object')).toEqual([expect.objectContaining({ runtime: { model: { model_id: 'scripted:demo' } } })]);
  }, 120_000);

  it('refuses a folder whose agent.json names no model or no name, saying which file and what it needs', async () => {
    const noModel = await folder('no-model', { 'agent.json': JSON.stringify({ name: 'no-model' }) });
    const noName = await folder('no-name', { 'agent.json': JSON.stringify({ model: 'scripted:demo' }) });
    const badModel = await folder('bad-model', { 'agent.json': JSON.stringify({ name: 'bad-model', model: 42 }) });
    const [a, b, c] = await Promise.all([noModel, noName, badModel].map((d) => runHangar(['deploy', d], env())));
    expect(a!.code).toBe(1);
    expect(a!.stderr).toContain(`${path.join(noModel, 'agent.json')}: the model is required`);
    expect(b!.code).toBe(1);
    expect(b!.stderr).toContain(`${path.join(noName, 'agent.json')}: "name" is required`);
    expect(c!.code).toBe(1);
    expect(c!.stderr).toContain(`${path.join(badModel, 'agent.json')}: model must be`);
    for (const name of ['no-model', 'bad-model']) expect(await agentsNamed(name)).toEqual([]);
    await expect(stat(path.join(noModel, '.hangar-agent'))).rejects.toThrow('ENOENT');
  }, 120_000);
});

describe('permissions in a hosted folder’s agent.json', () => {
  it('are the agent’s permissions on deploy, and a change to them is deployed', async () => {
    const json = (visibility: string) => JSON.stringify({ name: 'hosted-perms', model: 'scripted:demo', permissions: { identity: 'shared', visibility } });
    const dir = await folder('hosted-perms', { 'agent.json': json('user'), 'AGENTS.md': 'Hi.\n' });
    const created = await runHangar(['deploy', dir], env());
    expect(created.code, created.stderr).toBe(0);
    const [agent] = await agentsNamed('hosted-perms');
    expect(agent!.permissions).toMatchObject({ identity: 'shared', visibility: 'user' });
    await writeFile(path.join(dir, 'agent.json'), json('tenant'));
    const updated = await runHangar(['deploy', dir], env());
    expect(updated.code, updated.stderr).toBe(0);
    expect((await agentsNamed('hosted-perms'))[0]!.permissions).toMatchObject({ identity: 'shared', visibility: 'tenant' });
    // Nothing changed since: nothing is pushed.
    const again = await runHangar(['deploy', dir], env());
    expect(again.code, again.stderr).toBe(0);
    const log = await runHangar(['agents', 'log', 'hosted-perms'], env());
    expect(log.stdout.trim().split('\n')).toHaveLength(2);
  }, 120_000);
});

describe('what an agent’s name may do to a terminal', () => {
  it('`hangar agents log` shows control characters of a name escaped, as the listings do', async () => {
    const created = await server.client.POST('/v1/deepagents/agents', { body: { name: 'evil\u001b[2J\rforged', runtime: { model: { model_id: 'scripted:demo' } } } });
    expect(created.response.status).toBe(201);
    const log = await runHangar(['agents', 'log', created.data!.id], env());
    expect(log.code, log.stderr).toBe(0);
    expect(log.stdout).toContain('Create agent "evil\\x1b[2J\\x0dforged"');
    expect(log.stdout).not.toMatch(/\p{Cc}(?<!\n)/u);
  }, 60_000);
});

describe('deleting agents from the terminal', () => {
  it('`hangar agents delete AGENT` deletes by name; an unknown id is an error, not a silent success', async () => {
    const dir = await folder('to-delete', { 'agent.json': JSON.stringify({ name: 'to-delete', model: 'scripted:demo' }) });
    expect((await runHangar(['deploy', dir], env())).code).toBe(0);
    const [agent] = await agentsNamed('to-delete');
    const deleted = await runHangar(['agents', 'delete', 'to-delete'], env());
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stderr).toBe(`Deleted agent to-delete (${agent!.id})\n`);
    const gone = await server.client.GET('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: agent!.id } } });
    expect(gone.response.status).toBe(404);
    const again = await runHangar(['agents', 'delete', agent!.id], env());
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('404 agent_not_found');
  }, 120_000);

  it('`hangar delete DIR` (the hosted verb) deletes the agent the folder deploys to and unlinks the folder', async () => {
    const dir = await folder('deployed', { 'agent.json': JSON.stringify({ name: 'deployed', model: 'scripted:demo' }) });
    expect((await runHangar(['deploy', dir], env())).code).toBe(0);
    const [first] = await agentsNamed('deployed');
    const deleted = await runHangar(['delete', dir], env());
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stderr).toContain(`Deleted agent deployed (${first!.id})`);
    expect(await agentsNamed('deployed')).toEqual([]);
    await expect(stat(path.join(dir, '.hangar-agent'))).rejects.toThrow('ENOENT');
    // Unlinked: the next deploy creates a new agent instead of failing on the deleted one.
    expect((await runHangar(['deploy', dir], env())).code).toBe(0);
    const [second] = await agentsNamed('deployed');
    expect(second!.id).not.toBe(first!.id);

    // A hosted folder names its agent in agent.json: the delete says to remove it.
    const hosted = await folder('hosted-delete', { 'agent.json': JSON.stringify({ name: 'hosted-delete', agent_id: second!.id, model: 'scripted:demo' }) });
    const hostedDelete = await runHangar(['delete', hosted], env());
    expect(hostedDelete.code, hostedDelete.stderr).toBe(0);
    expect(hostedDelete.stderr).toContain(`${path.join(hosted, 'agent.json')} still names it (agent_id): remove agent_id before deploying the folder again`);

    const unlinked = await folder('never-deployed', { 'agent.json': JSON.stringify({ name: 'never-deployed', model: 'scripted:demo' }) });
    const refused = await runHangar(['delete', unlinked], env());
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`${unlinked} is not linked to an agent`);
  }, 120_000);
});

describe('project folders that are not folders', () => {
  it('deploy, dev, pull and init name a missing folder or a file given as one', async () => {
    const missing = path.join(work, 'no-such-folder');
    const file = path.join(work, 'a-file');
    await writeFile(file, 'not a folder\n');
    const source = await folder('pull-source', { 'agent.json': JSON.stringify({ name: 'pull-source', model: 'scripted:demo' }) });
    expect((await runHangar(['deploy', source], env())).code).toBe(0);
    const [deploy, dev, pull, init] = await Promise.all([
      runHangar(['deploy', missing], env()),
      runHangar(['dev', missing], env()),
      runHangar(['agents', 'pull', 'pull-source', file], env()),
      runHangar(['init', file], env()),
    ]);
    expect(deploy.code).toBe(1);
    expect(deploy.stderr).toBe(`hangar: ${missing}: no such folder\n`);
    expect(dev.code).toBe(1);
    expect(dev.stderr).toBe(`hangar: ${missing}: no such folder\n`);
    expect(pull.code).toBe(1);
    expect(pull.stderr).toBe(`hangar: ${file} is not a folder\n`);
    expect(init.code).toBe(1);
    expect(init.stderr).toBe(`hangar: ${file} is not a folder\n`);
  }, 120_000);
});

describe('hangar mcp-servers add, whose --url is the tool server’s', () => {
  it('names --hangar-url, its flag for the Hangar server, when that server cannot be reached or is not a URL', async () => {
    const [down, badUrl] = await Promise.all([
      runHangar(['mcp-servers', 'add', '--name', 'docs', '--url', 'http://127.0.0.1:9/mcp', '--hangar-url', 'http://127.0.0.1:9'], { HANGAR_API_KEY: server.adminKey }),
      runHangar(['mcp-servers', 'add', '--name', 'docs', '--url', 'http://127.0.0.1:9/mcp', '--hangar-url', 'not-a-url'], { HANGAR_API_KEY: server.adminKey }),
    ]);
    expect(down.code).toBe(1);
    expect(down.stderr).toBe('hangar: cannot reach the Hangar server at http://127.0.0.1:9 (is it running? set --hangar-url or HANGAR_URL)\n');
    expect(badUrl.code).toBe(2);
    expect(badUrl.stderr).toContain('"not-a-url" is not an http(s) URL (--hangar-url or HANGAR_URL');
  }, 60_000);
});

describe('deploying a folder the agent already matches', () => {
  it('pushes nothing and prints the current revision, instead of adding an empty revision each time', async () => {
    const dir = await folder('unchanged', { 'agent.json': JSON.stringify({ name: 'unchanged', model: 'scripted:demo' }), 'AGENTS.md': 'Be brief.\n' });
    // The create writes agent.json in Hangar's form, so the next deploy sends the folder's own.
    expect((await runHangar(['deploy', dir], env())).code).toBe(0);
    const first = await runHangar(['deploy', dir], env());
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toContain('Updated agent');
    const second = await runHangar(['deploy', dir], env());
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toBe(first.stdout);
    expect(second.stderr).toContain('already has these files; nothing was pushed');
    const log = await runHangar(['agents', 'log', 'unchanged'], env());
    expect(log.stdout.trim().split('\n')).toHaveLength(2); // created, then agent.json in the hosted form; no empty revision
  }, 120_000);
});

describe('a project folder holding a file whose name is not UTF-8', () => {
  it('is refused, naming the file, instead of failing on a name Node made up', async () => {
    const dir = await folder('bad-name', { 'agent.json': JSON.stringify({ name: 'bad-name', model: 'scripted:demo' }) });
    // Latin-1 "é" (one 0xE9 byte): a legal Linux file name that is not UTF-8.
    await writeFile(Buffer.concat([Buffer.from(`${dir}/caf`), Buffer.from([0xe9]), Buffer.from('.md')]), 'x\n');
    const deployed = await runHangar(['deploy', dir], env());
    expect(deployed.code).toBe(1);
    expect(deployed.stderr).toContain(`${path.join(dir, 'caf\ufffd.md')}: the file name is not UTF-8; rename it`);
    expect(deployed.stderr).not.toContain('ENOENT');
    expect(await agentsNamed('bad-name')).toEqual([]);
  }, 120_000);
});

describe('a project folder holding a file that is not text', () => {
  it('is refused, naming the file, instead of uploading it with its bytes replaced', async () => {
    const dir = await folder('with-binary', { 'agent.json': JSON.stringify({ name: 'with-binary', model: 'scripted:demo' }) });
    await writeFile(path.join(dir, 'logo.png'), Buffer.from([0xff, 0xfe, 0x89, 0x50, 0x4e, 0x47]));
    const deployed = await runHangar(['deploy', dir], env());
    expect(deployed.code).toBe(1);
    expect(deployed.stderr).toContain(`${path.join(dir, 'logo.png')} is not UTF-8 text`);
    expect(await agentsNamed('with-binary')).toEqual([]);
    // A byte-order mark is text, and arrives as it is.
    await writeFile(path.join(dir, 'logo.png'), '\uFEFFhello\n');
    expect((await runHangar(['deploy', dir], env())).code).toBe(0);
    const [agent] = await agentsNamed('with-binary');
    const files = await server.client.GET('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: agent!.id }, query: { include_files: 'true' } } });
    expect(files.data!.files!['logo.png']!.content).toBe('\uFEFFhello\n');
  }, 120_000);
});

describe('symbolic links in a project folder', () => {
  it('are followed: a linked file is pushed, not deleted from the agent; a dangling link or a loop is refused', async () => {
    const dir = await folder('linked', { 'agent.json': JSON.stringify({ name: 'linked', runtime: { model: { model_id: 'scripted:demo' } } }), 'notes.md': 'first\n' });
    await folder('shared', { 'base.md': 'shared instructions\n', 'skills/lookup/SKILL.md': '---\nname: lookup\ndescription: Looks up\n---\nLook it up.\n' });
    expect((await runHangar(['deploy', dir], env())).code).toBe(0);
    await rm(path.join(dir, 'notes.md'));
    await symlink(path.join(work, 'shared/base.md'), path.join(dir, 'notes.md'));
    await symlink(path.join(work, 'shared/skills'), path.join(dir, 'skills'));
    const deployed = await runHangar(['deploy', dir], env());
    expect(deployed.code, deployed.stderr).toBe(0);
    const [agent] = await agentsNamed('linked');
    const read = await server.client.GET('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: agent!.id }, query: { include_files: 'true' } } });
    expect(read.data!.files!['notes.md']!.content).toBe('shared instructions\n');
    expect(read.data!.skills).toEqual([expect.objectContaining({ name: 'lookup', instructions: 'Look it up.\n' })]);

    await symlink(path.join(work, 'nowhere.md'), path.join(dir, 'dangling.md'));
    const dangling = await runHangar(['deploy', dir], env());
    expect(dangling.code).toBe(1);
    expect(dangling.stderr).toContain(`${path.join(dir, 'dangling.md')} is a symbolic link to nothing`);
    await rm(path.join(dir, 'dangling.md'));
    await symlink(dir, path.join(dir, 'loop'));
    const loop = await runHangar(['deploy', dir], env());
    expect(loop.code).toBe(1);
    expect(loop.stderr).toContain(`${path.join(dir, 'loop')} links back to a folder that holds it`);
    const after = await server.client.GET('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: agent!.id } } });
    expect(after.data!.revision).toBe(read.data!.revision);
  }, 120_000);
});

describe('hangar mcp-servers add --auth-type oauth', () => {
  it('takes the provider by its provider_id, as `hangar auth login` does, and names a missing or unknown one', async () => {
    const provider = await server.client.POST('/v2/auth/providers', {
      body: { provider_id: 'cli-login', name: 'CLI login', client_id: 'hangar', auth_url: 'http://127.0.0.1:9/authorize', token_url: 'http://127.0.0.1:9/token', uses_pkce: true, token_endpoint_auth_method: 'none' },
    });
    expect(provider.response.status).toBe(200);
    const [bySlug, unknown, missing] = await Promise.all([
      runHangar(['mcp-servers', 'add', '--name', 'oauth-tools', '--url', 'http://127.0.0.1:9/oauth-mcp', '--auth-type', 'oauth', '--oauth-provider', 'cli-login'], env()),
      runHangar(['mcp-servers', 'add', '--name', 'other', '--url', 'http://127.0.0.1:9/other-mcp', '--auth-type', 'oauth', '--oauth-provider', 'no-such-login'], env()),
      runHangar(['mcp-servers', 'add', '--name', 'third', '--url', 'http://127.0.0.1:9/third-mcp', '--auth-type', 'oauth'], env()),
    ]);
    expect(bySlug.code, bySlug.stderr).toBe(0);
    const registered = await server.client.GET('/v1/deepagents/mcp-servers/{mcp_server_id}', { params: { path: { mcp_server_id: bySlug.stdout.trim() } } });
    expect(registered.data).toMatchObject({ auth_type: 'oauth', oauth_provider_id: provider.data!.id });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe('hangar: --oauth-provider: no OAuth provider "no-such-login" in this workspace\n');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('--auth-type oauth needs --oauth-provider');
    const all = await server.client.GET('/v1/deepagents/mcp-servers');
    expect(all.data!.map((s) => s.name).sort()).not.toContain('other');
  }, 120_000);
});

describe('hangar logs AGENT (the hosted CLI’s logs of a deployed agent)', () => {
  it('lists that agent’s runs, newest first, with the error of a failed one; not those of an agent whose name contains its name', async () => {
    const config = await server.client.POST('/v1/deepagents/model-configs', { body: { name: 'soon-gone', model_id: 'scripted:demo' } });
    expect(config.response.status).toBe(201);
    const ok = await folder('logged', { 'agent.json': JSON.stringify({ name: 'logged', model: 'scripted:demo' }) });
    const broken = await folder('logged-broken', { 'agent.json': JSON.stringify({ name: 'logged-broken', model: 'soon-gone' }) });
    for (const dir of [ok, broken]) expect((await runHangar(['deploy', dir], env())).code).toBe(0);
    expect((await server.client.DELETE('/v1/deepagents/model-configs/{model_config_id}', { params: { path: { model_config_id: config.data!.id } } })).response.status).toBe(204);
    const chats = await Promise.all([runHangar(['chat', 'logged', 'first'], env()), runHangar(['chat', 'logged', 'second'], env()), runHangar(['chat', 'logged-broken', 'fails'], env())]);
    expect(chats.map((c) => c.code)).toEqual([0, 0, 1]);

    // Traces are written as runs end; ask until both are there.
    type Row = { id: string; status: string; error: string | null; metadata: { thread_id: string } };
    let rows: Row[] = [];
    while (rows.length < 2) rows = JSON.parse((await runHangar(['logs', 'logged', '--json'], env())).stdout) as Row[];
    expect(rows).toHaveLength(2);
    expect(rows.every((r) => r.status === 'success')).toBe(true);
    const table = await runHangar(['logs', 'logged'], env());
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout.split('\n')[0]).toMatch(/^RUN\s+THREAD\s+STATUS\s+STARTED\s+LATENCY\s+TOKENS\s+ERROR$/);
    expect(table.stdout.trim().split('\n')).toHaveLength(3);

    let failed: Row[] = [];
    while (failed.length < 1) failed = JSON.parse((await runHangar(['logs', 'logged-broken', '--json'], env())).stdout) as Row[];
    expect(failed).toEqual([expect.objectContaining({ status: 'error', error: expect.stringContaining('soon-gone') })]);

    const [unknown, badLimit, badTraceLimit] = await Promise.all([
      runHangar(['logs', 'no-such-agent'], env()),
      runHangar(['logs', 'logged', '--limit', '5x'], env()),
      runHangar(['traces', 'list', '--limit', '5x'], env()),
    ]);
    expect(badTraceLimit.code).toBe(1);
    expect(badTraceLimit.stderr).toContain('--limit: a whole number from 1 to 100');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe('hangar: no agent named "no-such-agent"\n');
    expect(badLimit.code).toBe(1);
    expect(badLimit.stderr).toContain('--limit: a whole number from 1 to 100');
  }, 240_000);
});

describe('tools.json naming a tool its server does not offer', () => {
  it('deploys (the server accepts it) but warns, naming the file, the server and the tool', async () => {
    const mcp = await startEverythingServer();
    try {
      const added = await runHangar(['mcp-servers', 'add', '--name', 'Everything', '--url', mcp.url], env());
      expect(added.code, added.stderr).toBe(0);
      const tools = { tools: [{ name: 'echo', mcp_server_url: mcp.url }, { name: 'ecoh', mcp_server_url: `${mcp.url}/` }], interrupt_config: {} };
      const dir = await folder('typo', {
        'agent.json': JSON.stringify({ name: 'typo', model: 'scripted:demo' }),
        'tools.json': JSON.stringify(tools),
        'subagents/helper/AGENTS.md': '---\ndescription: helps\n---\nHelp.\n',
        'subagents/helper/tools.json': JSON.stringify({ tools: [{ name: 'no-such-tool', mcp_server_url: mcp.url }] }),
      });
      const dry = await runHangar(['deploy', dir, '--dry-run'], env());
      expect(dry.code, dry.stderr).toBe(0);
      expect(dry.stderr).toContain(`warning: tools.json: ${mcp.url} offers no tool named "ecoh"`);
      const deployed = await runHangar(['deploy', dir], env());
      expect(deployed.code, deployed.stderr).toBe(0);
      const warnings = deployed.stderr.split('\n').filter((l) => l.startsWith('warning:'));
      expect(warnings).toEqual([
        expect.stringContaining(`tools.json: ${mcp.url} offers no tool named "ecoh"; runs will leave it out`),
        expect.stringContaining(`subagents/helper/tools.json: ${mcp.url} offers no tool named "no-such-tool"`),
      ]);
      expect(await agentsNamed('typo')).toHaveLength(1);
    } finally {
      await mcp.close();
    }
  }, 120_000);
});
