// Red-team walk of every operation in /openapi.json (plus the git routes): workspace A owns one of
// every resource; a key of another workspace (B) and a viewer key of A call each operation on A's ids,
// with a plausible body. SPEC and docs/security.md: a workspace never sees another's data (404, as
// for an id that does not exist), and a viewer writes nothing (403). Afterwards every read of A's
// resources answers what it answered before. A new route is walked automatically: its path
// parameters are filled by name (an unknown name fails the test, so the table must learn it).
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEverythingServer } from '../support/mcp.js';
import { startTestServer, type TestServer } from '../support/server.js';

const git = promisify(execFile);
const MARK = 'zq7alpha';
/** Values only workspace A holds (set up below). */
const MARKED = [
  `${MARK}-tools`,
  `${MARK}-header-secret`,
  `${MARK}-agent`,
  `${MARK} instructions`,
  `${MARK} hello`,
  `${MARK}-value`,
  `${MARK}-config`,
  `${MARK}-model-key`,
  `${MARK}-prov`,
  `${MARK} provider`,
  `${MARK}-client`,
  `${MARK}-git`,
  `${MARK}-app`,
  `${MARK}-deploy-secret`,
  `${MARK}-project`,
  `${MARK} key`,
  `"owner":"${MARK}"`,
];

let server: TestServer;
let toolServer: Awaited<ReturnType<typeof startEverythingServer>>;
let repoRoot: string;
let foreignKey: string;
let viewerKey: string;
let memberKey: string;
const ids: Record<string, string> = {};
const operations: { method: string; path: string }[] = [];

interface Answer {
  status: number;
  text: string;
}

async function call(key: string | null, method: string, url: string, body?: unknown, contentType = 'application/json'): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (key) headers['X-Api-Key'] = key;
  let payload: string | Buffer | undefined;
  if (body !== undefined) {
    headers['Content-Type'] = contentType;
    payload = typeof body === 'string' || Buffer.isBuffer(body) ? (body as string) : JSON.stringify(body);
  }
  const res = await fetch(`${server.url}${url}`, { method, headers, body: payload, signal: AbortSignal.timeout(20_000) });
  return { status: res.status, text: await res.text() };
}

async function ok(method: string, url: string, body?: unknown): Promise<Record<string, unknown>> {
  const a = await call(server.adminKey, method, url, body);
  if (a.status >= 300) throw new Error(`${method} ${url} → ${a.status} ${a.text}`);
  return a.text ? (JSON.parse(a.text) as Record<string, unknown>) : {};
}

async function bareRepo(dir: string): Promise<void> {
  const work = await mkdtemp(path.join(os.tmpdir(), 'hangar-walk-work-'));
  const env = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com' };
  await git('git', ['init', '-q', '-b', 'main', work], { env });
  await git('git', ['-C', work, 'commit', '-q', '--allow-empty', '-m', 'first'], { env });
  await git('git', ['clone', '-q', '--bare', work, dir], { env });
  await rm(work, { recursive: true, force: true });
}

