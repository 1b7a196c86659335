// The CLI commands `hangar auth login` and `hangar repos`, through their functions, against a real
// server, a real authorization server (oidc-provider) and real bare repositories.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authLogin, listRepos } from '../../src/cli/oauth.js';
import { startOidcServer, type OidcServer } from '../fixtures/oidc-server.js';
import { runHangar } from '../support/cli.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let oidc: OidcServer;

beforeAll(async () => {
  server = await startTestServer({ env: { HANGAR_DEPLOY_ALLOW_LOCAL_REPOS: 'true', HANGAR_LOCAL_REPO_ROOTS: os.tmpdir() } });
  oidc = await startOidcServer({ redirectUri: `${server.url}/oauth/callback` });
  await server.client.POST('/v2/auth/providers', {
    body: { provider_id: 'cli', name: 'CLI', client_id: oidc.clients.public.id, auth_url: oidc.authUrl, token_url: oidc.tokenUrl, uses_pkce: true, token_endpoint_auth_method: 'none', scopes: ['openid'] },
  });
});
afterAll(async () => {
  await Promise.all([server?.close(), oidc?.close()]);
});

describe('hangar auth login', () => {
  it('prints the URL, waits for the browser, then reports success; a second login reuses the token', async () => {
    let out = '';
    let urlPrinted!: (url: string) => void;
    const printed = new Promise<string>((resolve) => (urlPrinted = resolve));
    const io = {
      out: (t: string) => {
        out += t;
        const url = /https?:\/\/\S+/.exec(t)?.[0];
        if (url) urlPrinted(url);
      },
      err: () => {},
    };
    const login = authLogin({ baseUrl: server.url, apiKey: server.adminKey, provider: 'cli' }, io);
    const url = await printed;
    expect(url.startsWith(`${oidc.authUrl}?`)).toBe(true);
    await oidc.authorizeInBrowser(url, `${server.url}/oauth/callback`);
    expect(await login).toBe('COMPLETED');
    expect(out).toContain('Authorized with cli.');

    let again = '';
    await authLogin({ baseUrl: server.url, apiKey: server.adminKey, provider: 'cli' }, { out: (t) => (again += t), err: () => {} });
    expect(again).toBe('Already authorized with cli.\n');
  });

  it('`hangar mcp-servers connect` names the server’s provider by its name; agent health probes with the caller’s own token', async () => {
    const provider = (await server.client.GET('/v2/auth/providers/{provider_id}', { params: { path: { provider_id: 'cli' } } })).data!;
    const reg = await server.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'oauth-tools', url: 'http://127.0.0.1:9/oauth-mcp', auth_type: 'oauth', oauth_provider_id: provider.id } });
    expect(reg.response.status).toBe(201);
    // The first test authorized this key's principal with the provider.
    const connected = await runHangar(['mcp-servers', 'connect', 'oauth-tools'], { HANGAR_URL: server.url, HANGAR_API_KEY: server.adminKey });
    expect(connected.code, connected.stderr).toBe(0);
    expect(connected.stdout).toBe('Already authorized with CLI.\n');

    // The agent health check probes with the caller's token; a principal who never authorized is told so.
    const agent = await server.client.POST('/v1/deepagents/agents', {
      body: { name: 'oauth-health', runtime: { model: { model_id: 'scripted:demo' } }, tools: { tools: [{ name: 'x', mcp_server_url: 'http://127.0.0.1:9/oauth-mcp' }] } },
    });
    const health = (client: typeof server.client) => client.GET('/v1/deepagents/agents/{agent_id}/health', { params: { path: { agent_id: agent.data!.id } } });
    const mine = (await health(server.client)).data!.mcp_check.servers[0];
    // Port 9 is one fetch never opens: unreachable, not a server that answered wrongly.
    expect(mine).toMatchObject({ ok: false, error_code: 'unreachable', mcp_server_name: 'oauth-tools', error: 'the connection failed (bad port)' });
    const stranger = server.clientFor(await server.createKey({ role: 'member', principal: 'never-authorized' }));
    const refused = (await health(stranger)).data!.mcp_check.servers[0]!;
    expect(refused).toMatchObject({ ok: false, error_code: 'auth_failed' });
    expect(refused.error).toContain('has not authorized');
  }, 120_000);

  it('--agent makes a token scoped to that agent, beside the default one', async () => {
    const agent = await server.client.POST('/v1/deepagents/agents', { body: { name: 'cli-scoped', runtime: { model: { model_id: 'scripted:demo' } } } });
    const agentId = agent.data!.id;
    let out = '';
    let urlPrinted!: (url: string) => void;
    const printed = new Promise<string>((resolve) => (urlPrinted = resolve));
    const io = {
      out: (t: string) => {
        out += t;
        const url = /https?:\/\/\S+/.exec(t)?.[0];
        if (url) urlPrinted(url);
      },
      err: () => {},
    };
    // The default token exists (the first test): the agent still gets its own.
    const login = authLogin({ baseUrl: server.url, apiKey: server.adminKey, provider: 'cli', agent: agentId }, io);
    await oidc.authorizeInBrowser(await printed, `${server.url}/oauth/callback`);
    expect(await login).toBe('COMPLETED');
    expect(out).toContain(`Authorized with cli for agent ${agentId}.`);
    const tokens = await server.client.GET('/v2/auth/providers/{provider_id}/tokens', { params: { path: { provider_id: 'cli' } } });
    expect(tokens.data!.resources.map((t) => [t.agent_id, t.is_default])).toEqual([
      [null, true],
      [agentId, false],
    ]);
  });

  it('fails with the server’s reason for an unknown provider', async () => {
    await expect(authLogin({ baseUrl: server.url, apiKey: server.adminKey, provider: 'nope' }, { out: () => {}, err: () => {} })).rejects.toThrow(
      'could not start the authorization: no OAuth provider "nope" in this workspace',
    );
  });
});

describe('hangar repos', () => {
  it('lists the repositories of an integration', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'hangar-cli-git-'));
    try {
      await promisify(execFile)('git', ['init', '-q', '--bare', '-b', 'trunk', path.join(root, 'svc.git')]);
      const created = await server.client.POST('/v1/integrations/forge/vcshost', { body: { kind: 'git', name: 'home', base_url: root } });
      let out = '';
      const count = await listRepos({ baseUrl: server.url, apiKey: server.adminKey, integration: created.data!.id }, { out: (t) => (out += t), err: () => {} });
      expect(count).toBe(1);
      expect(out).toBe(`home/svc  trunk  file://${root}/svc.git\n`);
      await expect(
        listRepos({ baseUrl: server.url, apiKey: server.adminKey, integration: '00000000-0000-4000-8000-000000000000' }, { out: () => {}, err: () => {} }),
      ).rejects.toThrow('could not list the repositories: no code-host integration 00000000-0000-4000-8000-000000000000 in this workspace');
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
