// OAuth-backed tool servers: a real MCP server that checks bearer tokens with a real authorization
// server (oidc-provider). Tool calls carry the run principal's token (refreshed when needed); a
// principal without one pauses a LangGraph run with an interrupt carrying the authorization URL,
// and the run resumes once the browser flow is done.
import { MultiServerMCPClient } from '@langchain/mcp-adapters';
import type { StructuredToolInterface } from '@langchain/core/tools';
import { Annotation, Command, MemorySaver, StateGraph } from '@langchain/langgraph';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { McpServer } from '../../src/core/mcp-servers/service.js';
import { OAuthAuthorizationRequired, type OAuthInterruptValue } from '../../src/core/oauth/authorization-required.js';
import { oauthBeforeToolCall, requireToolServerHeaders, withOAuthAuthorization, type OAuthToolContext } from '../../src/runtime/oauth-tools.js';
import { startOidcServer, type OidcServer } from '../fixtures/oidc-server.js';
import { startProtectedMcpServer, type ProtectedMcpServer } from '../fixtures/protected-mcp-server.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let oidc: OidcServer;
let tools: ProtectedMcpServer;
let workspaceId: string;
let registered: McpServer;

beforeAll(async () => {
  server = await startTestServer();
  oidc = await startOidcServer({ redirectUri: `${server.url}/oauth/callback` });
  tools = await startProtectedMcpServer(oidc);
  workspaceId = (await server.hangar.services.workspaces.authenticate(server.adminKey))!.workspaceId;
  const provider = await server.client.POST('/v2/auth/providers', {
    body: {
      provider_id: 'tools-login',
      name: 'Tools login',
      client_id: oidc.clients.basic.id,
      client_secret: oidc.clients.basic.secret,
      auth_url: oidc.authUrl,
      token_url: oidc.tokenUrl,
      uses_pkce: true,
      token_endpoint_auth_method: 'client_secret_basic',
      scopes: ['openid', 'offline_access'],
    },
  });
  const created = await server.client.POST('/v1/deepagents/mcp-servers', {
    body: { name: 'Protected tools', url: tools.url, auth_type: 'oauth', oauth_provider_id: provider.data!.id },
  });
  expect(created.response.status).toBe(201);
  registered = (await server.hangar.services.mcpServers.findByUrl(workspaceId, tools.url))!;
});
afterAll(async () => {
  await server?.close();
  await tools?.close();
  await oidc?.close();
});

const context = (principal: string): OAuthToolContext => ({ oauth: server.hangar.services.oauth, workspaceId, principal });

/** An MCP client of the registered server for `principal`, as the runtime would build it. */
function mcpClient(principal: string, headers: Record<string, string>) {
  return new MultiServerMCPClient({
    mcpServers: { protected: { url: tools.url, transport: 'http', headers, automaticSSEFallback: false } },
    beforeToolCall: oauthBeforeToolCall(context(principal), new Map([['protected', registered]])),
  });
}

const State = Annotation.Root({ result: Annotation<string | null>({ reducer: (_, b) => b, default: () => null }) });

/** A one-node LangGraph run standing in for an agent's tool step. */
function graphCalling(call: () => Promise<string>) {
  return new StateGraph(State)
    .addNode('tool', async () => ({ result: await call() }))
    .addEdge('__start__', 'tool')
    .compile({ checkpointer: new MemorySaver() });
}