beforeAll(async () => {
  repoRoot = await mkdtemp(path.join(os.tmpdir(), 'hangar-walk-root-'));
  await bareRepo(path.join(repoRoot, 'app.git'));
  server = await startTestServer({
    env: {
      HANGAR_AUTH_FAILURE_LIMIT: '0',
      LOG_LEVEL: 'warn',
      HANGAR_DEPLOY_ALLOW_LOCAL_REPOS: 'true',
      HANGAR_LOCAL_REPO_ROOTS: repoRoot,
      // Deployments are only records here: nothing builds them.
      HANGAR_DEPLOY_DRIVERS: 'external_docker=kubernetes',
    },
  });
  toolServer = await startEverythingServer();
  foreignKey = (await server.createWorkspace('walk-b', { previewAccess: true })).adminKey;
  viewerKey = await server.createKey({ role: 'viewer' });
  memberKey = await server.createKey({ role: 'member' });

  // Workspace A: one of everything, each carrying MARK where it has a name.
  const mcp = await ok('POST', '/v1/deepagents/mcp-servers', { name: `${MARK}-tools`, url: toolServer.url, headers: [{ key: 'Authorization', value: `Bearer ${MARK}-header-secret` }] });
  ids.mcp_server_id = mcp.id as string;
  const agent = await ok('POST', '/v1/deepagents/agents', { name: `${MARK}-agent`, instructions: `${MARK} instructions`, runtime: { model: { model_id: 'scripted:echo' } } });
  ids.agent_id = agent.id as string;
  ids.assistant_id = agent.id as string;
  ids.revision = agent.revision as string;
  const thread = await ok('POST', '/v1/deepagents/threads', { agent_id: ids.agent_id, metadata: { owner: MARK } });
  ids.thread_id = thread.id as string;
  await ok('POST', `/v1/deepagents/threads/${ids.thread_id}/runs/wait`, { agent_id: ids.agent_id, messages: [{ role: 'user', content: `${MARK} hello` }] });
  const runs = (await ok('GET', `/v1/deepagents/threads/${ids.thread_id}/runs`)) as unknown as { run_id: string }[];
  ids.run_id = runs[0]!.run_id;
  const state = await ok('GET', `/v1/deepagents/threads/${ids.thread_id}/state`);
  ids.checkpoint_id = (state.checkpoint as { checkpoint_id: string }).checkpoint_id;
  const schedule = await ok('POST', '/v1/deepagents/schedules', { agent_id: ids.agent_id, schedule: '0 0 1 1 *', enabled: false, metadata: { owner: MARK }, input: { messages: [{ role: 'user', content: 'hi' }] } });
  ids.schedule_id = schedule.id as string;
  const cron = await ok('POST', '/v1/deepagents/runs/crons', { assistant_id: ids.agent_id, schedule: '0 0 1 1 *', enabled: false, metadata: { owner: MARK }, input: { messages: [{ role: 'user', content: 'hi' }] } });
  ids.cron_id = cron.cron_id as string;
  await ok('PUT', '/v1/deepagents/store/items', { namespace: [MARK], key: 'k', value: { v: `${MARK}-value` } });
  const config = await ok('POST', '/v1/deepagents/model-configs', { name: `${MARK}-config`, model_id: 'scripted:echo', api_key: `${MARK}-model-key` });
  ids.model_config_id = config.id as string;
  await ok('POST', '/v2/auth/providers', {
    provider_id: `${MARK}-prov`,
    name: `${MARK} provider`,
    client_id: `${MARK}-client`,
    client_secret: `${MARK}-client-secret`,
    auth_url: 'http://127.0.0.1:9/authorize',
    token_url: 'http://127.0.0.1:9/token',
  });
  ids.provider_id = `${MARK}-prov`;
  const session = await ok('POST', '/v1/deepagents/auth-sessions', { provider_id: ids.provider_id });
  ids.session_id = (session.auth_id ?? session.id ?? session.session_id) as string;
  const integration = await ok('POST', '/v1/integrations/forge/vcshost', { kind: 'git', name: `${MARK}-git`, base_url: repoRoot });
  ids.integration_id = integration.id as string;
  const deployment = await ok('POST', '/v2/deployments', {
    name: `${MARK}-app`,
    source: 'external_docker',
    source_config: {},
    source_revision_config: { image_uri: 'registry.invalid/app:1' },
    secrets: [{ name: 'K', value: `${MARK}-deploy-secret` }],
  });
  ids.deployment_id = deployment.id as string;
  ids.revision_id = deployment.latest_revision_id as string;
  const upload = await ok('POST', '/v2/deployments/uploads');
  ids.upload_id = (upload.upload_url as string).split('/').pop()!;
  const project = await ok('POST', '/v1/tracing/projects', { name: `${MARK}-project` });
  ids.project_id = project.id as string;
  const traceRuns = (await ok('GET', `/v1/tracing/projects/${ids.project_id}/runs`)) as { items?: { id: string }[] };
  void traceRuns;
  const trace = await ok('GET', `/v1/deepagents/threads/${ids.thread_id}/runs/${ids.run_id}/trace`);
  ids.trace_run_id = ((trace.id ?? (trace.runs as { id: string }[] | undefined)?.[0]?.id ?? (trace.root as { id: string } | undefined)?.id) as string) ?? ids.run_id;
  const key = await ok('POST', '/v1/api-keys', { role: 'viewer', description: `${MARK} key` });
  ids.key_id = (key.id ?? key.key_id) as string;
  ids.namespace = 'tools';
  for (const [name, value] of Object.entries(ids)) if (typeof value !== 'string') throw new Error(`set-up found no ${name}: ${JSON.stringify(ids)}`);

  const doc = JSON.parse((await call(null, 'GET', '/openapi.json')).text) as { paths: Record<string, Record<string, unknown>> };
  for (const [p, item] of Object.entries(doc.paths)) {
    for (const method of Object.keys(item)) {
      if (['get', 'post', 'put', 'patch', 'delete'].includes(method)) operations.push({ method: method.toUpperCase(), path: p });
    }
  }
}, 180_000);

