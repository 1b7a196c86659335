// Tokens scoped to one agent: an auth session started with `agent_id` makes a token that this agent's
// runs (for that caller) send to an OAuth-backed tool server, while other agents keep sending the
// caller's default token. Against a REAL authorization server (oidc-provider) and a real MCP tool
// server that echoes the bearer each call carried; runs are streamed over HTTP as a client would.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect } from '../../src/client/stream.js';
import { startOidcServer, type OidcServer } from '../fixtures/oidc-server.js';
import { startProtectedMcpServer, type ProtectedMcpServer } from '../fixtures/protected-mcp-server.js';
import { createAgent, createThread, lastAiText, lastValues, start } from '../runtime/support.js';
import { registerOAuthToolServer } from './support.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let oidc: OidcServer;
let tools: ProtectedMcpServer;
let member: string;
const principal = 'hana@example.com';
const providerId = 'agent-scoped';

beforeAll(async () => {
  server = await startTestServer();
  oidc = await startOidcServer({ redirectUri: `${server.url}/oauth/callback` });
  tools = await startProtectedMcpServer(oidc, { echoBearer: true });
  await registerOAuthToolServer(server, oidc, tools.url, { providerId, provider: 'Scoped tools', toolServer: 'Scoped tools' });
  member = await server.createKey({ role: 'member', principal });
});
afterAll(async () => {
  await Promise.all([server?.close(), tools?.close(), oidc?.close()]);
});

const headers = (key: string) => ({ 'X-Api-Key': key });

/** Start an auth session as `key`, authorize in the "browser", and return the COMPLETED answer's token id. */
async function authorize(key: string, body: Record<string, unknown>): Promise<{ tokenId: string; metadata: Record<string, unknown> }> {
  const started = await server.client.POST('/v1/deepagents/auth-sessions', { body: { provider_id: providerId, scopes: ['openid', 'offline_access'], strategy: 'CREATE', ...body } as never, headers: headers(key) });
  expect(started.response.status, JSON.stringify(started.error)).toBe(201);
  const page = await oidc.authorizeInBrowser(started.data!.verification_url!, `${server.url}/oauth/callback`);
  expect(page.status).toBe(200);
  const polled = await server.client.GET('/v1/deepagents/auth-sessions/{session_id}', { params: { path: { session_id: started.data!.id! }, query: { wait_seconds: 5 } }, headers: headers(key) });
  expect(polled.data).toMatchObject({ status: 'COMPLETED', agent_id: (body.is_default === true ? undefined : body.agent_id) ?? null });
  const reused = await server.client.POST('/v1/deepagents/auth-sessions', { body: { provider_id: providerId, strategy: 'REUSE', ...body } as never, headers: headers(key) });
  expect(reused.response.status).toBe(200);
  return { tokenId: reused.data!.token!, metadata: reused.data!.metadata };
}

/** Run `/call bearer` on a new thread of `agentId` as `key`; the bearer the tool server saw. */
async function bearerSeenBy(agentId: string, key: string): Promise<string> {
  const threadId = await createThread(server, agentId);
  const events = await collect(await start(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: '/call bearer {}' }], stream_mode: ['values'] }, key));
  const text = lastAiText(lastValues(events));
  const seen = /bearer=(\S+)/.exec(text)?.[1];
  expect(seen, text).toBeDefined();
  return seen!;
}

async function tokenList(key: string) {
  const res = await server.client.GET('/v2/auth/providers/{provider_id}/tokens', { params: { path: { provider_id: providerId } }, headers: headers(key) });
  expect(res.response.status).toBe(200);
  return res.data!.resources;
}

