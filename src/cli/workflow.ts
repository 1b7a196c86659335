// The agent workflow in the terminal, mirroring the hosted CLI's verbs: `init` a folder, `mcp-servers
// add|list|tools|connect`, `traces list|show`, and `dev` (watch a folder, push each change as a
// revision, keep a chat open). Agents and tool servers are named by id or by exact name.
import { watch } from 'node:fs';
import { mkdir, readdir, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import { createHangarClient, type HangarClient } from '../client/index.js';
import { normalizeServerUrl } from '../core/mcp-servers/url.js';
import { AGENT_ID_FILE, ApiError, clientFrom, folderOf, pullAgent, pushAgent, readAgentFolder, unknownTools } from './agents.js';
import { chat, ChatError, resolveAgentId, type ChatOutput } from './chat.js';
import { askingDecider } from './decide.js';
import { authLogin } from './oauth.js';
import { printable, table } from './table.js';
import { clientOptions, clientTarget } from './target.js';

interface ClientFlags {
  url?: string;
  apiKey?: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function fail(error: unknown, response: Response): never {
  const body = error as { code?: string; detail?: unknown } | undefined;
  const detail = typeof body?.detail === 'string' ? body.detail : JSON.stringify(body?.detail ?? error);
  throw new ApiError(`${response.status}${body?.code ? ` ${body.code}` : ''}: ${detail}`);
}

/** The files of a new agent folder (the hosted CLI's project layout). */
export function scaffold(name: string): Record<string, string> {
  return {
    'agent.json': `${JSON.stringify({ name, description: `The ${name} agent.`, runtime: { model: { model_id: 'scripted:demo' } } }, null, 2)}\n`,
    'AGENTS.md': `# ${name}\n\nYou are a helpful assistant. Describe here what this agent does and how.\n`,
    'tools.json': `${JSON.stringify({ tools: [], interrupt_config: {} }, null, 2)}\n`,
  };
}

/** `hangar init DIR`: scaffold a folder, or fill it with an existing agent's files (`from`). */
export async function initFolder(dir: string, options: { from?: string; client?: () => HangarClient } = {}): Promise<{ files: number; agentId?: string }> {
  const existed = await stat(dir).then(
    () => true,
    () => false,
  );
  await folderOf(dir, { mayBeMissing: true });
  await mkdir(dir, { recursive: true });
  const present = (await readdir(dir)).filter((f) => f !== '.git');
  if (present.length > 0) throw new ApiError(`${dir} is not empty; init writes into a new or empty folder`);
  if (options.from) {
    try {
      const client = options.client!();
      const agentId = await resolveAgentId(client, options.from);
      const pulled = await pullAgent(client, agentId, dir);
      return { files: pulled.files, agentId };
    } catch (error) {
      // A failed init leaves no empty folder behind (only one it created).
      if (!existed) await rm(dir, { recursive: true, force: true });
      throw error;
    }
  }
  const files = scaffold(path.basename(path.resolve(dir)));
  for (const [p, content] of Object.entries(files)) await writeFile(path.join(dir, p), content);
  return { files: Object.keys(files).length };
}

/** A tool server id; or the id of the server registered at this URL, or of the one server with this exact name. */
export async function resolveServerId(client: HangarClient, server: string): Promise<string> {
  if (UUID.test(server)) return server;
  const res = await client.GET('/v1/deepagents/mcp-servers');
  if (!res.data) fail(res.error, res.response);
  // The hosted CLI names a server by id, name or URL; URLs compare as registrations do (no trailing slash).
  if (/^https?:\/\//i.test(server)) {
    const at = res.data.find((s) => normalizeServerUrl(s.url) === normalizeServerUrl(server));
    if (!at) throw new ApiError(`no tool server is registered at ${server}`);
    return at.id;
  }
  const match = res.data.filter((s) => s.name === server);
  if (match.length !== 1) throw new ApiError(match.length === 0 ? `no tool server named "${server}"` : `several tool servers are named "${server}"; use the id`);
  return match[0]!.id;
}

/** `hangar mcp-servers tools`: a `tools.json` body listing every tool of the server (trim what the agent should not use). */
export async function toolsJson(client: HangarClient, server: string, refresh = false): Promise<{ tools: { name: string; mcp_server_url: string; mcp_server_name: string }[]; interrupt_config: Record<string, boolean> }> {
  const id = await resolveServerId(client, server);
  const res = await client.GET('/v1/deepagents/mcp-servers/{mcp_server_id}/tools', { params: { path: { mcp_server_id: id }, query: refresh ? { force_refresh: 'true' } : {} } });
  if (!res.data) fail(res.error, res.response);
  return { tools: res.data.tools.map((t) => t.tools_json_entry), interrupt_config: {} };
}

interface TraceRun {
  id: string;
  status: string;
  start_time: string;
  latency_ms: number | null;
  total_tokens: number | null;
  error: string | null;
  metadata: Record<string, unknown>;
}

/** The id of a tracing project named by id or name, or of the default project. */
async function tracingProject(client: HangarClient, project: string | undefined): Promise<string> {
  const projects = await client.GET('/v1/tracing/projects');
  if (!projects.data) fail(projects.error, projects.response);
  const found = projects.data.items.find((p) => (project ? p.id === project || p.name === project : p.is_default));
  if (!found) throw new ApiError(`no tracing project ${JSON.stringify(project)}`);
  return found.id;
}

/** Add `hangar init`, `hangar mcp-servers …`, `hangar traces …`, `hangar logs` and `hangar dev` to the program. */
export function registerWorkflowCommands(program: Command, io: ChatOutput): void {
  clientOptions(program.command('init <dir>'))
    .description('Create an agent folder (agent.json, AGENTS.md, tools.json) to edit and push; --from fills it with an existing agent’s files instead.')
    .option('--from <agent>', 'start from this agent (id or exact name); the folder then pushes to it')
    .action(async (dir: string, flags: ClientFlags & { from?: string }) => {
      const r = await initFolder(dir, { from: flags.from, client: () => clientFrom(flags) });
      io.out(r.agentId ? `Wrote ${r.files} files of agent ${r.agentId} into ${dir}\n` : `Created ${dir} (${r.files} files); push it with: hangar agents push ${dir}\n`);
    });

  // `add --url` is the tool server's URL (as in the hosted CLI), so the Hangar server is `--hangar-url`
  // there; the other verbs take `--url` like every client command.
  const servers = program.command('mcp-servers').description('Tool (MCP) servers of the workspace.');

  servers
    .command('add')
    .description('Register a tool server (the Hangar server: --hangar-url or HANGAR_URL).')
    .option('--hangar-url <url>', 'Hangar server (HANGAR_URL; default http://127.0.0.1:8124)')
    .option('--api-key <key>', 'API key (HANGAR_API_KEY)')
    .requiredOption('--name <name>', 'display name')
    .requiredOption('--url <server-url>', 'the server’s MCP endpoint (streamable HTTP)')
    .option('--header <key=value...>', 'a header sent to the server (stored encrypted), e.g. "Authorization=Bearer sk-…"')
    .option('--auth-type <type>', 'headers (default) or oauth', 'headers')
    .option('--oauth-provider <provider>', 'OAuth provider of an oauth server (its provider_id or id)')
    .option('--oauth-mode <mode>', 'legacy_shared_provider (default: every user authorizes with --oauth-provider) or per_user_dynamic_client (each user gets a client registered at the server’s authorization server; implies --auth-type oauth)')
    .option('--connect', 'for an oauth server: authorize your principal right away')
    .action(async (flags: { name: string; url: string; header?: string[]; authType: string; oauthProvider?: string; oauthMode?: string; connect?: boolean; hangarUrl?: string; apiKey?: string }) => {
      const hangar = { ...(flags.apiKey ? { apiKey: flags.apiKey } : {}), ...(flags.hangarUrl ? { url: flags.hangarUrl } : {}) };
      // Its --url is the tool server's: messages about the Hangar server name --hangar-url.
      const client = createHangarClient(clientTarget(hangar, process.env, '--hangar-url'));
      const headers = (flags.header ?? []).map((h) => {
        const i = h.indexOf('=');
        if (i <= 0) throw new ApiError(`--header ${JSON.stringify(h)}: expected key=value`);
        return { key: h.slice(0, i), value: h.slice(i + 1) };
      });
      if (flags.authType !== 'headers' && flags.authType !== 'oauth') throw new ApiError('--auth-type: headers or oauth');
      if (flags.oauthMode !== undefined && flags.oauthMode !== 'legacy_shared_provider' && flags.oauthMode !== 'per_user_dynamic_client') {
        throw new ApiError('--oauth-mode: legacy_shared_provider or per_user_dynamic_client');
      }
      const perUser = flags.oauthMode === 'per_user_dynamic_client';
      if (perUser && flags.oauthProvider) throw new ApiError('--oauth-mode per_user_dynamic_client registers a client per user: leave out --oauth-provider');
      const authType = perUser ? 'oauth' : flags.authType;
      if (authType === 'oauth' && !perUser && !flags.oauthProvider) {
        throw new ApiError('--auth-type oauth needs --oauth-provider (the provider_id or id of an OAuth provider of the workspace), or --oauth-mode per_user_dynamic_client');
      }
      // The provider by its provider_id (as `hangar auth login` takes it) or its id.
      let oauthProvider = flags.oauthProvider;
      if (oauthProvider && !UUID.test(oauthProvider)) {
        const found = await client.GET('/v2/auth/providers/{provider_id}', { params: { path: { provider_id: oauthProvider } } });
        if (found.response.status === 404) throw new ApiError(`--oauth-provider: no OAuth provider "${oauthProvider}" in this workspace`);
        if (!found.data) fail(found.error, found.response);
        oauthProvider = found.data.id;
      }
      const res = await client.POST('/v1/deepagents/mcp-servers', {
        body: {
          name: flags.name,
          url: flags.url,
          ...(headers.length > 0 ? { headers } : {}),
          auth_type: authType,
          ...(oauthProvider ? { oauth_provider_id: oauthProvider } : {}),
          ...(flags.oauthMode ? { oauth_mode: flags.oauthMode } : {}),
        },
      });
      if (!res.data) fail(res.error, res.response);
      io.err(`Registered tool server ${res.data.name}\n`);
      io.out(`${res.data.id}\n`);
      if (flags.connect && res.data.auth_type === 'oauth') await connectServer(client, hangar, res.data.id, '--hangar-url');
    });

  clientOptions(servers.command('list'))
    .description('List the workspace’s tool servers.')
    .action(async (flags: ClientFlags) => {
      const res = await clientFrom(flags).GET('/v1/deepagents/mcp-servers');
      if (!res.data) fail(res.error, res.response);
      io.out(table(['ID', 'NAME', 'URL', 'AUTH'], res.data.map((s) => [s.id, s.name, s.url, s.auth_type])));
    });

  clientOptions(servers.command('tools <server>'))
    .description('List the tools a registered server exposes, as a paste-ready tools.json (server: id, exact name or URL).')
    .option('--refresh', 'ask the server again (listings are never cached; accepted for the hosted CLI)')
    .action(async (server: string, flags: ClientFlags & { refresh?: boolean }) => {
      io.out(`${JSON.stringify(await toolsJson(clientFrom(flags), server, flags.refresh), null, 2)}\n`);
    });

  clientOptions(servers.command('connect <server>'))
    .description('Authorize your key’s principal with an OAuth-backed tool server (server: id, exact name or URL; prints the URL to open, waits until done).')
    .action(async (server: string, flags: ClientFlags) => {
      const client = clientFrom(flags);
      await connectServer(client, flags, await resolveServerId(client, server));
    });

  async function connectServer(client: HangarClient, flags: ClientFlags, id: string, urlFlag = '--url'): Promise<void> {
    const res = await client.GET('/v1/deepagents/mcp-servers/{mcp_server_id}', { params: { path: { mcp_server_id: id } } });
    if (!res.data) fail(res.error, res.response);
    const perUser = res.data.auth_type === 'oauth' && res.data.oauth_mode === 'per_user_dynamic_client';
    if (!perUser && (res.data.auth_type !== 'oauth' || !res.data.oauth_provider_id)) {
      io.out(`${printable(res.data.name)} uses its stored headers; there is nothing to connect.\n`);
      return;
    }
    let providerRef = res.data.oauth_provider_id;
    if (perUser) {
      // The caller's own client, registered at the server's authorization server on first use.
      const own = await client.POST('/v1/deepagents/mcp-servers/{mcp_server_id}/oauth-provider', { params: { path: { mcp_server_id: id } }, body: {} });
      if (!own.data) fail(own.error, own.response);
      providerRef = own.data.oauth_provider_id;
    }
    // Named as the user knows it: the provider's name, not the registration's internal id.
    const provider = await client.GET('/v2/auth/providers/{provider_id}', { params: { path: { provider_id: providerRef! } } });
    if (!provider.data) fail(provider.error, provider.response);
    await authLogin({ ...clientTarget(flags, process.env, urlFlag), provider: provider.data.provider_id, label: printable(provider.data.name) }, io);
  }

  clientOptions(program.command('logs <agent>'))
    .description('Recent runs of an agent (id or exact name), newest first, from the trace store: status, time, tokens and the error of each failed run (runs are traced unless HANGAR_TRACING=false).')
    .option('--project <name>', 'tracing project (id or name; default: the default project)')
    .option('--limit <n>', 'how many', '20')
    .option('--json', 'print the runs as JSON')
    .action(async (agent: string, flags: ClientFlags & { project?: string; limit: string; json?: boolean }) => {
      const client = clientFrom(flags);
      const limit = Number(flags.limit);
      if (!(Number.isInteger(limit) && limit >= 1 && limit <= 100)) throw new ApiError('--limit: a whole number from 1 to 100');
      const found = await client.GET('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: await resolveAgentId(client, agent) } } });
      if (!found.data) fail(found.error, found.response);
      const { id, name } = found.data;
      const project = await tracingProject(client, flags.project);
      // Root runs are named after the agent; the name narrows the search, the agent id in the metadata decides.
      const runs: TraceRun[] = [];
      let cursor: string | undefined;
      do {
        const res = await client.GET('/v1/tracing/projects/{project_id}/runs', { params: { path: { project_id: project }, query: { name, page_size: 100, ...(cursor ? { cursor } : {}) } } });
        if (!res.data) fail(res.error, res.response);
        runs.push(...res.data.items.filter((r) => r.metadata.assistant_id === id));
        cursor = res.data.next_cursor ?? undefined;
      } while (cursor && runs.length < limit);
      const shown = runs.slice(0, limit);
      if (flags.json) return void io.out(`${JSON.stringify(shown, null, 2)}\n`);
      if (shown.length === 0) return void io.err(`No traced runs of agent ${printable(name)} (${id}) yet.\n`);
      io.out(
        table(
          ['RUN', 'THREAD', 'STATUS', 'STARTED', 'LATENCY', 'TOKENS', 'ERROR'],
          shown.map((r) => [r.id, String(r.metadata.thread_id ?? ''), r.status, r.start_time, r.latency_ms === null ? '' : `${Math.round(r.latency_ms)} ms`, String(r.total_tokens ?? ''), r.error ?? '']),
        ),
      );
    });

  const traces = clientOptions(program.command('traces').description('Traces of agent runs (the trace store).'));
  const traceClient = () => clientFrom(traces.opts<ClientFlags>());

  traces
    .command('list')
    .description('Recent traces (root runs) of a project, newest first.')
    .option('--project <name>', 'tracing project (id or name; default: the default project)')
    .option('--limit <n>', 'how many', '20')
    .option('--json', 'print the JSON page')
    .action(async (flags: { project?: string; limit: string; json?: boolean }) => {
      const client = traceClient();
      const projects = await client.GET('/v1/tracing/projects');
      if (!projects.data) fail(projects.error, projects.response);
      const project = projects.data.items.find((p) => (flags.project ? p.id === flags.project || p.name === flags.project : p.is_default));
      if (!project) throw new ApiError(`no tracing project ${JSON.stringify(flags.project)}`);
      const limit = Number(flags.limit);
      if (!(Number.isInteger(limit) && limit >= 1 && limit <= 100)) throw new ApiError('--limit: a whole number from 1 to 100');
      const res = await client.GET('/v1/tracing/projects/{project_id}/runs', { params: { path: { project_id: project.id }, query: { page_size: limit } } });
      if (!res.data) fail(res.error, res.response);
      if (flags.json) {
        io.out(`${JSON.stringify(res.data, null, 2)}\n`);
        return;
      }
      io.out(
        table(
          ['RUN', 'NAME', 'STATUS', 'STARTED', 'LATENCY', 'TOKENS'],
          res.data.items.map((r) => [r.id, r.name, r.status, r.start_time, r.latency_ms === null ? '' : `${Math.round(r.latency_ms)} ms`, String(r.total_tokens ?? '')]),
        ),
      );
    });

  traces
    .command('show <run>')
    .description('One trace as a tree: each run with its type, status, latency and tokens (--json for everything).')
    .option('--json', 'print the JSON tree')
    .action(async (run: string, flags: { json?: boolean }) => {
      const res = await traceClient().GET('/v1/tracing/runs/{run_id}', { params: { path: { run_id: run } } });
      if (!res.data) fail(res.error, res.response);
      if (flags.json) {
        io.out(`${JSON.stringify(res.data, null, 2)}\n`);
        return;
      }
      type Node = { name: string; run_type: string; status: string; latency_ms: number | null; total_tokens: number | null; error: string | null; child_runs?: Node[] };
      const print = (node: Node, depth: number) => {
        const facts = [node.run_type, node.status, node.latency_ms === null ? '' : `${Math.round(node.latency_ms)} ms`, node.total_tokens ? `${node.total_tokens} tokens` : ''].filter(Boolean).join(', ');
        io.out(`${'  '.repeat(depth)}${printable(node.name)} (${printable(facts)})${node.error ? ` — ${printable(node.error)}` : ''}\n`);
        for (const child of node.child_runs ?? []) print(child, depth + 1);
      };
      print(res.data as unknown as Node, 0);
    });

  clientOptions(program.command('dev <dir>'))
    .description('Develop an agent: push the folder now and after every change (each push is a revision), and chat with it in the same terminal. Approvals are asked at the prompt.')
    .action(async (dir: string, flags: ClientFlags) => {
      const target = clientTarget(flags);
      await dev(dir, { client: createHangarClient(target), baseUrl: target.baseUrl, apiKey: target.apiKey }, io);
    });
}

/** Options of `hangar dev`. */
export interface DevOptions {
  client: HangarClient;
  baseUrl: string;
  apiKey: string;
  /** Lines typed by the user (standard input by default). */
  input?: NodeJS.ReadableStream;
  /** Quiet period after a change before pushing (editors write several files at once). */
  debounceMs?: number;
  /** Called after each push (tests wait on it). */
  onPush?: (revision: string) => void;
}

/** `hangar dev DIR`: push now and on every change; every line typed is a chat message on one thread. */
export async function dev(dir: string, options: DevOptions, io: ChatOutput): Promise<void> {
  await folderOf(dir);
  let pushing = Promise.resolve();
  let agentId: string | undefined;
  const push = () =>
    (pushing = pushing.then(async () => {
      try {
        const r = await pushAgent(options.client, dir);
        agentId = r.id;
        io.err(`[dev] ${r.created ? 'created agent' : r.unchanged ? 'up to date:' : 'pushed'} ${r.id} revision ${r.revision.slice(0, 12)}\n`);
        for (const note of await unknownTools(options.client, await readAgentFolder(dir))) io.err(`[dev] warning: ${printable(note)}\n`);
        options.onPush?.(r.revision);
      } catch (error) {
        io.err(`[dev] push failed: ${error instanceof Error ? error.message : String(error)}\n`);
      }
    }));
  await push();
  let timer: NodeJS.Timeout | undefined;
  const watcher = watch(dir, { recursive: true }, (_event, file) => {
    if (file && (String(file) === AGENT_ID_FILE || String(file).startsWith('.git'))) return;
    clearTimeout(timer);
    timer = setTimeout(() => void push(), options.debounceMs ?? 200);
  });
  io.err('[dev] watching for changes; type a message to chat, Ctrl-D to stop\n');
  const input = options.input ?? process.stdin;
  const rl = createInterface({ input, terminal: false });
  // One reader of the input for both chat lines and approval answers.
  const lines = rl[Symbol.asyncIterator]();
  const nextLine = async () => {
    const r = await lines.next();
    return r.done ? undefined : r.value;
  };
  const decide = askingDecider(async (question) => {
    io.err(question);
    return (await nextLine()) ?? '';
  });
  let thread: string | undefined;
  try {
    for (let line = await nextLine(); line !== undefined; line = await nextLine()) {
      const message = line.trim();
      if (message === '') continue;
      await pushing;
      if (!agentId) {
        io.err('[dev] the folder has not been pushed yet; fix it and save\n');
        continue;
      }
      try {
        const r = await chat({ baseUrl: options.baseUrl, apiKey: options.apiKey, agent: agentId, thread, message, decide, continueHint: false }, io);
        thread = r.threadId;
      } catch (error) {
        // A failed run leaves its thread free for the next line (the first line's thread too).
        if (error instanceof ChatError && error.threadId) thread = error.threadId;
        io.err(`[dev] ${error instanceof Error ? error.message : String(error)}\n`);
      }
    }
  } finally {
    rl.close();
    watcher.close();
    clearTimeout(timer);
    await pushing;
  }
}