afterAll(async () => {
  await server?.close();
  await toolServer?.close();
  if (repoRoot) await rm(repoRoot, { recursive: true, force: true });
});

/** Path parameters by name; `run_id` under /v1/tracing and /langsmith is a trace run's id. */
function fill(p: string): string {
  return p.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const key = name === 'run_id' && (p.startsWith('/v1/tracing') || p.startsWith('/langsmith')) ? 'trace_run_id' : name;
    const value = ids[key];
    if (!value) throw new Error(`the walk does not know path parameter {${name}} of ${p}: add it to the set-up`);
    return encodeURIComponent(value);
  });
}

/** A plausible request per operation: query string and body naming A's resources. */
function request(method: string, p: string): { query?: string; body?: unknown; contentType?: string } {
  const agent = ids.agent_id;
  const op = `${method} ${p}`;
  const table: Record<string, { query?: string; body?: unknown; contentType?: string }> = {
    'POST /v1/deepagents/mcp-servers': { body: { name: 'x', url: toolServer.url } },
    'PATCH /v1/deepagents/mcp-servers/{mcp_server_id}': { body: { name: 'renamed' } },
    'POST /v1/deepagents/mcp-servers/{mcp_server_id}/oauth-provider': { body: {} },
    'POST /v1/deepagents/agents': { body: { name: 'x', runtime: { model: { model_id: 'scripted:echo' } } } },
    'PATCH /v1/deepagents/agents/{agent_id}': { body: { instructions: 'changed' } },
    'POST /v1/deepagents/agents/{agent_id}/clone': { body: { name: 'stolen' } },
    'POST /v1/deepagents/threads': { body: { agent_id: agent } },
    'GET /v1/deepagents/threads': { query: `agent_id=${agent}` },
    'POST /v1/deepagents/threads/search': { body: { metadata: { owner: MARK } } },
    'POST /v1/deepagents/threads/count': { body: { metadata: { owner: MARK } } },
    'PATCH /v1/deepagents/threads/{thread_id}': { body: { metadata: { owner: 'changed' } } },
    'POST /v1/deepagents/threads/{thread_id}/resolve-interrupt': { body: { decisions: [{ type: 'approve' }] } },
    'POST /v1/deepagents/threads/{thread_id}/state': { body: { values: { messages: [] } } },
    'POST /v1/deepagents/threads/{thread_id}/history': { body: { limit: 5 } },
    'POST /v1/deepagents/threads/{thread_id}/state/checkpoint': { body: { checkpoint: { checkpoint_id: ids.checkpoint_id } } },
    'POST /v1/deepagents/threads/{thread_id}/runs/stream': { body: { agent_id: agent, messages: [{ role: 'user', content: 'hi' }] } },
    'POST /v1/deepagents/threads/{thread_id}/runs': { body: { agent_id: agent, messages: [{ role: 'user', content: 'hi' }] } },
    'POST /v1/deepagents/threads/{thread_id}/runs/wait': { body: { agent_id: agent, messages: [{ role: 'user', content: 'hi' }] } },
    'POST /v1/deepagents/threads/{thread_id}/runs/{run_id}/cancel': {},
    'POST /v1/deepagents/threads/{thread_id}/copy': { body: {} },
    'POST /v1/deepagents/schedules': { body: { agent_id: agent, schedule: '0 0 1 1 *', enabled: false, input: { messages: [{ role: 'user', content: 'hi' }] } } },
    'GET /v1/deepagents/schedules': { query: `agent_id=${agent}` },
    'PATCH /v1/deepagents/schedules/{schedule_id}': { body: { enabled: true } },
    'POST /v1/deepagents/runs/crons': { body: { assistant_id: agent, schedule: '0 0 1 1 *', enabled: false, input: { messages: [{ role: 'user', content: 'hi' }] } } },
    'POST /v1/deepagents/threads/{thread_id}/runs/crons': { body: { assistant_id: agent, schedule: '0 0 1 1 *', enabled: false, input: { messages: [{ role: 'user', content: 'hi' }] } } },
    'POST /v1/deepagents/runs/crons/search': { body: { assistant_id: agent } },
    'POST /v1/deepagents/runs/crons/count': { body: { assistant_id: agent } },
    'PATCH /v1/deepagents/runs/crons/{cron_id}': { body: { enabled: true } },
    'POST /v1/deepagents/assistants/search': { body: { metadata: {} } },
    'POST /v1/deepagents/assistants/count': { body: {} },
    'POST /v1/deepagents/assistants': { body: { assistant_id: agent, graph_id: 'agent', if_exists: 'do_nothing' } },
    'PUT /v1/deepagents/store/items': { body: { namespace: [MARK], key: 'k', value: { v: 'overwritten' } } },
    'GET /v1/deepagents/store/items': { query: `namespace=${MARK}&key=k` },
    'DELETE /v1/deepagents/store/items': { body: { namespace: [MARK], key: 'k' } },
    'POST /v1/deepagents/store/items/search': { body: { namespace_prefix: [MARK] } },
    'POST /v1/deepagents/store/namespaces': { body: {} },
    'GET /v1/deepagents/usage': { query: `agent_id=${agent}` },
    'GET /v1/deepagents/agents/{agent_id}.git/info/refs': { query: 'service=git-upload-pack' },
    'POST /v1/deepagents/agents/{agent_id}.git/git-upload-pack': { body: '0000', contentType: 'application/x-git-upload-pack-request' },
    'POST /v1/deepagents/model-configs': { body: { name: 'x', model_id: 'scripted:echo' } },
    'PATCH /v1/deepagents/model-configs/{model_config_id}': { body: { name: 'changed' } },
    'POST /v2/auth/providers': { body: { provider_id: 'b-prov', name: 'x', client_id: 'x', auth_url: 'http://127.0.0.1:9/a', token_url: 'http://127.0.0.1:9/t' } },
    'PATCH /v2/auth/providers/{provider_id}': { body: { name: 'changed' } },
    'POST /v1/deepagents/auth-sessions': { body: { provider_id: ids.provider_id } },
    'POST /v1/integrations/forge/vcshost': { body: { kind: 'git', name: 'x', base_url: repoRoot } },
    'POST /v2/deployments': {
      body: {
        name: 'x',
        source: 'vcshost',
        source_config: { integration_id: ids.integration_id, repo_url: `file://${repoRoot}/app.git` },
        source_revision_config: { repo_ref: 'main' },
        secrets: [],
      },
    },
    'PATCH /v2/deployments/{deployment_id}': { body: { secrets: [] } },
    'POST /v1/tracing/projects': { body: { name: 'b-project' } },
    'GET /v1/tracing/projects/{project_id}/runs': {},
    'POST /langsmith/runs': { body: { id: ids.trace_run_id, name: 'x', run_type: 'chain', session_id: ids.project_id } },
    'PUT /v2/deployments/uploads/{upload_id}': { body: gzipSync(Buffer.alloc(1024)), contentType: 'application/gzip' },
    'PATCH /langsmith/runs/{run_id}': { body: { outputs: { x: 'changed' } } },
    'POST /langsmith/runs/batch': { body: { patch: [{ id: ids.trace_run_id, trace_id: ids.trace_run_id, outputs: { x: 'changed' } }] } },
    'POST /langsmith/runs/multipart': { body: '', contentType: 'multipart/form-data; boundary=x' },
    'POST /v1/console/session': { body: { api_key: 'k' } },
    'POST /v1/api-keys': { body: { role: 'admin' } },
  };
  return table[op] ?? (['POST', 'PUT', 'PATCH'].includes(method) ? { body: {} } : {});
}

