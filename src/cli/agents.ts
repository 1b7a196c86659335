// `hangar agents push|pull|list|log`: an agent folder on disk ⇄ an agent on a Hangar server, through
// the typed client. The folder has the layout of the agent's repository (docs/agents.md).
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { createHangarClient, type HangarClient } from '../client/index.js';
import { pathProblem } from '../core/agents/tree.js';
import { resolveAgentId } from './chat.js';
import { table } from './table.js';

/** The file in an agent folder that remembers which agent it is; never uploaded. */
export const AGENT_ID_FILE = '.hangar-agent';

/** Folders never uploaded: git's own and Hangar's marker. */
const SKIPPED = new Set(['.git', AGENT_ID_FILE]);

/** An API failure, with the server's code and detail. */
export class ApiError extends Error {
  override name = 'ApiError';
}

interface ClientFlags {
  url?: string;
  apiKey?: string;
}

/** The client from `--url`/`HANGAR_URL` and `--api-key`/`HANGAR_API_KEY`. */
export function clientFrom(flags: ClientFlags, env: NodeJS.ProcessEnv = process.env): HangarClient {
  const baseUrl = flags.url ?? env.HANGAR_URL ?? 'http://127.0.0.1:8124';
  const apiKey = flags.apiKey ?? env.HANGAR_API_KEY;
  if (!apiKey) throw new ApiError('no API key: pass --api-key or set HANGAR_API_KEY');
  // A refused connection should say which server, not just "fetch failed".
  const reach: typeof fetch = (input, init) =>
    fetch(input, init).catch(() => {
      throw new ApiError(`cannot reach the Hangar server at ${baseUrl}; set --url or HANGAR_URL`);
    });
  return createHangarClient({ baseUrl, apiKey, fetch: reach });
}

/** Every file under `dir` by relative path (with `/`), except .git and the marker file. */
export async function readAgentFolder(dir: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  const walk = async (rel: string) => {
    for (const entry of await readdir(path.join(dir, rel), { withFileTypes: true })) {
      if (rel === '' && SKIPPED.has(entry.name)) continue;
      const child = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory()) await walk(child);
      else if (entry.isFile()) files[child] = await readFile(path.join(dir, child), 'utf8');
    }
  };
  await walk('');
  return files;
}

function fail(error: unknown, response: Response): never {
  const body = error as { code?: string; detail?: string; error?: string } | undefined;
  throw new ApiError(`${response.status} ${body?.code ?? body?.error ?? ''}: ${body?.detail ?? 'request failed'}`.replace(' :', ':'));
}

/**
 * Create (no id known) or update the agent from folder `dir`; returns its id and new revision.
 * The id comes from `agentId`, else from `dir/.hangar-agent`; after a create it is written there.
 */