describe('auth sessions with agent_id make a token for that agent', () => {
  it('the agent with its own token sends it; another agent (and another caller) sends the default', async () => {
    const tool = { tools: { tools: [{ name: 'bearer', mcp_server_url: tools.url }] } };
    const scopedAgent = await createAgent(server, tool);
    const otherAgent = await createAgent(server, tool);

    const defaultToken = await authorize(member, {});
    expect(defaultToken.tokenId).toBe(`${providerId}:${principal}`);
    const scopedToken = await authorize(member, { agent_id: scopedAgent });
    expect(scopedToken.tokenId).toBe(`${providerId}:${principal}:${scopedAgent}`);
    expect(scopedToken.metadata).toEqual({ principal, provider_id: providerId, is_default: false, agent_id: scopedAgent });

    const defaultBearer = await server.hangar.services.oauth.bearerFor({ workspaceId: (await server.hangar.services.workspaces.authenticate(member))!.workspaceId, principal, providerId });
    const scopedBearer = await bearerSeenBy(scopedAgent, member);
    expect(scopedBearer).not.toBe(defaultBearer);
    expect(await oidc.introspect(scopedBearer)).toMatchObject({ active: true });
    expect(await bearerSeenBy(otherAgent, member)).toBe(defaultBearer);
    expect(tools.refused).toBe(0);
    // The agent's health check probes with the token its runs use.
    const health = await server.client.GET('/v1/deepagents/agents/{agent_id}/health', { params: { path: { agent_id: scopedAgent } }, headers: headers(member) });
    expect(health.data!.mcp_check.ok).toBe(true);
    expect(tools.bearers.at(-1)).toBe(scopedBearer);

    // The token answers say which agent each token is for.
    expect((await tokenList(member)).map((t) => ({ token_id: t.token_id, agent_id: t.agent_id, is_default: t.is_default }))).toEqual([
      { token_id: `${providerId}:${principal}`, agent_id: null, is_default: true },
      { token_id: `${providerId}:${principal}:${scopedAgent}`, agent_id: scopedAgent, is_default: false },
    ]);

    // Revoking the agent's token: its runs use the default again; the default is untouched.
    const revoked = await server.client.DELETE('/v2/auth/providers/{provider_id}/token', { params: { path: { provider_id: providerId }, query: { agent_id: scopedAgent } }, headers: headers(member) });
    expect(revoked.response.status).toBe(204);
    expect(await bearerSeenBy(scopedAgent, member)).toBe(defaultBearer);
    expect((await tokenList(member)).map((t) => t.agent_id)).toEqual([null]);
  });

  it('a run that pauses for a token asks for its agent’s token; the resumed run sends it, and other agents are not given it', async () => {
    const tool = { tools: { tools: [{ name: 'bearer', mcp_server_url: tools.url }] } };
    const agentId = await createAgent(server, tool);
    const otherAgent = await createAgent(server, tool);
    const newcomer = 'ines@example.com'; // no token of any kind yet
    const key = await server.createKey({ role: 'member', principal: newcomer });

    const threadId = await createThread(server, agentId);
    const paused = await collect(await start(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: '/call bearer {}' }], stream_mode: ['updates', 'values'] }, key));
    const asked = paused
      .filter((e) => e.event === 'updates')
      .flatMap((e) => ((e.data as { __interrupt__?: { value: Record<string, unknown> }[] }).__interrupt__ ?? []).map((i) => i.value));
    expect(asked).toEqual([expect.objectContaining({ type: 'oauth_authorization_required', provider_id: providerId, agent_id: agentId, tool_name: 'bearer' })]);
    const sessionId = asked[0]!.session_id as string;
    const pending = await server.client.GET('/v1/deepagents/auth-sessions/{session_id}', { params: { path: { session_id: sessionId }, query: { wait_seconds: 0 } }, headers: headers(key) });
    expect(pending.data).toMatchObject({ status: 'PENDING', agent_id: agentId });

    const page = await oidc.authorizeInBrowser(asked[0]!.authorization_url as string, `${server.url}/oauth/callback`);
    expect(page.status).toBe(200);
    // The token made is the agent's, not a default every agent of the principal would send.
    expect((await tokenList(key)).map((t) => ({ token_id: t.token_id, agent_id: t.agent_id }))).toEqual([{ token_id: `${providerId}:${newcomer}:${agentId}`, agent_id: agentId }]);

    // The paused run resumes and its call carries that token.
    const resumed = await collect(await start(server, threadId, { agent_id: agentId, command: { resume: 'authorized' }, stream_mode: ['values'] } as never, key));
    const seen = /bearer=(\S+)/.exec(lastAiText(lastValues(resumed)))?.[1];
    expect(seen).toBeDefined();
    expect(tools.bearers.at(-1)).toBe(seen);
    expect(await oidc.introspect(seen!)).toMatchObject({ active: true });
    const workspaceId = (await server.hangar.services.workspaces.authenticate(key))!.workspaceId;
    expect(await server.hangar.services.oauth.bearerFor({ workspaceId, principal: newcomer, providerId, agentId })).toBe(seen);

    // Another agent's run is asked for its own authorization: it was given nothing.
    const otherThread = await createThread(server, otherAgent);
    const other = JSON.stringify(await collect(await start(server, otherThread, { agent_id: otherAgent, messages: [{ role: 'user', content: '/call bearer {}' }], stream_mode: ['updates'] }, key)));
    expect(other).toContain('oauth_authorization_required');
    expect(other).toContain(`"agent_id":"${otherAgent}"`);
  });

  it('deleting the agent deletes its tokens; token_id and is_default name the scope, and contradictions are 422s', async () => {
    const agentId = await createAgent(server);
    const scoped = await authorize(member, { agent_id: agentId, is_default: false });
    expect(scoped.tokenId).toBe(`${providerId}:${principal}:${agentId}`);
    // token_id alone names the agent's token (REUSE: it is usable).
    const byId = await server.client.POST('/v1/deepagents/auth-sessions', { body: { provider_id: providerId, scopes: [], strategy: 'REUSE', token_id: scoped.tokenId }, headers: headers(member) });
    expect(byId.response.status).toBe(200);
    expect(byId.data).toMatchObject({ token: scoped.tokenId, metadata: { agent_id: agentId, is_default: false } });
    // agent_id with is_default true is the default token.
    const asDefault = await server.client.POST('/v1/deepagents/auth-sessions', { body: { provider_id: providerId, scopes: [], strategy: 'REUSE', agent_id: agentId, is_default: true }, headers: headers(member) });
    expect(asDefault.response.status).toBe(200);
    expect(asDefault.data).toMatchObject({ token: `${providerId}:${principal}`, metadata: { agent_id: agentId, is_default: true } });

    for (const body of [
      { token_id: `${providerId}:${principal}`, agent_id: agentId },
      { token_id: scoped.tokenId, is_default: true },
      { is_default: false },
    ]) {
      const refused = await server.client.POST('/v1/deepagents/auth-sessions', { body: { provider_id: providerId, scopes: [], strategy: 'CREATE', ...body }, headers: headers(member) });
      expect({ body, status: refused.response.status }).toEqual({ body, status: 422 });
      expect(JSON.stringify(refused.error)).toMatch(Object.keys(body).includes('token_id') ? /token_id|is_default/ : /is_default/);
    }
    const bad = await server.client.DELETE('/v2/auth/providers/{provider_id}/token', { params: { path: { provider_id: providerId }, query: { agent_id: 'not-a-uuid' } }, headers: headers(member) });
    expect(bad.response.status).toBe(422);
    expect(JSON.stringify(bad.error)).toContain('"loc":["query","agent_id"]');

    expect((await tokenList(member)).map((t) => t.agent_id)).toContain(agentId);
    expect((await server.client.DELETE('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: agentId } } })).response.status).toBe(204);
    expect((await tokenList(member)).map((t) => t.agent_id)).not.toContain(agentId);
    // A deleted agent's token cannot be asked for again.
    const gone = await server.client.POST('/v1/deepagents/auth-sessions', { body: { provider_id: providerId, scopes: [], strategy: 'REUSE', token_id: scoped.tokenId }, headers: headers(member) });
    expect(gone.response.status).toBe(404);
    expect(gone.error).toMatchObject({ code: 'agent_not_found' });
  });

  it('viewers start no session for an agent, and list only their own (no) tokens', async () => {
    const agentId = await createAgent(server);
    const viewer = await server.createKey({ role: 'viewer', principal });
    const refused = await server.client.POST('/v1/deepagents/auth-sessions', { body: { provider_id: providerId, scopes: [], strategy: 'CREATE', agent_id: agentId }, headers: headers(viewer) });
    expect(refused.response.status).toBe(403);
    const other = await server.createKey({ role: 'member', principal: 'ivan@example.com' });
    expect(await tokenList(other)).toEqual([]);
  });
});