const isSafe = (method: string, p: string) =>
  method === 'GET' ||
  [
    'POST /v1/deepagents/threads/search',
    'POST /v1/deepagents/threads/count',
    'POST /v1/deepagents/threads/{thread_id}/history',
    'POST /v1/deepagents/threads/{thread_id}/state/checkpoint',
    'POST /v1/deepagents/assistants/search',
    'POST /v1/deepagents/assistants/count',
    'POST /v1/deepagents/runs/crons/search',
    'POST /v1/deepagents/runs/crons/count',
    'POST /v1/deepagents/store/items/search',
    'POST /v1/deepagents/store/namespaces',
    'POST /v1/deepagents/agents/{agent_id}.git/git-upload-pack',
    'POST /v1/console/session',
  ].includes(`${method} ${p}`);

/** Operations only an admin key may call (SPEC: keys and the webhook signing secret). */
const ADMIN_ONLY = new Set(['GET /v1/api-keys', 'POST /v1/api-keys', 'DELETE /v1/api-keys/{key_id}', 'GET /v1/deepagents/webhooks/secret', 'POST /v1/deepagents/webhooks/secret/rotate']);

/** Operations that are not a workspace's: public probes, the OAuth redirect, sign-in. */
const PUBLIC = new Set(['GET /ok', 'GET /ready', 'GET /metrics', 'GET /info', 'GET /openapi.json', 'GET /oauth/callback', 'POST /v1/console/session', 'GET /v1/console/session', 'DELETE /v1/console/session', 'GET /langsmith/info']);

