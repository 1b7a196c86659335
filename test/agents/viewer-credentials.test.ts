// A tool server URL may carry a credential (`?api_key=…`). Owners and editors read an agent as they
// wrote it; a viewer key reads every JSON form of it (get, list, revisions, raw files) with the
// credential redacted, and is refused a git clone of a history holding one. Traces redact the
// credential but not the URL's harmless settings (`mode=stream`).
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HangarClient } from '../../src/client/index.js';
import { freePort } from '../support/mcp.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent, createThread, run } from '../runtime/support.js';

const execFileP = promisify(execFile);
const SECRET = 'SECRETvalue';
const HEADER_SECRET = 'hdr-credential-5a1f9c';
let server: TestServer;
let viewerKey: string;
let viewer: HangarClient;
let toolUrl: string;
let shownUrl: string;

beforeAll(async () => {
  server = await startTestServer();
  viewerKey = await server.createKey({ role: 'viewer' });
  viewer = server.clientFor(viewerKey);
  // Nothing listens there: registering and naming a tool server does not call it.
  const base = `http://127.0.0.1:${await freePort()}/mcp`;
  toolUrl = `${base}?api_key=${SECRET}&mode=stream`;
  shownUrl = `${base}?api_key=[redacted]&mode=stream`;
  const created = await server.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'Keyed', url: toolUrl, headers: [{ key: 'X-Tenant-Key', value: HEADER_SECRET }] } });
  expect(created.response.status).toBe(201);
});
afterAll(async () => {
  await server?.close();
});

async function git(args: string[], cwd?: string): Promise<{ ok: boolean; out: string }> {
  try {
    const { stdout } = await execFileP('git', args, {
      cwd,
      env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: '' },
    });
    return { ok: true, out: stdout };
  } catch (error) {
    return { ok: false, out: String((error as { stderr?: string }).stderr ?? error) };
  }
}

