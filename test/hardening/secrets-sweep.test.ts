// Secrets a workspace hands Hangar (tool-server headers, model keys, OAuth client secrets, deployment
// secrets, code-host tokens, webhook URL tokens, API keys) must not come back where docs/security.md
// says they do not: the server log at debug level, API error answers, traces, /openapi.json, the
// Console's HTML and scripts, and what viewers read.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureConsoleBuilt } from '../support/browser.js';
import { readJson } from '../support/mcp.js';
import { startTestServer, type TestServer } from '../support/server.js';

const HEADER_SECRET = 'hdr-secret-7c1e9a3b5d';
const MODEL_KEY = 'sk-model-key-4b8e2f6a1c';
const CLIENT_SECRET = 'oauth-client-secret-9d3f7b';
const DEPLOY_SECRET = 'deploy-secret-2a6c8e0f4b';
const CODEHOST_TOKEN = 'ghp_codehostToken5e9a1c7b';
const WEBHOOK_TOKEN = 'whk-token-3f7b1d9e5a';
const ALL = [HEADER_SECRET, MODEL_KEY, CLIENT_SECRET, DEPLOY_SECRET, CODEHOST_TOKEN, WEBHOOK_TOKEN];

let server: TestServer;
let tools: { url: string; close(): Promise<void> };
let hook: { url: string; close(): Promise<void> };