function withGit(ops: { method: string; path: string }[]) {
  const all = [...ops];
  for (const extra of [
    { method: 'GET', path: '/v1/deepagents/agents/{agent_id}.git/info/refs' },
    { method: 'POST', path: '/v1/deepagents/agents/{agent_id}.git/git-upload-pack' },
  ]) {
    if (!all.some((o) => o.method === extra.method && o.path === extra.path)) all.push(extra);
  }
  // Deletions last, so that every other operation still finds what it names.
  return all.sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'));
}

async function snapshot(): Promise<Map<string, Answer>> {
  const out = new Map<string, Answer>();
  for (const op of withGit(operations)) {
    if (op.method !== 'GET' || PUBLIC.has(`${op.method} ${op.path}`)) continue;
    if (/\/stream$|\/join$|-logs$|\/auth-sessions\//.test(op.path)) continue;
    const { query } = request(op.method, op.path);
    const url = fill(op.path) + (query ? `?${query}` : '');
    const a = await call(server.adminKey, 'GET', url);
    out.set(url, { status: a.status, text: a.text.replace(/"(last_used_at|last_seen_at|now|generated_at|start|end)":"[^"]*"/g, '') });
  }
  return out;
}

describe('every operation, with no key, a foreign key, a viewer key and a member key', () => {
  it('never reads or changes what another workspace owns, a viewer never writes, a member never calls an admin route', async () => {
    const before = await snapshot();
    // What A holds: every id and every marked value; a foreign answer may repeat only what it was sent.
    const held = [...Object.values(ids).filter((v) => v.length >= 8), ...MARKED];
    const problems: string[] = [];
    for (const op of withGit(operations)) {
      const name = `${op.method} ${op.path}`;
      if (PUBLIC.has(name)) continue;
      const { query, body, contentType } = request(op.method, op.path);
      const url = fill(op.path) + (query ? `?${query}` : '');
      const sent = decodeURIComponent(url) + (body === undefined ? '' : Buffer.isBuffer(body) ? '' : JSON.stringify(body));

      const foreign = await call(foreignKey, op.method, url, body, contentType);
      const leaked = held.filter((h) => foreign.text.includes(h) && !sent.includes(h));
      if (leaked.length) problems.push(`foreign ${name} → ${foreign.status} shows ${leaked.join(', ')}: ${foreign.text.slice(0, 200)}`);
      // 404 as for an id that does not exist; a DELETE is idempotent (204), and trace ingestion
      // writes only into the caller's own workspace (202): the snapshot below proves nothing of A changed.
      const allowed = op.method === 'DELETE' ? [404, 403, 204] : op.path.startsWith('/langsmith/') ? [404, 403, 202] : [404, 403];
      if (op.path.includes('{') && !allowed.includes(foreign.status)) problems.push(`foreign ${name} → ${foreign.status} (want 404): ${foreign.text.slice(0, 200)}`);

      const anonymous = await call(null, op.method, url, body, contentType);
      if (anonymous.status !== 401) problems.push(`no key ${name} → ${anonymous.status} (want 401): ${anonymous.text.slice(0, 200)}`);
      if (ADMIN_ONLY.has(name)) {
        const member = await call(memberKey, op.method, url, body, contentType);
        if (member.status !== 403) problems.push(`member ${name} → ${member.status} (want 403): ${member.text.slice(0, 200)}`);
      }
      if (!isSafe(op.method, op.path)) {
        const viewer = await call(viewerKey, op.method, url, body, contentType);
        if (viewer.status !== 403) problems.push(`viewer ${name} → ${viewer.status} (want 403): ${viewer.text.slice(0, 200)}`);
      }
    }
    const after = await snapshot();
    for (const [url, was] of before) {
      const now = after.get(url)!;
      if (now.status !== was.status || now.text !== was.text) problems.push(`A's ${url} changed: ${was.status} → ${now.status}\n  was ${was.text.slice(0, 300)}\n  now ${now.text.slice(0, 300)}`);
    }
    expect(problems).toEqual([]);
  }, 300_000);
});


describe("A's ids inside a foreign workspace's own requests", () => {
  it('are unknown there: no answer names or uses what A owns', async () => {
    const b = (method: string, url: string, body?: unknown) => call(foreignKey, method, url, body);
    const bAgent = JSON.parse((await b('POST', '/v1/deepagents/agents', { name: 'b-agent', runtime: { model: { model_id: 'scripted:echo' } } })).text) as { id: string };
    const bThread = JSON.parse((await b('POST', '/v1/deepagents/threads', { agent_id: bAgent.id })).text) as { id: string };
    const before = await snapshot();
    const held = [...Object.values(ids).filter((v) => v.length >= 8), ...MARKED];
    const cases: [string, string, unknown][] = [
      ['POST', '/v1/deepagents/threads', { agent_id: bAgent.id, thread_id: ids.thread_id, if_exists: 'do_nothing' }],
      ['POST', '/v1/deepagents/threads/search', { ids: [ids.thread_id] }],
      ['POST', '/v1/deepagents/threads/search', { agent_id: ids.agent_id }],
      ['POST', '/v1/deepagents/threads/search', { metadata: { owner: MARK } }],
      ['POST', '/v1/deepagents/threads/count', { agent_id: ids.agent_id }],
      ['POST', '/v1/deepagents/assistants/search', { name: `${MARK}-agent` }],
      ['POST', '/v1/deepagents/assistants/search', { graph_id: ids.agent_id }],
      ['POST', '/v1/deepagents/runs/crons/search', { thread_id: ids.thread_id }],
      ['GET', `/v1/deepagents/schedules?thread_id=${ids.thread_id}`, undefined],
      ['GET', `/v2/deployments?deployment_ids=${ids.deployment_id}`, undefined],
      ['GET', `/v2/deployments?name_contains=${MARK}`, undefined],
      ['GET', `/v1/deepagents/agents?name=${MARK}-agent`, undefined],
      ['POST', `/v1/deepagents/threads/${bThread.id}/runs/wait`, { agent_id: ids.agent_id, messages: [{ role: 'user', content: 'hi' }] }],
      ['POST', `/v1/deepagents/threads/${bThread.id}/runs/wait`, { assistant_id: ids.agent_id, input: { messages: [{ role: 'user', content: 'hi' }] } }],
      ['POST', `/v1/deepagents/threads/${bThread.id}/runs/wait`, { agent_id: bAgent.id, checkpoint_id: ids.run_id, messages: [{ role: 'user', content: 'hi' }] }],
      ['POST', `/v1/deepagents/threads/${bThread.id}/state`, { values: { messages: [] }, checkpoint: { thread_id: ids.thread_id } }],
      ['POST', '/v1/deepagents/schedules', { agent_id: bAgent.id, schedule: '0 0 1 1 *', enabled: false, thread: ids.thread_id, input: { messages: [{ role: 'user', content: 'hi' }] } }],
      ['POST', `/v1/deepagents/threads/${bThread.id}/runs/crons`, { assistant_id: ids.agent_id, schedule: '0 0 1 1 *', enabled: false, input: { messages: [{ role: 'user', content: 'hi' }] } }],
      ['POST', '/v1/deepagents/mcp-servers', { name: 'b', url: `${toolServer.url}`, auth_type: 'oauth', oauth_provider_id: ids.provider_id }],
      ['POST', '/v1/deepagents/agents', { name: 'b2', runtime: { model: { model_id: ids.model_config_id } } }],
      ['POST', '/v1/deepagents/agents', { name: 'b3', runtime: { model: { model_id: `${MARK}-config` } } }],
      ['POST', '/v1/deepagents/auth-sessions', { provider_id: ids.provider_id }],
      ['POST', '/v2/deployments', { name: 'b-app', source: 'internal_source', source_config: {}, source_revision_config: { source_tarball_path: `uploads/${ids.upload_id}.tar.gz` }, secrets: [] }],
      ['POST', '/langsmith/runs', { id: '01a2115b-0000-7000-8000-000000000001', name: 'x', run_type: 'chain', parent_run_id: ids.trace_run_id }],
      ['POST', '/langsmith/runs', { id: '01a2115b-0000-7000-8000-000000000002', name: 'x', run_type: 'chain', session_id: ids.project_id }],
      ['GET', `/v1/deepagents/usage?agent_id=${ids.agent_id}`, undefined],
    ];
    const problems: string[] = [];
    for (const [method, url, body] of cases) {
      const a = await b(method, url, body);
      const sent = decodeURIComponent(url) + JSON.stringify(body ?? '');
      const leaked = held.filter((h) => a.text.includes(h) && !sent.includes(h));
      if (leaked.length) problems.push(`${method} ${url} ${JSON.stringify(body)} → ${a.status} shows ${leaked.join(', ')}: ${a.text.slice(0, 300)}`);
      if (a.status < 300 && !/search|count|schedules\?|deployments\?|agents\?|usage|langsmith/.test(url)) problems.push(`${method} ${url} ${JSON.stringify(body)} → ${a.status}: ${a.text.slice(0, 300)}`);
    }
    const after = await snapshot();
    for (const [url, was] of before) {
      const now = after.get(url)!;
      if (now.status !== was.status || now.text !== was.text) problems.push(`A's ${url} changed: ${was.status} → ${now.status}\n  was ${was.text.slice(0, 300)}\n  now ${now.text.slice(0, 300)}`);
    }
    expect(problems).toEqual([]);
  }, 300_000);
});

describe('git routes with Basic auth and by agent name', () => {
  it('give a foreign workspace and no key nothing of A', async () => {
    const basic = (key: string) => `Basic ${Buffer.from(`x:${key}`).toString('base64')}`;
    const problems: string[] = [];
    for (const target of [ids.agent_id!, `${MARK}-agent`]) {
      const refs = `/v1/deepagents/agents/${encodeURIComponent(target)}.git/info/refs?service=git-upload-pack`;
      const own = await fetch(`${server.url}${refs}`, { headers: { Authorization: basic(server.adminKey) } });
      // Agents are cloned by id; a name is a 404 to everyone (docs/agents.md).
      if (own.status !== (target === ids.agent_id ? 200 : 404)) problems.push(`A's own Basic clone of ${target} → ${own.status}`);
      for (const [who, headers] of [
        ['foreign Basic', { Authorization: basic(foreignKey) }],
        ['foreign header', { 'X-Api-Key': foreignKey }],
        ['no key', {}],
      ] as const) {
        const res = await fetch(`${server.url}${refs}`, { headers });
        const text = await res.text();
        const want = who === 'no key' ? 401 : 404;
        if (res.status !== want) problems.push(`${who} GET ${refs} → ${res.status} (want ${want})`);
        if (text.includes(ids.revision!)) problems.push(`${who} GET ${refs} shows A's revision`);
      }
    }
    expect(problems).toEqual([]);
  });
});