/** `git clone` of the agent with `apiKey`; the file tools.json of the clone, or git's error. */
async function clone(agentId: string, apiKey: string): Promise<{ ok: boolean; out: string; tools?: string }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'hangar-viewer-clone-'));
  try {
    const result = await git(['-c', `http.extraHeader=X-Api-Key: ${apiKey}`, 'clone', '--quiet', `${server.url}/v1/deepagents/agents/${agentId}.git`, path.join(dir, 'a')]);
    if (!result.ok) return result;
    return { ...result, tools: await readFile(path.join(dir, 'a', 'tools.json'), 'utf8') };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('what a viewer reads of an agent naming a tool server URL with a credential', () => {
  it('gets, lists and reads revisions and raw files with the credential redacted; owners read them as written', async () => {
    const agentId = await createAgent(server, {
      description: `Uses ${toolUrl}`,
      instructions: `Search with ${toolUrl}; the key is ${SECRET}, the tenant key ${HEADER_SECRET}.`,
      tools: { tools: [{ name: 'search', mcp_server_url: toolUrl }], interrupt_config: { [`${toolUrl}::search`]: true } },
      subagents: [{ name: 'helper', instructions: 'Helps.', tools: { tools: [{ name: 'search', mcp_server_url: toolUrl }], interrupt_config: {} } }],
      extras: { docs: toolUrl },
      files: { 'notes/setup.md': { content: `Registered at ${toolUrl}\n` } },
    });
    const path_ = { params: { path: { agent_id: agentId }, query: { include_files: 'true' as const } } };

    // The owner reads what it wrote.
    const owned = await server.client.GET('/v1/deepagents/agents/{agent_id}', path_);
    expect(owned.data!.tools.tools[0]!.mcp_server_url).toBe(toolUrl);
    expect(JSON.parse(owned.data!.files!['tools.json']!.content!).tools[0].mcp_server_url).toBe(toolUrl);
    const revision = owned.data!.revision;

    // A viewer reads the same agent with every credential redacted, the URL's settings kept.
    const got = await viewer.GET('/v1/deepagents/agents/{agent_id}', path_);
    expect(got.response.status).toBe(200);
    expect(got.data!.tools).toEqual({ tools: [{ name: 'search', mcp_server_url: shownUrl }], interrupt_config: { [`${shownUrl}::search`]: true } });
    expect(got.data!.subagents[0]!.tools!.tools![0]!.mcp_server_url).toBe(shownUrl);
    expect(got.data!.instructions).toBe(`Search with ${shownUrl}; the key is [redacted], the tenant key [redacted].`);
    expect(got.data!.extras).toEqual({ docs: shownUrl });
    expect(got.data!.files!['notes/setup.md']!.content).toBe(`Registered at ${shownUrl}\n`);
    expect(JSON.parse(got.data!.files!['tools.json']!.content!).tools[0].mcp_server_url).toBe(shownUrl);
    expect(got.data!.revision).toBe(revision);

    const listed = await viewer.GET('/v1/deepagents/agents', { params: { query: { page_size: 100 } } });
    const atRevision = await viewer.GET('/v1/deepagents/agents/{agent_id}/revisions/{revision}', { params: { path: { agent_id: agentId, revision } } });
    const revisions = await viewer.GET('/v1/deepagents/agents/{agent_id}/revisions', { params: { path: { agent_id: agentId } } });
    expect([listed.response.status, atRevision.response.status, revisions.response.status]).toEqual([200, 200, 200]);
    expect(listed.data!.items.find((a) => a.id === agentId)!.extras).toEqual({ docs: shownUrl });
    expect(got.data!.description).toBe(`Uses ${shownUrl}`);
    // The LangGraph assistant forms of the agent too.
    const assistant = await viewer.GET('/v1/deepagents/assistants/{assistant_id}', { params: { path: { assistant_id: agentId } } });
    const found = await viewer.POST('/v1/deepagents/assistants/search', { body: { graph_id: agentId, limit: 10, offset: 0 } });
    expect([assistant.response.status, found.response.status]).toEqual([200, 200]);
    expect(assistant.data!.description).toBe(`Uses ${shownUrl}`);
    expect(atRevision.data!.tools.tools[0]!.mcp_server_url).toBe(shownUrl);
    for (const [where, body] of Object.entries({ got: got.data, listed: listed.data, atRevision: atRevision.data, revisions: revisions.data, assistant: assistant.data, found: found.data })) {
      const text = JSON.stringify(body);
      expect({ where, leaked: text.includes(SECRET) || text.includes(HEADER_SECRET) }).toEqual({ where, leaked: false });
    }
  });

  it('refuses a viewer a git clone of a history holding a credential, and clones the rest', async () => {
    const keyed = await createAgent(server, { tools: { tools: [{ name: 'search', mcp_server_url: toolUrl }], interrupt_config: {} } });
    const plain = await createAgent(server, { instructions: 'Nothing secret here: https://docs.example.com/guide#setup' });

    const refused = await clone(keyed, viewerKey);
    expect(refused.ok).toBe(false);
    // git shows the reason to its user.
    expect(refused.out).toContain("remote: error: this agent's history holds a credential");
    expect(refused.out).toContain('403');
    expect(refused.out).not.toContain(SECRET);
    // An owner clones the history as it is.
    const owned = await clone(keyed, server.adminKey);
    expect(owned.ok).toBe(true);
    expect(JSON.parse(owned.tools!).tools[0].mcp_server_url).toBe(toolUrl);
    // A history without credentials clones for a viewer as before.
    expect((await clone(plain, viewerKey)).ok).toBe(true);

    // Even once the credential is gone from the head, the history still holds it.
    const patched = await server.client.PATCH('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: keyed } }, body: { tools: { tools: [] } } });
    expect(patched.response.status).toBe(200);
    expect((await clone(keyed, viewerKey)).ok).toBe(false);
  });
});

describe('trace redaction of tool server URLs', () => {
  it('redacts the credential but not the URL’s harmless settings', async () => {
    const agentId = await createAgent(server);
    const threadId = await createThread(server, agentId);
    const said = `please stream the answer; my key is ${SECRET}`;
    const done = await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: said }] });
    const trace = await server.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}/trace', { params: { path: { thread_id: threadId, run_id: done.stream.runId! } } });
    expect(trace.response.status).toBe(200);
    const text = JSON.stringify(trace.data);
    expect(text).not.toContain(SECRET);
    expect(text).toContain('please stream the answer; my key is [redacted]');
  });
});