/** A tool server that wants `X-Api-Key: HEADER_SECRET`; its tool `fail` throws, quoting the header. */
async function startToolServer(): Promise<{ url: string; close(): Promise<void> }> {
  const http: Server = createServer(async (req, res) => {
    if (req.headers['x-api-key'] !== HEADER_SECRET) {
      res.writeHead(401, { 'content-type': 'text/plain' }).end(`bad key ${String(req.headers['x-api-key'])}`);
      return;
    }
    const mcp = new McpServer({ name: 'keyed', version: '1.0.0' });
    mcp.registerTool('fail', { description: 'Fails', inputSchema: {} }, async () => {
      throw new Error(`upstream refused key ${String(req.headers['x-api-key'])}`);
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res, await readJson(req));
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    close: () => new Promise<void>((resolve) => (http.closeAllConnections(), http.close(() => resolve()))),
  };
}

async function startHook(): Promise<{ url: string; close(): Promise<void> }> {
  const http: Server = createServer((_req, res) => res.writeHead(500).end('no'));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/hook`,
    close: () => new Promise<void>((resolve) => (http.closeAllConnections(), http.close(() => resolve()))),
  };
}

beforeAll(async () => {
  ensureConsoleBuilt();
  [server, tools, hook] = await Promise.all([startTestServer({ env: { LOG_LEVEL: 'trace' } }), startToolServer(), startHook()]);
});
afterAll(async () => {
  await Promise.all([server?.close(), tools?.close(), hook?.close()]);
});

async function raw(key: string | null, method: string, path: string, body?: unknown): Promise<{ status: number; text: string }> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { ...(key ? { 'X-Api-Key': key } : {}), ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, text: await res.text() };
}

describe('secrets', () => {
  it('stay out of logs, error answers, traces, /openapi.json and the Console', async () => {
    const admin = server.adminKey;
    const answers: string[] = [];
    const keep = async (...args: Parameters<typeof raw>) => {
      const a = await raw(...args);
      answers.push(`${args[1]} ${args[2]} → ${a.status} ${a.text}`);
      return a;
    };
    const mcp = JSON.parse((await keep(admin, 'POST', '/v1/deepagents/mcp-servers', { name: 'keyed', url: tools.url, headers: [{ key: 'X-Api-Key', value: HEADER_SECRET }] })).text) as { id: string };
    await keep(admin, 'GET', `/v1/deepagents/mcp-servers/${mcp.id}/tools`);
    // Wrong credentials: the tool server's answer quotes them; Hangar's must not.
    const wrong = JSON.parse((await keep(admin, 'POST', '/v1/deepagents/mcp-servers', { name: 'wrong', url: `${tools.url}?x=1`, headers: [{ key: 'X-Api-Key', value: `${HEADER_SECRET}-old` }] })).text) as { id: string };
    await keep(admin, 'GET', `/v1/deepagents/mcp-servers/${wrong.id}/tools`);
    await keep(admin, 'POST', '/v1/deepagents/model-configs', { name: 'keyed-model', model_id: 'openai:gpt-4o-mini', api_key: MODEL_KEY, parameters: { base_url: 'http://127.0.0.1:9/v1' } });
    await keep(admin, 'POST', '/v2/auth/providers', { provider_id: 'p', name: 'P', client_id: 'c', client_secret: CLIENT_SECRET, auth_url: 'http://127.0.0.1:9/a', token_url: 'http://127.0.0.1:9/t' });
    const integration = JSON.parse((await keep(admin, 'POST', '/v1/integrations/forge/vcshost', { kind: 'github', name: 'gh', base_url: 'http://127.0.0.1:9', token: CODEHOST_TOKEN })).text) as { id: string };
    if (integration.id) await keep(admin, 'GET', `/v1/integrations/forge/vcshost/${integration.id}/repos`);
    await keep(admin, 'POST', '/v2/deployments', {
      name: 'app',
      source: 'external_docker',
      source_config: {},
      source_revision_config: { image_uri: 'registry.invalid/app:1' },
      secrets: [{ name: 'K', value: DEPLOY_SECRET }],
    });

    const agent = JSON.parse(
      (
        await keep(admin, 'POST', '/v1/deepagents/agents', {
          name: 'sweeper',
          runtime: { model: { model_id: 'scripted:demo' } },
          tools: {
            tools: [
              { name: 'fail', mcp_server_url: tools.url, mcp_server_name: 'keyed', display_name: 'fail' },
              { name: 'fail', mcp_server_url: `${tools.url}?x=1`, mcp_server_name: 'wrong', display_name: 'fail' },
            ],
            interrupt_config: {},
          },
        })
      ).text,
    ) as { id: string };
    const thread = JSON.parse((await keep(admin, 'POST', '/v1/deepagents/threads', { agent_id: agent.id })).text) as { id: string };
    // The model calls both tools: one fails quoting the key it was sent, the other server refuses a
    // wrong key, quoting it. Neither key reaches the model, the state, the stream or a viewer.
    const call = '/call keyed__fail {}\n/call wrong__fail {}';
    await keep(admin, 'POST', `/v1/deepagents/threads/${thread.id}/runs/wait`, { agent_id: agent.id, messages: [{ role: 'user', content: call }], webhook: `${hook.url}?token=${WEBHOOK_TOKEN}` });
    const stream = await keep(admin, 'POST', `/v1/deepagents/threads/${thread.id}/runs/stream`, { agent_id: agent.id, messages: [{ role: 'user', content: call }], stream_mode: ['values', 'updates', 'messages-tuple'] });
    const runs = JSON.parse((await keep(admin, 'GET', `/v1/deepagents/threads/${thread.id}/runs`)).text) as { run_id: string }[];
    const trace = await keep(admin, 'GET', `/v1/deepagents/threads/${thread.id}/runs/${runs[0]!.run_id}/trace`);
    expect(trace.status).toBe(200);
    const state = await keep(admin, 'GET', `/v1/deepagents/threads/${thread.id}/state`);
    expect(state.text).toContain('upstream refused key [redacted]');
    expect(stream.text).toContain('upstream refused key [redacted]');
    expect(state.text).toContain('bad key [redacted]');

    await keep(admin, 'POST', '/v1/deepagents/schedules', { agent_id: agent.id, schedule: '0 0 1 1 *', enabled: false, input: { messages: [{ role: 'user', content: 'hi' }] }, webhook: `${hook.url}?token=${WEBHOOK_TOKEN}` });
    await keep(admin, 'POST', '/v1/deepagents/runs/crons', { assistant_id: agent.id, schedule: '0 0 1 1 *', enabled: false, input: { messages: [{ role: 'user', content: 'hi' }] }, webhook: `${hook.url}?token=${WEBHOOK_TOKEN}` });
    const viewer = await server.createKey({ role: 'viewer' });
    for (const path of ['/v1/deepagents/runs/crons/search', '/v1/deepagents/threads/search']) {
      const a = await raw(viewer, 'POST', path, {});
      answers.push(`viewer POST ${path} → ${a.status} ${a.text}`);
    }
    for (const path of [
      '/v1/deepagents/mcp-servers',
      `/v1/deepagents/mcp-servers/${mcp.id}`,
      '/v1/deepagents/schedules',
      '/v1/deepagents/model-configs',
      '/v2/auth/providers',
      '/v1/integrations/forge/vcshost',
      '/v2/deployments',
      `/v1/deepagents/threads/${thread.id}/state`,
      `/v1/deepagents/threads/${thread.id}/history`,
      `/v1/deepagents/threads/${thread.id}/runs/${runs[0]!.run_id}/webhooks`,
      `/v1/deepagents/threads/${thread.id}/runs`,
      `/v1/deepagents/threads/${thread.id}/runs/${runs[0]!.run_id}`,
    ]) {
      const a = await raw(viewer, 'GET', path);
      answers.push(`viewer GET ${path} → ${a.status} ${a.text}`);
    }
    const openapi = await raw(null, 'GET', '/openapi.json');
    const consoleHtml = await raw(null, 'GET', '/');
    expect(consoleHtml.status).toBe(200);
    let consoleText = consoleHtml.text;
    const assets = [...consoleHtml.text.matchAll(/(?:src|href)="([^"]+\.(?:js|css))"/g)].map((m) => m[1]!);
    expect(assets.length).toBeGreaterThan(0);
    for (const asset of assets) consoleText += (await raw(null, 'GET', asset.startsWith('/') ? asset : `/${asset}`)).text;

    // The webhook signing secret (the run's webhook above was signed with it) and a key made through the API.
    const signing = JSON.parse((await raw(admin, 'GET', '/v1/deepagents/webhooks/secret')).text) as { secret: string };
    const madeKey = JSON.parse((await raw(admin, 'POST', '/v1/api-keys', { role: 'member' })).text) as { key: string };
    expect(signing.secret).toMatch(/^whsec_/);
    expect(madeKey.key.length).toBeGreaterThan(16);
    const where: Record<string, string> = {
      'the server log (level trace)': server.logs(),
      // What an admin registered it may read back as registered; error answers and viewers never.
      'error answers': answers.filter((a) => / → [45]\d\d /.test(a)).join('\n'),
      "a viewer's answers": answers.filter((a) => a.startsWith('viewer ')).join('\n'),
      'the trace': trace.text,
      '/openapi.json': openapi.text,
      'the Console': consoleText,
    };
    const found: string[] = [];
    for (const [place, text] of Object.entries(where)) {
      for (const secret of [...ALL, signing.secret, signing.secret.slice('whsec_'.length), madeKey.key, admin]) {
        const at = text.indexOf(secret);
        if (at >= 0) found.push(`${place}: ${secret}: …${text.slice(Math.max(0, at - 240), at + 40)}…`);
      }
    }
    expect(found).toEqual([]);
  }, 120_000);
});
