// An agent run (deepagents on LangGraph, built by the runtime's builder) calling a tool of an
// OAuth-backed tool server: the run pauses with an interrupt carrying the authorization URL, resumes
// after the browser flow, and the tool server (a real MCP resource server) sees the run principal's
// token, checked against a real authorization server (oidc-provider).
import type { AIMessage } from '@langchain/core/messages';
import { Command, InMemoryStore, MemorySaver } from '@langchain/langgraph';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OAuthInterruptValue } from '../../src/core/oauth/authorization-required.js';
import { buildAgent, type BuildDeps } from '../../src/runtime/agent/build.js';
import { ScriptedChatModel } from '../../src/runtime/models/scripted.js';
import { oauthToolAccess, PRINCIPAL_CONFIG_KEY } from '../../src/runtime/oauth-tools.js';
import { startOidcServer, type OidcServer } from '../fixtures/oidc-server.js';
import { startProtectedMcpServer, type ProtectedMcpServer } from '../fixtures/protected-mcp-server.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let oidc: OidcServer;
let tools: ProtectedMcpServer;
let workspaceId: string;
let deps: BuildDeps;

beforeAll(async () => {
  server = await startTestServer();
  oidc = await startOidcServer({ redirectUri: `${server.url}/oauth/callback` });
  tools = await startProtectedMcpServer(oidc);
  workspaceId = (await server.hangar.services.workspaces.authenticate(server.adminKey))!.workspaceId;
  const provider = await server.client.POST('/v2/auth/providers', {
    body: {
      provider_id: 'tools-login',
      name: 'Tools login',
      client_id: oidc.clients.public.id,
      auth_url: oidc.authUrl,
      token_url: oidc.tokenUrl,
      uses_pkce: true,
      token_endpoint_auth_method: 'none',
      scopes: ['openid', 'offline_access'],
    },
  });
  await server.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'Protected tools', url: tools.url, auth_type: 'oauth', oauth_provider_id: provider.data!.id } });
  const services = server.hangar.services;
  deps = {
    resolveModel: async () => new ScriptedChatModel({ model: 'oauth-test' }),
    findServer: async (ws, url) => {
      const s = await services.mcpServers.findByUrl(ws, url);
      return s && { url: s.url, name: s.name, headers: s.headers, authType: s.authType, oauthProviderId: s.oauthProviderId };
    },
    checkpointer: new MemorySaver(),
    store: new InMemoryStore(),
    toolLimits: { connectTimeoutMs: 20_000, callTimeoutMs: 20_000 },
    oauthTools: (ws) => oauthToolAccess(services.oauth, ws),
  };
});
afterAll(async () => {
  await server?.close();
  await tools?.close();
  await oidc?.close();
});

async function build(agentId: string) {
  return buildAgent(
    {
      workspaceId,
      agentId,
      revision: 'r1',
      instructions: 'Use the tools.',
      modelId: 'scripted:oauth-test',
      tools: [{ name: 'whoami', mcpServerUrl: tools.url }],
      subagents: [],
      files: { 'AGENTS.md': 'Use the tools.' },
    },
    deps,
  );
}

/** Run `/call whoami` as `principal`: pause, authorize in the browser, resume; returns the final answer. */
async function runAs(agent: Awaited<ReturnType<typeof build>>, principal: string, threadId: string) {
  const config = { configurable: { thread_id: threadId, [PRINCIPAL_CONFIG_KEY]: principal } };
  const paused = await agent.graph.invoke({ messages: [{ role: 'user', content: '/call whoami {}' }] }, config);
  const interrupts = (paused as { __interrupt__?: { value: OAuthInterruptValue }[] }).__interrupt__ ?? [];
  expect(interrupts.map((i) => i.value.type)).toEqual(['oauth_authorization_required']);
  const value = interrupts[0]!.value;
  expect(value).toMatchObject({ provider_id: 'tools-login', tool_name: 'whoami' });
  const page = await oidc.authorizeInBrowser(value.authorization_url, `${server.url}/oauth/callback`);
  expect(page.status).toBe(200);
  const done = await agent.graph.invoke(new Command({ resume: { session_id: value.session_id } }), config);
  const messages = done.messages as AIMessage[];
  return String(messages.at(-1)!.content);
}

describe('agent runs with an OAuth-backed tool server', () => {
  it('nobody authorized at build time: the run pauses, resumes, and the tool answers for the principal', async () => {
    const agent = await build('agent-a');
    try {
      const answer = await runAs(agent, 'erin', 'thread-a');
      expect(answer).toContain(`whoami: ${JSON.stringify({ sub: oidc.accountId, client_id: oidc.clients.public.id })}`);
      expect(tools.refused).toBe(0);
    } finally {
      await agent.close();
    }
  });

  it('tools listed with an existing grant; another principal is still asked to authorize for their own calls', async () => {
    const agent = await build('agent-b');
    try {
      const seen = tools.bearers.length;
      const answer = await runAs(agent, 'frank', 'thread-b');
      expect(answer).toContain('whoami: {"sub":"alice"');
      // The call after the resume carried frank's token, not the one used to list the tools.
      const frankToken = await server.hangar.services.oauth.bearerFor({ workspaceId, principal: 'frank', providerId: 'tools-login' });
      expect(tools.bearers.slice(seen)).toContain(frankToken);
      expect(tools.bearers.at(-1)).toBe(frankToken);
      expect(tools.refused).toBe(0);
    } finally {
      await agent.close();
    }
  });
});
