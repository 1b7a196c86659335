// A tool server behind OAuth, registered and connected in the Console as a person does it, with a
// client registered for them (`per_user_dynamic_client`): the Register form's "A client per user",
// then Connect, the authorization page (a real oidc-provider with dynamic registration on, which signs
// the user in by itself: the only scripted part), and back. The tool server is a real MCP resource
// server that checks each token with that authorization server.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOidcServer, type OidcServer } from '../fixtures/oidc-server.js';
import { startProtectedMcpServer, type ProtectedMcpServer } from '../fixtures/protected-mcp-server.js';
import { axeViolations, consoleSessions, ensureConsoleBuilt, launchBrowser, screenshot } from '../support/browser.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let browser: Browser;
let oidc: OidcServer;
let tools: ProtectedMcpServer;

beforeAll(async () => {
  ensureConsoleBuilt();
  [server, browser] = await Promise.all([startTestServer(), launchBrowser()]);
  oidc = await startOidcServer({ redirectUri: `${server.url}/oauth/callback`, registration: 'open' });
  tools = await startProtectedMcpServer(oidc, { metadata: { scopes: ['openid', 'offline_access'] } });
});
afterAll(async () => {
  await browser?.close();
  await Promise.all([server?.close(), tools?.close(), oidc?.close()]);
});

const { open, signIn } = consoleSessions(
  () => browser,
  () => server.url,
);

describe('a tool server with a client per user, in the Console', () => {
  it('registers it without a provider, connects through the authorization server, and lists its tools', async () => {
    const { context, page, errors } = await open();
    await signIn(page, server.adminKey, '/tool-servers');
    await page.getByRole('button', { name: 'Register tool server' }).click();
    const dialog = page.getByRole('dialog', { name: 'Register tool server' });
    await dialog.getByRole('textbox', { name: 'Name' }).fill('Per-user tools');
    await dialog.getByRole('textbox', { name: 'URL' }).fill(tools.url);
    await dialog.getByText('OAuth', { exact: true }).click();
    await dialog.getByText('A client per user', { exact: true }).click();
    // No provider to pick in this mode.
    await expect(dialog.getByRole('textbox', { name: 'OAuth provider' }).count()).resolves.toBe(0);
    await dialog.getByRole('button', { name: 'Register' }).click();
    await dialog.waitFor({ state: 'hidden' });

    const listed = await server.client.GET('/v1/deepagents/mcp-servers');
    const registered = listed.data!.find((s) => s.name === 'Per-user tools')!;
    expect(registered).toMatchObject({ auth_type: 'oauth', oauth_mode: 'per_user_dynamic_client', oauth_provider_id: null });

    // Connect: Hangar registers a client for this user, then starts an authorization with it.
    await page.getByRole('button', { name: 'Connect to Per-user tools' }).click();
    const link = page.getByRole('link', { name: 'Open the authorization page' });
    const href = (await link.getAttribute('href'))!;
    expect(href.startsWith(`${oidc.issuer}/auth?`)).toBe(true);
    const clientId = new URL(href).searchParams.get('client_id')!;
    const providers = (await server.client.GET('/v2/auth/providers', { params: { query: { limit: 100 } } })).data!.resources;
    expect(providers.filter((p) => p.is_dynamic_client).map((p) => p.client_id)).toEqual([clientId]);
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'tool-server-per-user-connect');

    // The authorization page, in a tab of its own, ends at Hangar's callback.
    const tab = await context.newPage();
    await tab.goto(href);
    await tab.waitForURL(`${server.url}/oauth/callback**`);
    await tab.close();

    // Connect again: already authorized; and the server now answers with its tools.
    await page.getByRole('button', { name: 'Connect to Per-user tools' }).click();
    await page.getByText('You have authorized this server; runs use your token.').waitFor();
    await page.getByRole('button', { name: 'Test connection' }).click();
    await page.getByLabel('Tools of Per-user tools').getByText('1 tool', { exact: true }).waitFor();
    await page.getByLabel('Tools of Per-user tools').getByText('whoami').waitFor();
    await screenshot(page, 'tool-server-per-user-connected');
    expect(errors).toEqual([]);
    await context.close();
  });
});
