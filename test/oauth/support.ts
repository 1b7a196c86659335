// Set-up shared by the OAuth test files: an OAuth provider on the real authorization server, and a
// tool server registered behind it, as a user registers them.
import { expect } from 'vitest';
import type { OidcServer } from '../fixtures/oidc-server.js';
import type { TestServer } from '../support/server.js';

/** Register provider `providerId` (the `post` client of `oidc`) and the tool server at `url` behind it. */
export async function registerOAuthToolServer(server: TestServer, oidc: OidcServer, url: string, names: { providerId: string; provider: string; toolServer: string }): Promise<void> {
  const provider = await server.client.POST('/v2/auth/providers', {
    body: {
      provider_id: names.providerId,
      name: names.provider,
      client_id: oidc.clients.post.id,
      client_secret: oidc.clients.post.secret,
      auth_url: oidc.authUrl,
      token_url: oidc.tokenUrl,
      scopes: ['openid', 'offline_access'],
    },
  });
  expect(provider.response.status).toBe(200);
  const registered = await server.client.POST('/v1/deepagents/mcp-servers', { body: { name: names.toolServer, url, auth_type: 'oauth', oauth_provider_id: provider.data!.id } });
  expect(registered.response.status).toBe(201);
}