describe('OAuth-backed tool servers', () => {
  it('a run pauses for authorization, resumes after the browser flow, and the tool sees the principal’s token', async () => {
    const principal = 'carol';
    const graph = graphCalling(async () => {
      const headers = await requireToolServerHeaders(context(principal), registered, 'whoami');
      const client = mcpClient(principal, headers);
      try {
        const [whoami] = await client.getTools();
        return String(await whoami!.invoke({}));
      } finally {
        await client.close();
      }
    });
    const config = { configurable: { thread_id: 'run-1' } };
    const paused = await graph.invoke({}, config);
    const interrupts = (paused as { __interrupt__?: { value: OAuthInterruptValue }[] }).__interrupt__;
    expect(interrupts).toHaveLength(1);
    const value = interrupts![0]!.value;
    expect(value).toMatchObject({ type: 'oauth_authorization_required', provider_id: 'tools-login', tool_name: 'whoami' });
    expect(value.authorization_url.startsWith(`${oidc.authUrl}?`)).toBe(true);
    expect(tools.bearers).toEqual([]); // nothing was sent to the tool server without a token

    const page = await oidc.authorizeInBrowser(value.authorization_url, `${server.url}/oauth/callback`);
    expect(page.status).toBe(200);

    const resumed = await graph.invoke(new Command({ resume: { session_id: value.session_id } }), config);
    expect(JSON.parse(resumed.result!)).toEqual({ sub: oidc.accountId, client_id: oidc.clients.basic.id });
    expect(tools.refused).toBe(0);
    const sent = new Set(tools.bearers);
    expect(sent.size).toBe(1);
    expect(sent.has(null)).toBe(false);
  });

  it('every call carries a fresh token: an expired one is refreshed before the call', async () => {
    const principal = 'carol';
    const headers = await server.hangar.services.oauth.toolServerHeaders({ workspaceId, principal, server: registered });
    const client = mcpClient(principal, headers);
    try {
      const [whoami] = await client.getTools();
      const before = tools.bearers.length;
      await whoami!.invoke({});
      const firstToken = tools.bearers.at(-1);
      await expire(principal);
      await whoami!.invoke({});
      const secondToken = tools.bearers.at(-1);
      expect(secondToken).not.toBe(firstToken);
      expect(tools.bearers.slice(before).every((t) => t !== null)).toBe(true);
      expect(tools.refused).toBe(0);
      expect((await oidc.introspect(secondToken!)).active).toBe(true);
      expect(oidc.tokenRequests.at(-1)).toEqual({ grantType: 'refresh_token', auth: 'basic', codeVerifier: false });
    } finally {
      await client.close();
    }
  });

  it('a loaded tool whose authorization was revoked pauses the run again', async () => {
    const principal = 'dave';
    const daveKey = await server.createKey({ role: 'member', principal });
    const first = await server.hangar.services.oauth.toolServerHeaders({ workspaceId, principal, server: registered }).catch((e: unknown) => e);
    expect(first).toBeInstanceOf(OAuthAuthorizationRequired);
    await oidc.authorizeInBrowser((first as OAuthAuthorizationRequired).authorizationUrl, `${server.url}/oauth/callback`);
    const client = mcpClient(principal, await server.hangar.services.oauth.toolServerHeaders({ workspaceId, principal, server: registered }));
    try {
      const wrapped: StructuredToolInterface[] = (await client.getTools()).map((t) => withOAuthAuthorization(t, context(principal), registered));
      const revoked = await server.clientFor(daveKey).DELETE('/v2/auth/providers/{provider_id}/token', { params: { path: { provider_id: 'tools-login' } } });
      expect(revoked.response.status).toBe(204);

      const graph = graphCalling(async () => String(await wrapped[0]!.invoke({})));
      const config = { configurable: { thread_id: 'run-2' } };
      const paused = await graph.invoke({}, config);
      const value = (paused as { __interrupt__?: { value: OAuthInterruptValue }[] }).__interrupt__![0]!.value;
      expect(value.type).toBe('oauth_authorization_required');
      await oidc.authorizeInBrowser(value.authorization_url, `${server.url}/oauth/callback`);
      const resumed = await graph.invoke(new Command({ resume: true }), config);
      expect(JSON.parse(resumed.result!)).toMatchObject({ sub: oidc.accountId });
    } finally {
      await client.close();
    }
  });

  it('listing the tools of an OAuth server sends the caller’s token, not a stored Authorization header beside it', async () => {
    const principal = 'erin';
    const erin = server.clientFor(await server.createKey({ role: 'member', principal }));
    const first = await server.hangar.services.oauth.toolServerHeaders({ workspaceId, principal, server: registered }).catch((e: unknown) => e);
    expect(first).toBeInstanceOf(OAuthAuthorizationRequired);
    await oidc.authorizeInBrowser((first as OAuthAuthorizationRequired).authorizationUrl, `${server.url}/oauth/callback`);
    const path = { mcp_server_id: registered.id };
    // A stored header of another case than the one Hangar writes ("authorization", not "Authorization").
    const patched = await server.client.PATCH('/v1/deepagents/mcp-servers/{mcp_server_id}', { params: { path }, body: { headers: [{ key: 'authorization', value: 'Bearer stale-stored-token' }] } });
    expect(patched.response.status).toBe(200);
    try {
      const before = tools.bearers.length;
      const listed = await erin.GET('/v1/deepagents/mcp-servers/{mcp_server_id}/tools', { params: { path } });
      expect(listed.response.status).toBe(200);
      expect(listed.data!.tools.map((t) => t.name)).toEqual(['whoami']);
      const sent = tools.bearers.slice(before);
      expect(sent.length).toBeGreaterThan(0);
      for (const token of sent) expect((await oidc.introspect(token!)).sub).toBe(oidc.accountId);
    } finally {
      await server.client.PATCH('/v1/deepagents/mcp-servers/{mcp_server_id}', { params: { path }, body: { headers: [] } });
    }
  });
});

async function expire(principal: string): Promise<void> {
  const db = new pg.Client({ connectionString: server.databaseUrl });
  await db.connect();
  try {
    await db.query("UPDATE oauth_tokens SET expires_at = now() - interval '1 second' WHERE principal = $1", [principal]);
  } finally {
    await db.end();
  }
}
