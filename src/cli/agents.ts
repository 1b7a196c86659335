// `hangar agents push|pull|list|log`: an agent folder on disk ⇄ an agent on a Hangar server, through
// the typed client. The folder has the layout of the agent's repository (docs/agents.md).
import { mkdir, readdir, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { createHangarClient, type HangarClient } from '../client/index.js';
import { pathProblem } from '../core/agents/tree.js';
import { resolveAgentId } from './chat.js';
import { printable, table } from './table.js';
import { clientOptions, clientTarget, describeError } from './target.js';

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
  return createHangarClient(clientTarget(flags, env));
}

/** Refuse a DIR that is missing or not a folder, naming it (rather than a bare ENOENT or ENOTDIR). */
export async function folderOf(dir: string, options: { mayBeMissing?: boolean } = {}): Promise<void> {
  const found = await stat(dir).catch(() => undefined);
  if (!found) {
    if (options.mayBeMissing) return;
    throw new ApiError(`${dir}: no such folder`);
  }
  if (!found.isDirectory()) throw new ApiError(`${dir} is not a folder`);
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** A file's content as text; a file that is not UTF-8 is refused (decoding it would change its bytes). */
function text(file: string, bytes: Buffer): string {
  try {
    return UTF8.decode(bytes);
  } catch {
    throw new ApiError(`${file} is not UTF-8 text: an agent's files are text, and this one would not arrive as it is; nothing was pushed`);
  }
}

/** Every file under `dir` by relative path (with `/`), except .git and the marker file. */
export async function readAgentFolder(dir: string): Promise<Record<string, string>> {
  await folderOf(dir);
  const files: Record<string, string> = {};
  // Symbolic links are followed (a file left out would be deleted from the agent on update); `open`
  // holds the real paths of the folders being walked, so a link back up the tree is refused.
  const walk = async (rel: string, open: string[]) => {
    for (const entry of await readdir(path.join(dir, rel), { withFileTypes: true, encoding: 'buffer' })) {
      // A name that is not UTF-8 cannot be an agent's path (JSON carries text): say so, by name,
      // rather than fail on the lossy name Node would give it.
      let name: string;
      try {
        name = UTF8.decode(entry.name);
      } catch {
        throw new ApiError(`${path.join(dir, rel, entry.name.toString('utf8'))}: the file name is not UTF-8; rename it (an agent's paths are text); nothing was pushed`);
      }
      if (rel === '' && SKIPPED.has(name)) continue;
      const child = rel === '' ? name : `${rel}/${name}`;
      const full = path.join(dir, child);
      const kind = entry.isSymbolicLink() ? await stat(full).catch(() => undefined) : entry;
      if (!kind) throw new ApiError(`${full} is a symbolic link to nothing; remove it or fix its target`);
      if (kind.isDirectory()) {
        const real = await realpath(full);
        if (open.includes(real)) throw new ApiError(`${full} links back to a folder that holds it`);
        await walk(child, [...open, real]);
      } else if (kind.isFile()) files[child] = text(full, await readFile(full));
    }
  };
  await walk('', [await realpath(dir)]);
  return files;
}

function fail(error: unknown, response: Response): never {
  const body = error as { code?: string; detail?: unknown; error?: string } | undefined;
  throw new ApiError(`${response.status} ${body?.code ?? body?.error ?? ''}: ${body?.detail === undefined ? 'request failed' : describeError(body)}`.replace(' :', ':'));
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
): Promise<{ id: string; revision: string; created: boolean; unchanged?: boolean }> {
  const files = await readAgentFolder(dir);
  const id = agentId ? await resolveAgentId(client, agentId) : await targetOf(dir, files['agent.json']);
  if (id) {
    const current = await client.GET('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: id }, query: { include_files: 'true' } } });
    if (!current.data) fail(current.error, current.response);
    const body: Record<string, { content: string | null }> = {};
    const remote = current.data.files ?? {};
    for (const p of Object.keys(remote)) if (!(p in files)) body[p] = { content: null };
    for (const [p, content] of Object.entries(files)) if (remote[p]?.content !== content) body[p] = { content };
    // agent.json's `permissions` (the hosted layout) live on the agent, not in its files: sent when they differ.
    const wanted = permissionsOf(files['agent.json']);
    const held = (current.data.permissions ?? {}) as Record<string, unknown>;
    const permissions = wanted && Object.entries(wanted).some(([k, v]) => JSON.stringify(held[k]) !== JSON.stringify(v)) ? wanted : undefined;
    const update = { files: body, ...(permissions ? { permissions } : {}) };
    if (options.dryRun) {
      options.dryRun({ action: 'update', agentId: id, request: { method: 'PATCH', path: `/v1/deepagents/agents/${id}`, body: update }, files: changes(remote, files) });
      return { id, revision: current.data.revision, created: false };
    }
    // The folder is the agent already: an update would only add an empty revision to its history.
    if (Object.keys(body).length === 0 && !permissions) return { id, revision: current.data.revision, created: false, unchanged: true };
    // The change is computed from the revision just read: if someone updates the agent in between,
    // the server refuses (412) rather than keep files this folder does not have.
    const res = await client.PATCH('/v1/deepagents/agents/{agent_id}', {
      params: { path: { agent_id: id }, header: { 'if-match': `"${current.data.revision}"` } },
      body: update,
    });
    if (res.response.status === 412) {
      throw new ApiError(`agent ${id} was updated by someone else while this push ran (it was at ${current.data.revision.slice(0, 12)}); nothing was pushed: pull to see their change, or push again to replace it`);
    }
    if (!res.data) fail(res.error, res.response);
    return { id, revision: res.data.revision, created: false };
  }
  const agentJson = files['agent.json'];
  if (agentJson === undefined) throw new ApiError(`${path.join(dir, 'agent.json')} is missing: it holds the agent's name, description and runtime`);
  let meta: { name?: string; description?: string; runtime?: { model: { model_id: string } }; model?: unknown; extras?: Record<string, unknown>; backend?: Record<string, unknown>; permissions?: unknown };
  try {
    meta = JSON.parse(agentJson) as typeof meta;
  } catch (error) {
    throw new ApiError(`${path.join(dir, 'agent.json')} is not valid JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  if (meta === null || typeof meta !== 'object' || Array.isArray(meta)) throw new ApiError(`${path.join(dir, 'agent.json')} must hold a JSON object (name, description, runtime)`);
  // The hosted CLI's layout writes the model as `model` ("<provider>:<model_id>" or {model_id}); the
  // server reads it so from agent.json on update, and `runtime` wins where both are given.
  const runtime = meta.runtime ?? hostedRuntime(dir, meta.model);
  if (typeof meta.name !== 'string' || meta.name.trim() === '') throw new ApiError(`${path.join(dir, 'agent.json')}: "name" is required, the agent's name`);
  if (runtime === undefined) {
    throw new ApiError(`${path.join(dir, 'agent.json')}: the model is required: "runtime": {"model": {"model_id": "<provider>:<model_id>"}}, or "model": "<provider>:<model_id>" as the hosted CLI writes it`);
  }
  const rest = Object.fromEntries(Object.entries(files).filter(([p]) => p !== 'agent.json').map(([p, content]) => [p, { content }]));
  const createBody = {
    name: meta.name,
    ...(meta.description !== undefined ? { description: meta.description } : {}),
    runtime,
    ...(meta.extras !== undefined ? { extras: meta.extras } : {}),
    ...(meta.backend !== undefined ? { backend: meta.backend } : {}),
    ...(permissionsOf(agentJson) ? { permissions: permissionsOf(agentJson) } : {}),
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

/**
 * Delete an agent (its threads stay). A folder's marker naming it is removed, so the folder's next
 * push creates a new agent. An unknown id is an error here, though the API's delete is idempotent.
 */
export async function deleteAgent(client: HangarClient, agentId: string, dir?: string): Promise<{ id: string; name: string }> {
  const current = await client.GET('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: agentId } } });
  if (!current.data) fail(current.error, current.response);
  const res = await client.DELETE('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: agentId } } });
  if (res.response.status !== 204) fail(res.error, res.response);
  if (dir !== undefined && (await readMarker(dir)) === agentId) await rm(path.join(dir, AGENT_ID_FILE), { force: true });
  return { id: agentId, name: current.data.name };
}

/** The agent folder `dir` deploys to (`--agent`, else agent_id in agent.json, else its marker). */
export async function folderAgent(client: HangarClient, dir: string, agent?: string): Promise<string> {
  if (agent) return resolveAgentId(client, agent);
  await folderOf(dir);
  const agentJson = await readFile(path.join(dir, 'agent.json'), 'utf8').catch(() => undefined);
  const id = await targetOf(dir, agentJson);
  if (!id) throw new ApiError(`${dir} is not linked to an agent (no agent_id in agent.json, no ${AGENT_ID_FILE}); name one with --agent`);
  return id;
}

/** `runtime` from the hosted CLI's `model` in agent.json: "<provider>:<model_id>" or {model_id}. */
function hostedRuntime(dir: string, model: unknown): { model: { model_id: string } } | undefined {
  if (model === undefined || model === null) return undefined;
  if (typeof model === 'string' && model !== '') return { model: { model_id: model } };
  const id = typeof model === 'object' ? (model as { model_id?: unknown }).model_id : undefined;
  if (typeof id === 'string' && id !== '') return { model: { model_id: id } };
  throw new ApiError(`${path.join(dir, 'agent.json')}: model must be "<provider>:<model_id>" (or {"model_id": …}), the model the agent runs on`);
}

/**
 * Tools named in the folder's tools.json files (the agent's and its subagents') that their tool
 * server does not offer: the server accepts them, and runs leave them out, so the CLI says so.
 * One line each; a server whose tools cannot be listed (down, waiting for OAuth) is one line too.
 */
export async function unknownTools(client: HangarClient, files: Record<string, string>): Promise<string[]> {
  const wanted = new Map<string, { file: string; name: string }[]>();
  const norm = (url: string) => url.replace(/\/+$/, '');
  for (const [p, content] of Object.entries(files).sort(([a], [b]) => (a === 'tools.json' ? -1 : b === 'tools.json' ? 1 : a.localeCompare(b)))) {
    if (p !== 'tools.json' && !/^subagents\/[^/]+\/tools\.json$/.test(p)) continue;
    let tools: unknown;
    try {
      tools = (JSON.parse(content) as { tools?: unknown }).tools;
    } catch {
      continue; // the server names a file that is not JSON
    }
    if (!Array.isArray(tools)) continue;
    for (const t of tools as { name?: unknown; mcp_server_url?: unknown }[]) {
      if (typeof t?.name !== 'string' || typeof t.mcp_server_url !== 'string') continue;
      const key = norm(t.mcp_server_url);
      wanted.set(key, [...(wanted.get(key) ?? []), { file: p, name: t.name }]);
    }
  }
  if (wanted.size === 0) return [];
  const servers = await client.GET('/v1/deepagents/mcp-servers');
  if (!servers.data) return [];
  const notes: string[] = [];
  for (const [url, refs] of wanted) {
    const server = servers.data.find((s) => norm(s.url) === url);
    if (!server) continue; // the server refuses an unregistered URL, naming it
    // Listing an OAuth server's tools without a token would start an authorization for the caller.
    if (server.auth_type === 'oauth') continue;
    const listed = await client.GET('/v1/deepagents/mcp-servers/{mcp_server_id}/tools', { params: { path: { mcp_server_id: server.id } } });
    if (!listed.data) {
      notes.push(`could not check the tools of ${url}: ${describeError(listed.error)}`);
      continue;
    }
    const offered = new Set(listed.data.tools.map((t) => t.name));
    for (const ref of refs) {
      if (!offered.has(ref.name)) notes.push(`${ref.file}: ${url} offers no tool named "${ref.name}"; runs will leave it out (hangar mcp-servers tools ${server.id} lists those it offers)`);
    }
  }
  return notes;
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
export async function pullAgent(client: HangarClient, agentId: string, dir: string, options: { force?: boolean | undefined } = {}): Promise<{ revision: string; files: number }> {
  const res = await client.GET('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: agentId }, query: { include_files: 'true' } } });
  if (!res.data) fail(res.error, res.response);
  await folderOf(dir, { mayBeMissing: true });
  await mkdir(dir, { recursive: true });
  const local = await readAgentFolder(dir);
  const existing = Object.keys(local);
  const remote = res.data.files ?? {};
  // A folder that holds anything would lose it (local edits not pushed, or another agent's folder,
  // whose marker would then point here): only --force overwrites, and only files the agent has.
  const marker = await readMarker(dir);
  const differing = existing.filter((p) => p in remote && remote[p]?.content !== local[p]);
  if (!options.force && ((marker !== undefined && marker !== agentId) || differing.length > 0)) {
    const what = marker !== undefined && marker !== agentId ? `is the folder of agent ${marker}` : `holds files that differ from the agent's (${list(differing)})`;
    throw new ApiError(`${dir} ${what}; pull into a new or empty folder, or pass --force to overwrite them`);
  }
  const stray = existing.filter((p) => !(p in remote));
  if (stray.length > 0) throw new ApiError(`${dir} holds files the agent does not have (${list(stray)}); pull into a new or empty folder`);
  for (const [p, entry] of Object.entries(remote)) {
    // The server checks paths too; checking here keeps a hostile server from writing outside `dir`.
    if (pathProblem(p)) throw new ApiError(`the server sent an unsafe path ${JSON.stringify(p)}`);
    await mkdir(path.dirname(path.join(dir, p)), { recursive: true });
    await writeFile(path.join(dir, p), entry.content ?? '');
  }
  await writeFile(path.join(dir, AGENT_ID_FILE), `${agentId}\n`);
  return { revision: res.data.revision, files: Object.keys(remote).length };
}

/**
 * The agent a folder updates: `agent_id` in its agent.json (the hosted CLI's layout), else the
 * marker a push or pull wrote; both, naming different agents, is an error.
 */
async function targetOf(dir: string, agentJson: string | undefined): Promise<string | undefined> {
  const marker = await readMarker(dir);
  let declared: unknown;
  try {
    declared = agentJson === undefined ? undefined : (JSON.parse(agentJson) as { agent_id?: unknown }).agent_id;
  } catch {
    declared = undefined; // not JSON: the server names the problem
  }
  if (declared === undefined || declared === null || declared === '') return marker;
  if (typeof declared !== 'string') throw new ApiError(`${path.join(dir, 'agent.json')}: agent_id must be a string (the id of the agent to update)`);
  if (marker !== undefined && marker !== declared) {
    throw new ApiError(`${path.join(dir, 'agent.json')} names agent ${declared} but ${path.join(dir, AGENT_ID_FILE)} names ${marker}; remove one`);
  }
  return declared;
}

/** The `permissions` object an agent.json holds (the hosted layout), if it is JSON and holds one. */
function permissionsOf(agentJson: string | undefined): Record<string, unknown> | undefined {
  try {
    const p = agentJson === undefined ? undefined : (JSON.parse(agentJson) as { permissions?: unknown } | null)?.permissions;
    return p && typeof p === 'object' && !Array.isArray(p) ? (p as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The `agent_id` an agent.json names, if it is JSON and names one. */
async function declaredAgent(agentJson: string): Promise<unknown> {
  try {
    return (JSON.parse(agentJson) as { agent_id?: unknown } | null)?.agent_id;
  } catch {
    return undefined;
  }
}

function list(paths: string[]): string {
  return paths.length > 3 ? `${paths.slice(0, 3).join(', ')}…` : paths.join(', ');
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
    .description('Push, pull and inspect agents on a Hangar server (HANGAR_URL, HANGAR_API_KEY).');
  clientOptions(agents);
  const client = () => clientFrom(agents.opts<ClientFlags>());

  const push = async (c: HangarClient, dir: string, flags: { agent?: string; dryRun?: boolean }) => {
    if (flags.dryRun) {
      await pushAgent(c, dir, flags.agent, {
        dryRun: (plan) => {
          process.stderr.write(`Would ${plan.action} ${plan.agentId ? `agent ${plan.agentId}` : 'an agent'} (${plan.request.method} ${plan.request.path}); nothing was sent.\n`);
          for (const f of plan.files) process.stderr.write(`  ${f.change.padEnd(9)} ${f.path}\n`);
          process.stdout.write(`${JSON.stringify(plan.request.body, null, 2)}\n`);
        },
      });
      for (const note of await unknownTools(c, await readAgentFolder(dir))) process.stderr.write(`warning: ${printable(note)}\n`);
      return;
    }
    const r = await pushAgent(c, dir, flags.agent);
    process.stderr.write(r.unchanged ? `Agent ${r.id} already has these files; nothing was pushed\n` : `${r.created ? 'Created' : 'Updated'} agent ${r.id}\n`);
    process.stdout.write(`${r.revision}\n`);
    for (const note of await unknownTools(c, await readAgentFolder(dir))) process.stderr.write(`warning: ${printable(note)}\n`);
  };
  const pushHelp = `Create an agent from a folder, or update it when the folder knows its id (agent_id in agent.json, ${AGENT_ID_FILE}, or --agent); prints the new revision (the current one, pushing nothing, when the agent already has the folder's files).`;

  const pushOptions = (cmd: Command) =>
    cmd.option('--agent <agent>', 'update this agent (id or exact name)').option('--dry-run', 'print the request and the file tree it would send, change nothing');

  pushOptions(agents.command('push <dir>').description(pushHelp)).action((dir: string, flags: { agent?: string; dryRun?: boolean }) => push(client(), dir, flags));

  // The hosted CLI's verb for the same thing.
  clientOptions(pushOptions(program.command('deploy [dir]').description(`${pushHelp} DIR defaults to the current folder. The same as \`hangar agents push\`.`))).action((dir: string | undefined, flags: ClientFlags & { agent?: string; dryRun?: boolean }) => push(clientFrom(flags), dir ?? '.', flags));

  agents
    .command('pull <agent> <dir>')
    .description('Write an agent’s files into a folder (new or empty); AGENT is an id or exact name.')
    .option('--force', 'overwrite the folder’s files that differ from the agent’s (and its link to another agent)')
    .action(async (agent: string, dir: string, flags: { force?: boolean }) => {
      const c = client();
      const r = await pullAgent(c, await resolveAgentId(c, agent), dir, { force: flags.force });
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
    .command('delete <agent>')
    .description('Delete an agent (AGENT: id or exact name). Its threads stay, but runs on them are refused; its schedules stop.')
    .action(async (agent: string) => {
      const c = client();
      const r = await deleteAgent(c, await resolveAgentId(c, agent));
      process.stderr.write(`Deleted agent ${printable(r.name)} (${r.id})\n`);
    });

  // The hosted CLI's verb: delete what `hangar deploy DIR` created, and unlink the folder.
  clientOptions(
    program
      .command('delete [dir]')
      .description(`Delete the agent folder DIR deploys to (agent_id in agent.json, ${AGENT_ID_FILE}, or --agent; DIR defaults to the current folder), and unlink the folder (${AGENT_ID_FILE} removed) so its next deploy creates a new agent. Its threads stay, but runs on them are refused; its schedules stop.`)
      .option('--agent <agent>', 'delete this agent (id or exact name)'),
  ).action(async (dir: string | undefined, flags: ClientFlags & { agent?: string }) => {
    const c = clientFrom(flags);
    const folder = dir ?? '.';
    const r = await deleteAgent(c, await folderAgent(c, folder, flags.agent), folder);
    process.stderr.write(`Deleted agent ${printable(r.name)} (${r.id})\n`);
    const agentJson = await readFile(path.join(folder, 'agent.json'), 'utf8').catch(() => undefined);
    if (agentJson !== undefined && (await declaredAgent(agentJson)) === r.id) {
      process.stderr.write(`${path.join(folder, 'agent.json')} still names it (agent_id): remove agent_id before deploying the folder again\n`);
    }
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
        // A message names the agent, which any member may have named with control characters.
        for (const r of res.data.items) process.stdout.write(`${r.id}  ${r.created_at}  ${printable(r.message)}\n`);
        cursor = res.data.next_cursor ?? undefined;
      } while (cursor);
    });
}