export async function pushAgent(
  client: HangarClient,
  dir: string,
  agentId?: string,
  options: { dryRun?: (plan: PushPlan) => void } = {},
): Promise<{ id: string; revision: string; created: boolean }> {
  const files = await readAgentFolder(dir);
  const id = agentId ? await resolveAgentId(client, agentId) : await readMarker(dir);
  if (id) {
    const current = await client.GET('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: id }, query: { include_files: 'true' } } });
    if (!current.data) fail(current.error, current.response);
    const body: Record<string, { content: string | null }> = {};
    const remote = current.data.files ?? {};
    for (const p of Object.keys(remote)) if (!(p in files)) body[p] = { content: null };
    for (const [p, content] of Object.entries(files)) if (remote[p]?.content !== content) body[p] = { content };
    if (options.dryRun) {
      options.dryRun({ action: 'update', agentId: id, request: { method: 'PATCH', path: `/v1/deepagents/agents/${id}`, body: { files: body } }, files: changes(remote, files) });
      return { id, revision: current.data.revision, created: false };
    }
    const res = await client.PATCH('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: id } }, body: { files: body } });
    if (!res.data) fail(res.error, res.response);
    return { id, revision: res.data.revision, created: false };
  }
  const agentJson = files['agent.json'];
  if (agentJson === undefined) throw new ApiError(`${path.join(dir, 'agent.json')} is missing: it holds the agent's name, description and runtime`);
  let meta: { name?: string; description?: string; runtime?: { model: { model_id: string } }; extras?: Record<string, unknown>; backend?: Record<string, unknown> };
  try {
    meta = JSON.parse(agentJson) as typeof meta;
  } catch {
    throw new ApiError(`${path.join(dir, 'agent.json')} is not valid JSON`);
  }
  const rest = Object.fromEntries(Object.entries(files).filter(([p]) => p !== 'agent.json').map(([p, content]) => [p, { content }]));
  const createBody = {
    name: meta.name ?? '',
    ...(meta.description !== undefined ? { description: meta.description } : {}),
    ...(meta.runtime !== undefined ? { runtime: meta.runtime } : {}),
    ...(meta.extras !== undefined ? { extras: meta.extras } : {}),
    ...(meta.backend !== undefined ? { backend: meta.backend } : {}),
    files: rest,
  };
  if (options.dryRun) {
    options.dryRun({ action: 'create', request: { method: 'POST', path: '/v1/deepagents/agents', body: createBody }, files: changes({}, files) });
    return { id: '', revision: '', created: true };
  }
  const res = await client.POST('/v1/deepagents/agents', { body: createBody });
  if (!res.data) fail(res.error, res.response);
  await writeFile(path.join(dir, AGENT_ID_FILE), `${res.data.id}\n`);
  return { id: res.data.id, revision: res.data.revision, created: true };
}

/** What a push would do: the request it would send and each file's change. */
export interface PushPlan {
  action: 'create' | 'update';
  agentId?: string;
  request: { method: string; path: string; body: unknown };
  files: { path: string; change: 'added' | 'changed' | 'deleted' | 'unchanged' }[];
}

function changes(remote: Record<string, { content?: string | null | undefined }>, local: Record<string, string>): PushPlan['files'] {
  const paths = [...new Set([...Object.keys(remote), ...Object.keys(local)])].sort();
  return paths.map((p) => ({
    path: p,
    change: !(p in local) ? 'deleted' : !(p in remote) ? 'added' : remote[p]!.content === local[p] ? 'unchanged' : 'changed',
  }));
}

/** Write the agent's files into `dir` (created if needed; it must hold no other files). */
export async function pullAgent(client: HangarClient, agentId: string, dir: string): Promise<{ revision: string; files: number }> {
  const res = await client.GET('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: agentId }, query: { include_files: 'true' } } });
  if (!res.data) fail(res.error, res.response);
  await mkdir(dir, { recursive: true });
  const existing = Object.keys(await readAgentFolder(dir));
  const remote = res.data.files ?? {};
  const stray = existing.filter((p) => !(p in remote));
  if (stray.length > 0) throw new ApiError(`${dir} holds files the agent does not have (${stray.slice(0, 3).join(', ')}…); pull into an empty folder`);
  for (const [p, entry] of Object.entries(remote)) {
    // The server checks paths too; checking here keeps a hostile server from writing outside `dir`.
    if (pathProblem(p)) throw new ApiError(`the server sent an unsafe path ${JSON.stringify(p)}`);
    await mkdir(path.dirname(path.join(dir, p)), { recursive: true });
    await writeFile(path.join(dir, p), entry.content ?? '');
  }
  await writeFile(path.join(dir, AGENT_ID_FILE), `${agentId}\n`);
  return { revision: res.data.revision, files: Object.keys(remote).length };
}

async function readMarker(dir: string): Promise<string | undefined> {
  const file = path.join(dir, AGENT_ID_FILE);
  if (!(await stat(file).catch(() => undefined))) return undefined;
  return (await readFile(file, 'utf8')).trim() || undefined;
}

/** Add `hangar agents …` to the program. */
export function registerAgentCommands(program: Command): void {
  const agents = program
    .command('agents')
    .description('Push, pull and inspect agents on a Hangar server (HANGAR_URL, HANGAR_API_KEY).')
    .option('--url <url>', 'server URL (HANGAR_URL; default http://127.0.0.1:8124)')
    .option('--api-key <key>', 'API key (HANGAR_API_KEY)');
  const client = () => clientFrom(agents.opts<ClientFlags>());

  agents
    .command('push <dir>')
    .description(`Create an agent from a folder, or update it when the folder knows its id (${AGENT_ID_FILE} or --agent); prints the new revision.`)
    .option('--agent <agent>', 'update this agent (id or exact name)')
    .option('--dry-run', 'print the request and the file tree it would send, change nothing')
    .action(async (dir: string, flags: { agent?: string; dryRun?: boolean }) => {
      if (flags.dryRun) {
        await pushAgent(client(), dir, flags.agent, {
          dryRun: (plan) => {
            process.stderr.write(`Would ${plan.action} ${plan.agentId ? `agent ${plan.agentId}` : 'an agent'} (${plan.request.method} ${plan.request.path}); nothing was sent.\n`);
            for (const f of plan.files) process.stderr.write(`  ${f.change.padEnd(9)} ${f.path}\n`);
            process.stdout.write(`${JSON.stringify(plan.request.body, null, 2)}\n`);
          },
        });
        return;
      }
      const r = await pushAgent(client(), dir, flags.agent);
      process.stderr.write(`${r.created ? 'Created' : 'Updated'} agent ${r.id}\n`);
      process.stdout.write(`${r.revision}\n`);
    });

  agents
    .command('pull <agent> <dir>')
    .description('Write an agent’s files into a folder (new or empty); AGENT is an id or exact name.')
    .action(async (agent: string, dir: string) => {
      const c = client();
      const r = await pullAgent(c, await resolveAgentId(c, agent), dir);
      process.stdout.write(`Pulled ${r.files} files at revision ${r.revision}\n`);
    });

  agents
    .command('get <agent>')
    .description('Print an agent as JSON (AGENT: id or exact name).')
    .option('--include-files', 'include its file tree')
    .action(async (agent: string, flags: { includeFiles?: boolean }) => {
      const c = client();
      const res = await c.GET('/v1/deepagents/agents/{agent_id}', {
        params: { path: { agent_id: await resolveAgentId(c, agent) }, query: flags.includeFiles ? { include_files: 'true' } : {} },
      });
      if (!res.data) fail(res.error, res.response);
      process.stdout.write(`${JSON.stringify(res.data, null, 2)}\n`);
    });

  agents
    .command('list')
    .description('List the workspace’s agents, most recently updated first.')
    .action(async () => {
      const c = client();
      const rows: string[][] = [];
      let cursor: string | undefined;
      do {
        const res = await c.GET('/v1/deepagents/agents', { params: { query: { page_size: 100, ...(cursor ? { cursor } : {}) } } });
        if (!res.data) fail(res.error, res.response);
        for (const a of res.data.items) rows.push([a.id, a.name, a.revision.slice(0, 12), a.updated_at]);
        cursor = res.data.next_cursor ?? undefined;
      } while (cursor);
      process.stdout.write(table(['ID', 'NAME', 'REVISION', 'UPDATED'], rows));
    });

  agents
    .command('log <agent>')
    .description('Show an agent’s revisions, newest first (AGENT: id or exact name).')
    .action(async (agent: string) => {
      const c = client();
      const agentId = await resolveAgentId(c, agent);
      let cursor: string | undefined;
      do {
        const res = await c.GET('/v1/deepagents/agents/{agent_id}/revisions', { params: { path: { agent_id: agentId }, query: { page_size: 100, ...(cursor ? { cursor } : {}) } } });
        if (!res.data) fail(res.error, res.response);
        for (const r of res.data.items) process.stdout.write(`${r.id}  ${r.created_at}  ${r.message}\n`);
        cursor = res.data.next_cursor ?? undefined;
      } while (cursor);
    });
}
