// A token endpoint that answers oddly: a lifetime past the end of JavaScript dates, or a body that
// does not stop. The provider is a stand-in (a few lines of HTTP on 127.0.0.1): a real authorization
// server cannot be made to answer like this. The browser's redirect is the callback request itself.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_TOKEN_RESPONSE_BYTES } from '../../src/core/oauth/token-endpoint.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let provider: Server;
let base: string;

beforeAll(async () => {
  server = await startTestServer();
  provider = createServer((req, res) => {
    req.resume();
    const answer = (body: string) => res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    if (req.url === '/token/far-future') return answer(JSON.stringify({ access_token: 'far-future-token', token_type: 'Bearer', expires_in: 1e20 }));
    if (req.url === '/token/endless') {
      // Valid JSON, but larger than any token response: padding inside a string.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"access_token":"padded-token","token_type":"Bearer","padding":"');
      const chunk = 'x'.repeat(64 * 1024);
      for (let sent = 0; sent <= 2 * MAX_TOKEN_RESPONSE_BYTES; sent += chunk.length) res.write(chunk);
      return res.end('"}');
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await Promise.all([server?.close(), new Promise((resolve) => provider?.close(resolve))]);
});

/** Register a provider whose token endpoint is `path`, start a session, and send the provider's redirect. */
async function exchange(providerId: string, path: string) {
  const created = await server.client.POST('/v2/auth/providers', {
    body: { provider_id: providerId, name: providerId, client_id: 'hangar', client_secret: 'secret', auth_url: `${base}/authorize`, token_url: `${base}${path}` },
  });
  expect(created.response.status).toBe(200);
  const started = await server.client.POST('/v1/deepagents/auth-sessions', { body: { provider_id: providerId, strategy: 'CREATE' } });
  const state = new URL(started.data!.verification_url!).searchParams.get('state')!;
  const page = await fetch(`${server.url}/oauth/callback?state=${encodeURIComponent(state)}&code=the-code`);
  const polled = await server.client.GET('/v1/deepagents/auth-sessions/{session_id}', { params: { path: { session_id: started.data!.id! } } });
  return { page, html: await page.text(), session: polled.data! };
}

describe('a token endpoint that answers oddly', () => {
  it('a lifetime too long for a date is a token that does not expire soon, not a failed exchange', async () => {
    const { page, session } = await exchange('far-future', '/token/far-future');
    expect(page.status).toBe(200);
    expect(session.status).toBe('COMPLETED');
    const caller = (await server.hangar.services.workspaces.authenticate(server.adminKey))!;
    expect(await server.hangar.services.oauth.bearerFor({ workspaceId: caller.workspaceId, principal: caller.principal, providerId: 'far-future' })).toBe('far-future-token');
  });

  it('a body larger than any token response is refused, and the poller learns why', async () => {
    const { page, html, session } = await exchange('endless', '/token/endless');
    expect(page.status).toBe(400);
    expect(html).toContain(`more than ${MAX_TOKEN_RESPONSE_BYTES} bytes`);
    expect(session).toMatchObject({ status: 'CONNECTION_REQUIRED', error: expect.stringContaining(`more than ${MAX_TOKEN_RESPONSE_BYTES} bytes`) });
  });
});
