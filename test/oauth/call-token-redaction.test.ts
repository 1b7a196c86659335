// A tool server's error that quotes the bearer token a call carried: the model, the run's state and
// its stream (which the workspace's viewers read) see it redacted, as they see header credentials
// redacted (test/runtime/tool-server-url-secrets and the secrets sweep). The token of an OAuth-backed
// server's call is the run principal's own, known only when the call is made: here it is not the
// token the agent's tools were listed with (the most recently authorized one, another principal's).
// Against a REAL authorization server (oidc-provider) and a real MCP tool server.
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
const providerId = 'quoting-tools';

beforeAll(async () => {
  server = await startTestServer();
  oidc = await startOidcServer({ redirectUri: `${server.url}/oauth/callback` });
  tools = await startProtectedMcpServer(oidc, { echoBearer: true });
  await registerOAuthToolServer(server, oidc, tools.url, { providerId, provider: 'Quoting tools', toolServer: 'Quoting tools' });
});
afterAll(async () => {
  await Promise.all([server?.close(), tools?.close(), oidc?.close()]);
});

/** Authorize `key`'s principal in the "browser"; resolves once its token is stored. */
async function authorize(key: string): Promise<void> {
  const headers = { 'X-Api-Key': key };
  const started = await server.client.POST('/v1/deepagents/auth-sessions', { body: { provider_id: providerId, scopes: ['openid', 'offline_access'], strategy: 'CREATE' } as never, headers });
  expect(started.response.status, JSON.stringify(started.error)).toBe(201);
  expect((await oidc.authorizeInBrowser(started.data!.verification_url!, `${server.url}/oauth/callback`)).status).toBe(200);
  const polled = await server.client.GET('/v1/deepagents/auth-sessions/{session_id}', { params: { path: { session_id: started.data!.id! }, query: { wait_seconds: 5 } }, headers });
  expect(polled.data).toMatchObject({ status: 'COMPLETED' });
}

describe('a tool error quoting the call’s bearer token', () => {
  it('reaches the model, the state and the stream with the token redacted', async () => {
    const caller = await server.createKey({ role: 'member', principal: 'caller@example.com' });
    const later = await server.createKey({ role: 'member', principal: 'later@example.com' });
    await authorize(caller);
    // Authorized last: the agent's tools are listed with this principal's token, not the caller's.
    await authorize(later);
    const agentId = await createAgent(server, { tools: { tools: [{ name: 'bearer', mcp_server_url: tools.url }, { name: 'bearer_refused', mcp_server_url: tools.url }] } });

    // The caller's own token, as the tool server sees it (a tool whose answer is the token, by design).
    const seen = await collect(await start(server, await createThread(server, agentId), { agent_id: agentId, messages: [{ role: 'user', content: '/call bearer {}' }], stream_mode: ['values'] }, caller));
    const token = /bearer=(\S+)/.exec(lastAiText(lastValues(seen)))?.[1];
    expect(token).toBeDefined();

    const threadId = await createThread(server, agentId);
    const events = await collect(await start(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: '/call bearer_refused {}' }], stream_mode: ['values', 'updates', 'messages-tuple'] }, caller));
    const answer = lastAiText(lastValues(events));
    // The error did reach the model, with the token's place marked.
    expect(answer).toContain('may not call this tool');
    expect(answer).toContain('[redacted]');
    expect(JSON.stringify(events)).not.toContain(token!);
    const state = await server.client.GET('/v1/deepagents/threads/{thread_id}/state', { params: { path: { thread_id: threadId } }, headers: { 'X-Api-Key': caller } });
    expect(state.response.status).toBe(200);
    expect(JSON.stringify(state.data)).not.toContain(token!);
  });
});
