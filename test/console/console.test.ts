// The Console in a real browser (Debian Chromium via playwright-core) against a real `hangar serve`
// on port 0: one server, one browser and one real MCP tool server for the whole file.
import os from 'node:os';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations, collectErrors, consoleSessions, ensureConsoleBuilt, launchBrowser, screenshot } from '../support/browser.js';
import { startBearerToolServer, type ToolServerFixture } from '../support/mcp.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createThread, lastAiText, lastValues, run } from '../runtime/support.js';
import { collect, streamRun } from '../../src/client/stream.js';
import { makeAppRepo, type AppRepo } from '../deployments/git-fixture.js';
import { principalLabel } from '../../src/core/store/service.js';

let server: TestServer;
let browser: Browser;
let tools: ToolServerFixture;
const TOOL_TOKEN = 'tool-server-secret-token-123';

let repo: AppRepo;

beforeAll(async () => {
  ensureConsoleBuilt();
  // Local repositories are allowed under the temporary directory, where the deployment test's git repository lives.
  const env = { HANGAR_DEPLOY_POLL_MS: '300', HANGAR_DEPLOY_ALLOW_LOCAL_REPOS: 'true', HANGAR_LOCAL_REPO_ROOTS: os.tmpdir() };
  [server, browser, tools, repo] = await Promise.all([startTestServer({ env }), launchBrowser(), startBearerToolServer(TOOL_TOKEN), makeAppRepo()]);
});
afterAll(async () => {
  await browser?.close();
  await tools?.close();
  await server?.close();
});

const { open, signIn } = consoleSessions(() => browser, () => server.url);

/** Until the page's finite animations (a dialog fading in) have ended, so a screenshot shows the end state. */
async function animationsDone(page: Page): Promise<void> {
  // A string, run in the page: this project's types have no DOM (as for axe in test/support/browser.ts).
  await page.evaluate(`Promise.all(document.getAnimations().filter((a) => a.effect?.getTiming().iterations !== Infinity).map((a) => a.finished.catch(() => undefined))).then(() => undefined)`);
}

async function expectAccessible(page: Page): Promise<void> {
  expect(await axeViolations(page)).toEqual([]);
}

describe('serving', () => {
  it('serves the app at / and at deep links with a strict CSP, no-cache index and immutable assets; API paths keep their 404s', async () => {
    for (const path of ['/', '/agents/3f1c2a9e-0000-4000-8000-000000000000', '/threads/x', '/traces/y', '/deployments/z', '/schedules', '/sign-in']) {
      const res = await fetch(`${server.url}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/text\/html/);
      expect(res.headers.get('cache-control')).toBe('no-cache');
      const csp = res.headers.get('content-security-policy')!;
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain('unsafe-inline');
      expect(csp).toContain("frame-ancestors 'none'");
      const html = await res.text();
      const nonce = /'nonce-([^']+)'/.exec(csp)![1]!;
      expect(html).toContain(`content="${nonce}"`);
      expect(html).not.toContain('__CSP_NONCE__');
    }
    const html = await (await fetch(`${server.url}/`)).text();
    const asset = /src="(\/assets\/[^"]+\.js)"/.exec(html)![1]!;
    const res = await fetch(`${server.url}${asset}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(res.headers.get('content-type')).toMatch(/javascript/);
    // Nothing from another origin: every script and stylesheet of the page is this server's.
    expect(html).not.toMatch(/(src|href)="https?:/);
    const api404 = await fetch(`${server.url}/v1/deepagents/nope`, { headers: { 'X-Api-Key': server.adminKey } });
    expect(api404.status).toBe(404);
    expect(((await api404.json()) as any).code).toBe('route_not_found');
    expect((await fetch(`${server.url}/assets/..%2Fpackage.json`)).status).toBe(404);
  });
});

describe('sessions', () => {
  it('exchanges a key for an HttpOnly SameSite=Strict cookie; changes need the CSRF token; sign-out and key revocation end it', async () => {
    const bad = await fetch(`${server.url}/v1/console/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: 'nope' }) });
    expect(bad.status).toBe(401);

    const key = await server.createKey({ role: 'member', principal: 'sessions@example.com' });
    const res = await fetch(`${server.url}/v1/console/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: key }) });
    expect(res.status).toBe(200);
    const setCookie = res.headers.get('set-cookie')!;
    expect(setCookie).toMatch(/^hangar_session=/);
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Strict/i);
    expect(setCookie).toMatch(/Expires=/i);
    const body = (await res.json()) as any;
    expect(body).toMatchObject({ role: 'member', principal: 'sessions@example.com' });
    expect(JSON.stringify(body)).not.toContain(key);
    const cookie = setCookie.split(';')[0]!;

    const me = await fetch(`${server.url}/v1/console/session`, { headers: { cookie } });
    expect(((await me.json()) as any).role).toBe('member');
    const agents = await fetch(`${server.url}/v1/deepagents/agents`, { headers: { cookie } });
    expect(agents.status).toBe(200);

    const create = (headers: Record<string, string>) =>
      fetch(`${server.url}/v1/deepagents/agents`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ name: 'csrf-check', runtime: { model: { model_id: 'scripted:demo' } } }),
      });
    const forged = await create({});
    expect(forged.status).toBe(403);
    expect(((await forged.json()) as any).detail).toMatch(/X-CSRF-Token/);
    expect((await create({ 'X-CSRF-Token': 'guess' })).status).toBe(403);
    expect((await create({ 'X-CSRF-Token': body.csrf_token })).status).toBe(201);

    // Sign-out ends that session; a second session dies with its key.
    expect((await fetch(`${server.url}/v1/console/session`, { method: 'DELETE', headers: { cookie, 'X-CSRF-Token': body.csrf_token } })).status).toBe(204);
    expect((await fetch(`${server.url}/v1/deepagents/agents`, { headers: { cookie } })).status).toBe(401);
    const again = await fetch(`${server.url}/v1/console/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: key }) });
    const cookie2 = again.headers.get('set-cookie')!.split(';')[0]!;
    expect((await fetch(`${server.url}/v1/deepagents/agents`, { headers: { cookie: cookie2 } })).status).toBe(200);
    const [record] = (await server.hangar.services.workspaces.listKeys()).filter((k) => k.principal === 'sessions@example.com');
    await server.hangar.services.workspaces.revokeKey(record!.id);
    expect((await fetch(`${server.url}/v1/deepagents/agents`, { headers: { cookie: cookie2 } })).status).toBe(401);
  });
});

describe('API keys over HTTP', () => {
  it('lets admins list, create (shown once) and revoke keys; other roles get 403; lists never hold a key', async () => {
    for (const role of ['member', 'viewer'] as const) {
      const other = server.clientFor(await server.createKey({ role }));
      expect((await other.GET('/v1/api-keys')).response.status, role).toBe(403);
      expect((await other.POST('/v1/api-keys', { body: { role: 'admin' } })).response.status, role).toBe(403);
    }
    const created = await server.client.POST('/v1/api-keys', { body: { role: 'viewer', principal: 'http@example.com', description: 'from the API' } });
    expect(created.response.status).toBe(201);
    const { key, id } = created.data!;
    expect(created.data).toMatchObject({ role: 'viewer', principal: 'http@example.com', description: 'from the API', revoked_at: null });
    expect(key.startsWith(created.data!.prefix)).toBe(true);
    const listed = await server.client.GET('/v1/api-keys');
    expect(listed.data!.find((k) => k.id === id)).toMatchObject({ role: 'viewer', prefix: created.data!.prefix });
    expect(JSON.stringify(listed.data)).not.toContain(key);
    expect(JSON.stringify(listed.data)).not.toContain(server.adminKey);
    expect((await server.clientFor(key).GET('/v1/deepagents/agents')).response.status).toBe(200);
    // Another workspace's admin can neither see nor revoke it.
    const elsewhere = await server.createWorkspace('keys-elsewhere');
    expect((await elsewhere.client.GET('/v1/api-keys')).data!.map((k) => k.id)).not.toContain(id);
    expect((await elsewhere.client.DELETE('/v1/api-keys/{key_id}', { params: { path: { key_id: id } } })).response.status).toBe(404);
    expect((await server.clientFor(key).GET('/v1/deepagents/agents')).response.status).toBe(200);
    const revoked = await server.client.DELETE('/v1/api-keys/{key_id}', { params: { path: { key_id: id } } });
    expect(revoked.data!.revoked_at).not.toBeNull();
    expect((await server.clientFor(key).GET('/v1/deepagents/agents')).response.status).toBe(401);
    const bad = await server.client.POST('/v1/api-keys', { body: { role: 'owner' as 'admin' } });
    expect(bad.response.status).toBe(422);
    expect(JSON.stringify(bad.error)).toContain('role');
  });
});

describe('in the browser', { timeout: 180_000 }, () => {
  it('signs in with the API key, keeps the key out of browser storage, and signs out', async () => {
    const { context, page, errors } = await open();
    await page.goto(`${server.url}/agents`);
    await page.getByLabel('API key').waitFor();
    await expectAccessible(page);
    await screenshot(page, 'sign-in');
    await page.getByLabel('API key').fill('wrong-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'unknown or revoked' }).waitFor();
    errors.length = 0; // the browser logs the refused sign-in's 401 itself
    await page.getByLabel('API key').fill(server.adminKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Agents' }).waitFor();
    const stored = await page.evaluate<string>('JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }) + document.cookie');
    expect(stored).not.toContain(server.adminKey);
    const cookies = await context.cookies();
    expect(cookies.find((c) => c.name === 'hangar_session')).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').waitFor();
    expect(errors).toEqual([]);
    await context.close();
  });

  it('creates an agent, edits AGENTS.md with a preview, and saving makes a new revision with a diff', async () => {
    const { context, page, errors } = await open();
    await signIn(page, server.adminKey, '/agents');
    await page.getByRole('button', { name: 'New agent' }).click();
    await page.getByRole('dialog').getByRole('textbox', { name: /^Name/ }).fill('Greeter');
    await page.getByRole('button', { name: 'Create agent' }).click();
    await page.getByRole('heading', { name: 'Greeter', level: 2 }).waitFor();
    expect(page.url()).toMatch(/\/agents\/[0-9a-f-]{36}$/);
    await page.getByLabel('Instructions (AGENTS.md)').fill('# Greeter\n\nAlways greet **warmly**.');
    await page.getByLabel('Preview').getByRole('heading', { name: 'Greeter', level: 1 }).waitFor();
    await expect(page.getByLabel('Preview').locator('strong').textContent()).resolves.toBe('warmly');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved as revision' }).waitFor();
    await page.getByRole('tab', { name: 'Revisions' }).click();
    await page.getByText('#2', { exact: true }).waitFor();
    const diff = page.getByLabel('Diff');
    await diff.getByText('+ Always greet **warmly**.').waitFor();
    await diff.getByText('- You are a helpful assistant.').waitFor();
    await expectAccessible(page);
    await screenshot(page, 'agent-revisions');
    // A deep link straight to the agent loads the app there.
    await page.reload();
    await page.getByRole('heading', { name: 'Greeter', level: 2 }).waitFor();
    expect(errors).toEqual([]);
    await context.close();
  });

  it('registers a tool server with a masked header, lists its tools, and picks a tool with approval for an agent', async () => {
    const { context, page, errors } = await open();
    await signIn(page, server.adminKey, '/tool-servers');
    await page.getByRole('button', { name: 'Register tool server' }).click();
    await page.getByRole('dialog').getByRole('textbox', { name: /^Name/ }).fill('Calculator');
    await page.getByRole('dialog').getByRole('textbox', { name: /^URL/ }).fill(tools.url);
    await page.getByRole('button', { name: 'Add header' }).click();
    await page.getByLabel('Header 1 name').fill('Authorization');
    await page.getByLabel('Header 1 value').fill(`Bearer ${TOOL_TOKEN}`);
    await page.getByRole('button', { name: 'Register', exact: true }).click();
    await page.getByText('Headers: Authorization: ••••••').waitFor();
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    expect(await page.content()).not.toContain(TOOL_TOKEN);
    await page.getByRole('button', { name: 'Test connection' }).click();
    const listed = page.getByLabel('Tools of Calculator');
    await listed.getByText('2 tools').waitFor();
    await listed.getByText('add', { exact: true }).waitFor();
    await expectAccessible(page);
    await screenshot(page, 'tool-servers');

    // The picker on an agent's Tools tab is fed by the same listing.
    const agent = (await server.client.POST('/v1/deepagents/agents', { body: { name: 'Adder', runtime: { model: { model_id: 'scripted:demo' } } } })).data!;
    await page.goto(`${server.url}/agents/${agent.id}`);
    await page.getByRole('tab', { name: 'Tools' }).click();
    await page.getByRole('checkbox', { name: 'add' }).check();
    await page.getByRole('switch', { name: 'Require approval for add' }).check();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved as revision' }).waitFor();
    const saved = (await server.client.GET('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: agent.id } } })).data!;
    expect(saved.tools.tools).toEqual([{ name: 'add', mcp_server_url: tools.url, mcp_server_name: 'Calculator' }]);
    expect(saved.tools.interrupt_config).toEqual({ [`${tools.url}::add`]: true });
    expect(errors).toEqual([]);
    await context.close();
  });

  it('keeps long text inside its column: revision numbers whole on a phone, Model and Updated in view beside a long description', async () => {
    const description = `unbroken${'x'.repeat(400)}`;
    const created = await server.client.POST('/v1/deepagents/agents', { body: { name: 'Long words', description, runtime: { model: { model_id: 'scripted:demo' } } } });
    const id = created.data!.id;
    // Revisions whose message lists many fields, so their line wraps on a narrow screen.
    for (const n of [1, 2]) {
      const res = await server.client.PATCH('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: id } }, body: { description: `${description}${n}`, instructions: `Revision ${n}.`, runtime: { model: { model_id: `scripted:demo${n}` } } } });
      expect(res.response.status).toBe(200);
    }
    const { context, page, errors } = await open();
    await signIn(page, server.adminKey, '/agents');
    const row = page.getByRole('row').filter({ hasText: 'Long words' });
    await row.waitFor();
    for (const column of ['Model', 'Updated']) {
      const box = (await page.getByRole('columnheader', { name: column }).boundingBox())!;
      expect(box.x + box.width, column).toBeLessThanOrEqual(1280);
    }
    await screenshot(page, 'agents-long-description');

    await page.setViewportSize({ width: 390, height: 900 });
    await page.goto(`${server.url}/agents/${id}`);
    await page.getByRole('tab', { name: 'Revisions' }).click();
    const badges = page.getByLabel('Revision list').locator('.mantine-Badge-label');
    await badges.getByText('#3', { exact: true }).waitFor();
    const cut = await badges.evaluateAll((labels) => labels.filter((l) => l.scrollWidth > l.clientWidth).map((l) => l.textContent));
    expect(cut).toEqual([]);
    await screenshot(page, 'agent-revisions-390');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('saves only what changed: the revision names that field, and the rest of the runtime stays', async () => {
    const created = await server.client.POST('/v1/deepagents/agents', { body: { name: 'One change', runtime: { model: { model_id: 'scripted:demo' }, run_timeout_seconds: 120 } } });
    const id = created.data!.id;
    const { context, page, errors } = await open();
    const bodies: Record<string, unknown>[] = [];
    page.on('request', (r) => {
      if (r.method() === 'PATCH' && new URL(r.url()).pathname === `/v1/deepagents/agents/${id}`) bodies.push(r.postDataJSON() as Record<string, unknown>);
    });
    await signIn(page, server.adminKey, `/agents/${id}`);
    await page.getByRole('textbox', { name: 'Description' }).fill('Only this changed');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved as revision' }).waitFor();
    expect(bodies.map((b) => Object.keys(b))).toEqual([['description']]);
    const revisions = async () => (await server.client.GET('/v1/deepagents/agents/{agent_id}/revisions', { params: { path: { agent_id: id }, query: { page_size: 10 } } })).data!.items;
    const [latest] = await revisions();
    expect(latest!.message).toMatch(/description/);
    expect(latest!.message).not.toMatch(/runtime|instructions|tools|skills|subagents/);

    // Changing the model keeps the run time limit.
    await page.getByRole('textbox', { name: 'Model' }).fill('scripted:other');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => bodies.length).toBe(2);
    await page.getByText('Unsaved changes').waitFor({ state: 'detached' });
    expect(Object.keys(bodies[1]!)).toEqual(['runtime']);
    const agent = (await server.client.GET('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: id } } })).data!;
    expect(agent.runtime).toEqual({ model: { model_id: 'scripted:other' }, run_timeout_seconds: 120 });
    expect(agent.description).toBe('Only this changed');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('shows a viewer read-only pages: no write buttons and no credentials', async () => {
    await server.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'Secret server', url: 'http://127.0.0.1:9/mcp', headers: [{ key: 'X-Token', value: 'viewer-must-not-see' }] } });
    const viewerKey = await server.createKey({ role: 'viewer', principal: 'viewer@example.com' });
    const { context, page, errors } = await open(390);
    await signIn(page, viewerKey, '/agents');
    await page.getByRole('heading', { name: 'Agents' }).waitFor();
    await page.getByRole('link', { name: 'Greeter' }).waitFor();
    expect(await page.getByRole('button', { name: 'New agent' }).count()).toBe(0);
    await page.getByRole('link', { name: 'Greeter' }).click();
    await page.getByRole('heading', { name: 'Greeter', level: 2 }).waitFor();
    for (const name of ['Save', 'Clone', 'Delete']) expect(await page.getByRole('button', { name }).count(), name).toBe(0);
    await expectAccessible(page);
    await screenshot(page, 'viewer-agent-390');
    // Its playground offers threads to read, not a conversation to start (it once said "Say something
    // to Greeter" beside a "New thread" button, with no message box).
    await page.getByRole('link', { name: 'Open playground' }).click();
    await page.getByText('Pick a thread to read it: a viewer key cannot send messages.').waitFor();
    expect(await page.getByText(/^Say something to/).count()).toBe(0);
    expect(await page.getByRole('link', { name: 'New thread' }).count()).toBe(0);
    expect(await page.getByLabel('Message', { exact: true }).count()).toBe(0);
    await expectAccessible(page);
    await page.goto(`${server.url}/tool-servers`);
    await page.getByText('Secret server').waitFor();
    expect(await page.getByRole('button', { name: 'Register tool server' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Test connection' }).count()).toBe(0);
    expect(await page.content()).not.toContain('viewer-must-not-see');
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe('memories and keys in the browser', { timeout: 180_000 }, () => {
  it('shows what a run wrote under /memories/ and /memories/user/, and the next run reads an edit made in the page', async () => {
    const agent = (await server.client.POST('/v1/deepagents/agents', { body: { name: 'Rememberer', runtime: { model: { model_id: 'scripted:demo' } } } })).data!;
    const write = await createThread(server, agent.id, { skip_memory_write_protection: true });
    await run(server, write, {
      agent_id: agent.id,
      messages: [{ role: 'user', content: '/call write_file {"file_path": "/memories/notes.md", "content": "likes tea"}\n/call write_file {"file_path": "/memories/user/me.md", "content": "the admin prefers mornings"}' }],
    });
    const { context, page, errors } = await open();
    await signIn(page, server.adminKey, `/agents/${agent.id}`);
    await page.getByRole('link', { name: 'Memories' }).click();
    await page.getByRole('heading', { name: 'Memories of Rememberer' }).waitFor();
    const mine = page.getByRole('region', { name: /^Your memories/ });
    await mine.getByRole('button', { name: /\/memories\/user\/me\.md/ }).click();
    await expect(mine.getByLabel('Content of /memories/user/me.md').inputValue()).resolves.toBe('the admin prefers mornings');
    const shared = page.getByRole('region', { name: 'Agent memories' });
    // The principal's file is not listed among the agent's own.
    expect(await shared.getByRole('button', { name: /me\.md/ }).count()).toBe(0);
    await shared.getByRole('button', { name: /\/memories\/notes\.md/ }).click();
    const editor = shared.getByLabel('Content of /memories/notes.md');
    await expect(editor.inputValue()).resolves.toBe('likes tea');
    await editor.fill('likes green tea, no sugar');
    await shared.getByRole('button', { name: 'Save memory' }).click();
    await shared.getByRole('status').filter({ hasText: 'the next run reads it' }).waitFor();
    await expectAccessible(page);
    await screenshot(page, 'memories');
    const read = await createThread(server, agent.id);
    const { events } = await run(server, read, { agent_id: agent.id, messages: [{ role: 'user', content: '/call read_file {"file_path": "/memories/notes.md"}' }] });
    expect(lastAiText(lastValues(events))).toContain('likes green tea, no sugar');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('shows a viewer the agent’s memories and their own, read-only (the page once said "a viewer key cannot change resources")', async () => {
    const agent = (await server.client.POST('/v1/deepagents/agents', { body: { name: 'Read-only notes', runtime: { model: { model_id: 'scripted:demo' } } } })).data!;
    await server.client.PUT('/v1/deepagents/store/items', { body: { namespace: [agent.id, 'memories'], key: '/tips.md', value: { content: ['water the plants'] } } });
    const viewerKey = await server.createKey({ role: 'viewer', principal: 'reader@example.com' });
    for (const width of [1280, 390]) {
      const { context, page, errors } = await open(width);
      await signIn(page, viewerKey, `/agents/${agent.id}/memories`);
      await page.getByRole('heading', { name: 'Memories of Read-only notes' }).waitFor();
      const shared = page.getByRole('region', { name: 'Agent memories' });
      await shared.getByRole('button', { name: /\/memories\/tips\.md/ }).click();
      const content = shared.getByLabel('Content of /memories/tips.md');
      await expect(content.inputValue()).resolves.toBe('water the plants');
      expect(await content.getAttribute('readonly')).not.toBeNull();
      expect(await page.getByRole('button', { name: 'Save memory' }).count()).toBe(0);
      await page.getByRole('region', { name: /^Your memories \(reader@example\.com\)/ }).getByText('No files under /memories/user/ yet.').waitFor();
      expect(await page.getByText(/cannot change resources/).count()).toBe(0);
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(width);
      await expectAccessible(page);
      await screenshot(page, `memories-viewer-${width}`);
      expect(errors).toEqual([]);
      await context.close();
    }
  });

  it('lets an admin read and edit another principal’s memories; a member is offered only their own', async () => {
    const agent = (await server.client.POST('/v1/deepagents/agents', { body: { name: 'Shared notes', runtime: { model: { model_id: 'scripted:demo' } } } })).data!;
    const principal = 'a??@example.com'; // its label holds a `~` (base64url's `_`): the page must decode it
    const memberKey = await server.createKey({ role: 'member', principal });
    const member = server.clientFor(memberKey);
    const namespace = [agent.id, 'memories', 'user', principalLabel(principal)];
    expect((await member.PUT('/v1/deepagents/store/items', { body: { namespace, key: '/plans.md', value: { content: 'ships on Friday' } } })).response.status).toBe(204);

    const { context, page, errors } = await open();
    await signIn(page, server.adminKey, `/agents/${agent.id}/memories`);
    await page.getByLabel('Another principal’s memories').selectOption({ label: principal });
    const theirs = page.getByRole('region', { name: `Memories of ${principal}` });
    await theirs.getByRole('button', { name: /\/memories\/user\/plans\.md/ }).click();
    const editor = theirs.getByLabel('Content of /memories/user/plans.md');
    await expect(editor.inputValue()).resolves.toBe('ships on Friday');
    await editor.fill('ships on Monday');
    await theirs.getByRole('button', { name: 'Save memory' }).click();
    await theirs.getByRole('status').filter({ hasText: 'the next run reads it' }).waitFor();
    const stored = await member.POST('/v1/deepagents/store/items/search', { body: { namespace_prefix: namespace, limit: 10, offset: 0 } });
    expect(stored.data!.items.map((i) => [i.key, i.value.content])).toEqual([['/plans.md', 'ships on Monday']]);
    await expectAccessible(page);
    expect(errors).toEqual([]);
    await context.close();

    // The member sees the file as their own, and no other principal's.
    const second = await open();
    await signIn(second.page, memberKey, `/agents/${agent.id}/memories`);
    const own = second.page.getByRole('region', { name: `Your memories (${principal})` });
    await own.getByRole('button', { name: /\/memories\/user\/plans\.md/ }).click();
    expect(await second.page.getByLabel('Another principal’s memories').count()).toBe(0);
    // Deleting asks first: cancelled, the file stays; confirmed, it is gone.
    await own.getByRole('button', { name: 'Delete memory' }).click();
    const dialog = second.page.getByRole('dialog', { name: 'Delete memory' });
    await dialog.getByText('/memories/user/plans.md is deleted for good').waitFor();
    await expectAccessible(second.page);
    await screenshot(second.page, 'memory-delete');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect((await member.POST('/v1/deepagents/store/items/search', { body: { namespace_prefix: namespace, limit: 10, offset: 0 } })).data!.items).toHaveLength(1);
    await own.getByRole('button', { name: 'Delete memory' }).click();
    await dialog.getByRole('button', { name: 'Delete memory' }).click();
    await own.getByText('No files under /memories/user/ yet.').waitFor();
    expect((await member.POST('/v1/deepagents/store/items/search', { body: { namespace_prefix: namespace, limit: 10, offset: 0 } })).data!.items).toEqual([]);
    expect(second.errors).toEqual([]);
    await second.context.close();
  });

  it('"Add file" with the name of an existing memory keeps that memory: it says so and opens it, never empties it', async () => {
    const agent = (await server.client.POST('/v1/deepagents/agents', { body: { name: 'Kept notes', runtime: { model: { model_id: 'scripted:demo' } } } })).data!;
    const namespace = [agent.id, 'memories'];
    expect((await server.client.PUT('/v1/deepagents/store/items', { body: { namespace, key: '/notes.md', value: { content: 'likes tea' } } })).response.status).toBe(204);
    const { context, page, errors } = await open();
    await signIn(page, server.adminKey, `/agents/${agent.id}/memories`);
    const shared = page.getByRole('region', { name: 'Agent memories' });
    await shared.getByRole('button', { name: /\/memories\/notes\.md/ }).waitFor();
    await shared.getByLabel('New file under /memories/').fill('notes.md');
    await shared.getByRole('button', { name: 'Add file' }).click();
    await shared.getByText('/memories/notes.md already exists: open it from the list to edit it').waitFor();
    await expect(shared.getByLabel('Content of /memories/notes.md').inputValue()).resolves.toBe('likes tea');
    const stored = await server.client.POST('/v1/deepagents/store/items/search', { body: { namespace_prefix: namespace, limit: 10, offset: 0 } });
    expect(stored.data!.items.map((i) => [i.key, i.value.content])).toEqual([['/notes.md', 'likes tea']]);
    // A new name is still added, empty, and opened.
    await shared.getByLabel('New file under /memories/').fill('todo.md');
    await shared.getByRole('button', { name: 'Add file' }).click();
    await expect(shared.getByLabel('Content of /memories/todo.md').inputValue()).resolves.toBe('');
    await screenshot(page, 'memory-add-existing');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('lets an admin create a key (shown once) and revoke it: the key is refused and its console session ends', async () => {
    const { context, page, errors } = await open();
    await signIn(page, server.adminKey, '/settings');
    const keys = page.getByRole('region', { name: 'API keys' });
    await keys.getByLabel('Role').selectOption('member');
    await keys.getByLabel('Principal').fill('new-colleague@example.com');
    await keys.getByLabel('Key description').fill('made in the console');
    await keys.getByRole('button', { name: 'Create key' }).click();
    const shown = keys.getByLabel('New API key', { exact: true });
    await shown.waitFor();
    const newKey = (await shown.textContent())!.trim();
    expect(newKey).toMatch(/^hgr_/);
    const row = keys.getByRole('row').filter({ hasText: 'new-colleague@example.com' });
    await row.getByText('made in the console').waitFor();
    expect(await row.textContent()).not.toContain(newKey);
    await expectAccessible(page);
    await screenshot(page, 'settings-api-keys');

    // The colleague signs in with it in a browser of their own.
    const colleague = await open();
    await signIn(colleague.page, newKey, '/agents');
    await colleague.page.getByRole('heading', { name: 'Agents' }).waitFor();
    await colleague.page.getByRole('link', { name: 'Settings' }).click();
    await colleague.page.getByRole('heading', { name: 'Settings' }).waitFor();
    expect(await colleague.page.getByRole('region', { name: 'API keys' }).count()).toBe(0); // a member manages no keys

    // Dismissed, the key is gone from the page for good.
    await keys.getByRole('button', { name: 'Dismiss the new key' }).click();
    await shown.waitFor({ state: 'detached' });
    expect(await page.content()).not.toContain(newKey);
    await row.getByRole('button', { name: /^Revoke key/ }).click();
    await page.getByRole('dialog', { name: 'Revoke API key' }).getByRole('button', { name: 'Revoke key' }).click();
    await row.getByText('revoked').waitFor();
    expect((await server.clientFor(newKey).GET('/v1/deepagents/agents')).response.status).toBe(401);
    await colleague.page.reload();
    await colleague.page.getByLabel('API key').waitFor();
    await page.reload();
    await page.getByRole('region', { name: 'API keys' }).waitFor();
    expect(await page.content()).not.toContain(newKey);
    expect(errors).toEqual([]);
    await colleague.context.close();
    await context.close();
  });
});

describe('destructive actions ask first', { timeout: 180_000 }, () => {
  it('deletes a model configuration and a tool server only once confirmed, naming the agents that use them (a tool server deleted meanwhile is simply gone)', async () => {
    const mcp = await startBearerToolServer('confirm-token');
    try {
      await server.client.POST('/v1/deepagents/model-configs', { body: { name: 'confirm-model', model_id: 'scripted:demo' } });
      await server.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'Confirm tools', url: mcp.url, headers: [{ key: 'Authorization', value: 'Bearer confirm-token' }] } });
      const user = await server.client.POST('/v1/deepagents/agents', { body: { name: 'Config user', runtime: { model: { model_id: 'confirm-model' } }, tools: { tools: [{ name: 'add', mcp_server_url: mcp.url }] } } });
      expect(user.response.status).toBe(201);
      const { context, page, errors } = await open();
      await signIn(page, server.adminKey, '/settings');

      // Model configuration: Cancel keeps it; the dialog names the agent that uses it.
      await page.getByRole('button', { name: 'Delete model configuration confirm-model' }).click();
      let dialog = page.getByRole('dialog', { name: 'Delete model configuration' });
      await dialog.getByLabel('Agents that use it').getByRole('link', { name: 'Config user' }).waitFor();
      await expectAccessible(page);
      await animationsDone(page);
    await screenshot(page, 'confirm-delete-model-config');
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await dialog.waitFor({ state: 'detached' });
      expect((await server.client.GET('/v1/deepagents/model-configs')).data!.map((m) => m.name)).toContain('confirm-model');
      await page.getByRole('button', { name: 'Delete model configuration confirm-model' }).click();
      await dialog.getByRole('button', { name: 'Delete configuration' }).click();
      await dialog.waitFor({ state: 'detached' });
      await page.getByRole('cell', { name: 'confirm-model', exact: true }).waitFor({ state: 'detached' });
      expect((await server.client.GET('/v1/deepagents/model-configs')).data!.map((m) => m.name)).not.toContain('confirm-model');

      // Revoking the key of this very session warns that it signs you out.
      const keys = page.getByRole('region', { name: 'API keys' });
      await keys.getByRole('row').filter({ hasText: 'this session' }).getByRole('button', { name: /^Revoke key/ }).click();
      dialog = page.getByRole('dialog', { name: 'Revoke API key' });
      await dialog.getByText('This is the key of this session').waitFor();
      await animationsDone(page);
    await screenshot(page, 'confirm-revoke-own-key');
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await dialog.waitFor({ state: 'detached' });

      // Tool server: the dialog names the agent using its tools. One deleted meanwhile (in another tab)
      // is simply gone when this delete is confirmed: tool-server deletes are idempotent.
      await page.getByRole('link', { name: 'Tool servers' }).click();
      await page.getByRole('button', { name: 'Delete tool server Confirm tools' }).click();
      dialog = page.getByRole('dialog', { name: 'Delete tool server' });
      await dialog.getByLabel('Agents that use it').getByRole('link', { name: 'Config user' }).waitFor();
      const [registered] = (await server.client.GET('/v1/deepagents/mcp-servers')).data!.filter((m) => m.name === 'Confirm tools');
      await server.client.DELETE('/v1/deepagents/mcp-servers/{mcp_server_id}', { params: { path: { mcp_server_id: registered!.id } } }); // gone meanwhile
      await dialog.getByRole('button', { name: 'Delete tool server' }).click();
      await dialog.waitFor({ state: 'detached' });
      await page.getByRole('button', { name: 'Delete tool server Confirm tools' }).waitFor({ state: 'detached' });
      await expectAccessible(page);
      expect(errors.filter((e) => !/404/.test(e))).toEqual([]);
      await context.close();
    } finally {
      await mcp.close();
    }
  });
});

describe('a workspace of more than 100 agents', { timeout: 180_000 }, () => {
  // A workspace of its own: its 102 agents stay out of the other tests' lists.
  let ws: Awaited<ReturnType<TestServer['createWorkspace']>>;
  let mcp: ToolServerFixture;

  /** A run of `agentId` in the workspace, to its end (it counts in the Usage page). */
  async function runInWorkspace(agentId: string): Promise<void> {
    const thread = await ws.client.POST('/v1/deepagents/threads', { body: { agent_id: agentId } });
    const stream = await streamRun({ baseUrl: server.url, apiKey: ws.adminKey, threadId: thread.data!.id, body: { agent_id: agentId, messages: [{ role: 'user', content: 'count me' }] } });
    expect(stream.status).toBe(200);
    await collect(stream);
  }

  beforeAll(async () => {
    ws = await server.createWorkspace('many-agents');
    mcp = await startBearerToolServer('many-token');
    expect((await ws.client.POST('/v1/deepagents/model-configs', { body: { name: 'many-model', model_id: 'scripted:demo' } })).response.status).toBe(201);
    expect((await ws.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'Many tools', url: mcp.url, headers: [{ key: 'Authorization', value: 'Bearer many-token' }] } })).response.status).toBe(201);
    // The two oldest agents are the least recently updated: last in the list's default order. The
    // runner has a run (the Usage page names it); the user uses the model configuration and tool server.
    const runner = await ws.client.POST('/v1/deepagents/agents', { body: { name: 'Oldest runner', runtime: { model: { model_id: 'scripted:demo' } } } });
    expect(runner.response.status).toBe(201);
    await runInWorkspace(runner.data!.id);
    const user = await ws.client.POST('/v1/deepagents/agents', { body: { name: 'Oldest user', runtime: { model: { model_id: 'many-model' } }, tools: { tools: [{ name: 'add', mcp_server_url: mcp.url }] } } });
    expect(user.response.status).toBe(201);
    for (let batch = 0; batch < 10; batch++) {
      await Promise.all(
        Array.from({ length: 10 }, async (_, i) => {
          const res = await ws.client.POST('/v1/deepagents/agents', { body: { name: `Filler ${batch * 10 + i}`, runtime: { model: { model_id: 'scripted:demo' } } } });
          expect(res.response.status).toBe(201);
        }),
      );
    }
    const first = await ws.client.GET('/v1/deepagents/agents', { params: { query: { page_size: 100 } } });
    expect(first.data!.items.map((a) => a.name)).not.toContain('Oldest user');
    expect(first.data!.items.map((a) => a.name)).not.toContain('Oldest runner');
    expect(first.data!.next_cursor).not.toBeNull();
  }, 180_000);
  afterAll(async () => {
    await mcp?.close();
  });

  it('names an agent beyond the first 100 when deleting a model configuration or a tool server', async () => {
    const { context, page, errors } = await open();
    await signIn(page, ws.adminKey, '/settings');
    await page.getByRole('button', { name: 'Delete model configuration many-model' }).click();
    let dialog = page.getByRole('dialog', { name: 'Delete model configuration' });
    // Once the look-up has ended (a list, or "No agent uses it."), the list names the user.
    await dialog.getByLabel('Agents that use it', { exact: true }).or(dialog.getByText('No agent uses it.')).waitFor();
    expect(await dialog.getByLabel('Agents that use it', { exact: true }).getByRole('link').allTextContents()).toEqual(['Oldest user']);
    await animationsDone(page);
    await screenshot(page, 'confirm-delete-model-config-101-agents');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });

    await page.getByRole('link', { name: 'Tool servers' }).click();
    await page.getByRole('button', { name: 'Delete tool server Many tools' }).click();
    dialog = page.getByRole('dialog', { name: 'Delete tool server' });
    await dialog.getByLabel('Agents that use it', { exact: true }).or(dialog.getByText('No agent uses its tools.')).waitFor();
    expect(await dialog.getByLabel('Agents that use it', { exact: true }).getByRole('link').allTextContents()).toEqual(['Oldest user']);
    await expectAccessible(page);
    await animationsDone(page);
    await screenshot(page, 'confirm-delete-tool-server-101-agents');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect(errors).toEqual([]);
    await context.close();
  });

  it('shows every agent on the Agents page: the next page holds the oldest, and a search starts at its first page', async () => {
    const { context, page, errors } = await open();
    await signIn(page, ws.adminKey, '/agents');
    const links = page.getByRole('table').getByRole('link');
    // The first page: the 100 most recently updated, and a way on.
    await page.getByRole('button', { name: 'Next page' }).waitFor();
    expect(await links.count()).toBe(100);
    expect(await links.allTextContents()).not.toContain('Oldest user');
    expect(await page.getByRole('button', { name: 'First page' }).count()).toBe(0);

    await page.getByRole('button', { name: 'Next page' }).click();
    await page.getByRole('button', { name: 'First page' }).waitFor();
    await page.getByRole('link', { name: 'Oldest user', exact: true }).waitFor();
    expect(await links.allTextContents()).toEqual(['Oldest user', 'Oldest runner']);
    expect(await page.getByRole('button', { name: 'Next page' }).count()).toBe(0);
    await expectAccessible(page);
    await screenshot(page, 'agents-second-page');

    // A search from the second page shows its own first page.
    await page.getByLabel('Search agents').fill('Filler 4');
    await page.getByRole('link', { name: 'Filler 4', exact: true }).waitFor();
    await page.getByRole('button', { name: 'First page' }).waitFor({ state: 'detached' });
    expect((await links.allTextContents()).sort()).toEqual(['Filler 4', 'Filler 40', 'Filler 41', 'Filler 42', 'Filler 43', 'Filler 44', 'Filler 45', 'Filler 46', 'Filler 47', 'Filler 48', 'Filler 49']);
    expect(await page.getByRole('button', { name: 'Next page' }).count()).toBe(0);
    // And so does clearing it: the whole list's first page, not the page left before the search.
    await page.getByLabel('Search agents').fill('');
    await page.getByRole('button', { name: 'Next page' }).waitFor();
    expect(await links.count()).toBe(100);
    expect(await links.allTextContents()).not.toContain('Oldest user');
    expect(await page.getByRole('button', { name: 'First page' }).count()).toBe(0);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('names on the Usage page an agent beyond the first 100, and says which agent was deleted', async () => {
    const gone = await ws.client.POST('/v1/deepagents/agents', { body: { name: 'Gone soon', runtime: { model: { model_id: 'scripted:demo' } } } });
    await runInWorkspace(gone.data!.id);
    expect((await ws.client.DELETE('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: gone.data!.id } } })).response.status).toBe(204);
    const { context, page, errors } = await open();
    await signIn(page, ws.adminKey, '/usage');
    await page.getByRole('cell', { name: 'Oldest runner', exact: true }).waitFor();
    await page.getByRole('cell', { name: `Deleted agent ${gone.data!.id.slice(0, 8)}`, exact: true }).waitFor();
    await page.getByLabel('Runs per day').locator('svg.recharts-surface').waitFor();
    await expectAccessible(page);
    await screenshot(page, 'usage-agent-beyond-100');
    // The deleted agent's GET answered 404, which the browser logs.
    expect(errors.filter((e) => !/404/.test(e))).toEqual([]);
    await context.close();
  });
});

describe('lists past their first page', { timeout: 300_000 }, () => {
  let ws: Awaited<ReturnType<TestServer['createWorkspace']>>;
  let newestDeployment: string;
  let firstRevision: string;
  let revised: string;
  let chatty: string;
  let longThread: string;
  let oldestThread: string;
  let oldestRun: string;
  const principals = Array.from({ length: 1001 }, (_, i) => `p${String(i).padStart(4, '0')}@example.com`);

  /** `n` calls of `make`, ten at a time. */
  async function inBatches(n: number, make: (i: number) => Promise<void>): Promise<void> {
    for (let start = 0; start < n; start += 10) await Promise.all(Array.from({ length: Math.min(10, n - start) }, (_, j) => make(start + j)));
  }

  beforeAll(async () => {
    ws = await server.createWorkspace('many-rows');
    // 101 deployments (one page of 100 and one more, the oldest): their builds may fail, they are listed all the same.
    await repo.push('main', { label: 'v1' });
    const integration = await ws.client.POST('/v1/integrations/forge/vcshost', { body: { kind: 'git', name: 'local repos', base_url: repo.directoryUrl } });
    expect(integration.response.status).toBe(201);
    const integrationId = integration.data!.id;
    for (let i = 0; i < 101; i++) {
      const res = await ws.client.POST('/v2/deployments', {
        body: { name: `dep-${String(i).padStart(3, '0')}`, source: 'vcshost', source_config: { integration_id: integrationId, repo_url: repo.url }, source_revision_config: { repo_ref: 'main' }, secrets: [] },
      });
      expect(res.response.status, JSON.stringify(res.error)).toBe(201);
      if (i === 100) newestDeployment = res.data!.id;
    }
    // The newest of them has 51 revisions: its first and 50 redeploys.
    const first = (await ws.client.GET('/v2/deployments/{deployment_id}', { params: { path: { deployment_id: newestDeployment } } })).data!.latest_revision_id!;
    firstRevision = first;
    for (let i = 0; i < 50; i++) {
      const res = await ws.client.POST('/v2/deployments/{deployment_id}/revisions/{revision_id}/redeploy', { params: { path: { deployment_id: newestDeployment, revision_id: first } } });
      expect(res.response.status, JSON.stringify(res.error)).toBe(201);
    }
    // 21 OAuth providers and 21 integrations: one more than a list's default page.
    await inBatches(21, async (i) => {
      const provider = await ws.client.POST('/v2/auth/providers', {
        body: { provider_id: `idp-${String(i).padStart(2, '0')}`, name: `IdP ${String(i).padStart(2, '0')}`, client_id: 'c', auth_url: 'http://127.0.0.1:9/authorize', token_url: 'http://127.0.0.1:9/token', scopes: ['openid'] },
      });
      expect(provider.response.status, JSON.stringify(provider.error)).toBe(200);
    });
    await inBatches(20, async (i) => {
      const res = await ws.client.POST('/v1/integrations/forge/vcshost', { body: { kind: 'git', name: `more repos ${String(i).padStart(2, '0')}`, base_url: repo.directoryUrl } });
      expect(res.response.status, JSON.stringify(res.error)).toBe(201);
    });
    // An agent of 101 revisions.
    const agent = await ws.client.POST('/v1/deepagents/agents', { body: { name: 'Revised', runtime: { model: { model_id: 'scripted:demo' } } } });
    revised = agent.data!.id;
    for (let i = 1; i <= 100; i++) {
      const res = await ws.client.PATCH('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: revised } }, body: { description: `change ${i}` } });
      expect(res.response.status).toBe(200);
    }
    // An agent of 51 threads, the last of them with 21 runs; 101 memories; 1001 principals' folders.
    chatty = (await ws.client.POST('/v1/deepagents/agents', { body: { name: 'Chatty', runtime: { model: { model_id: 'scripted:demo' } } } })).data!.id;
    for (let i = 0; i < 51; i++) {
      const thread = await ws.client.POST('/v1/deepagents/threads', { body: { agent_id: chatty } });
      expect(thread.response.status).toBe(201);
      if (i === 0) oldestThread = thread.data!.id;
      longThread = thread.data!.id;
    }
    for (let i = 0; i < 21; i++) {
      const stream = await streamRun({ baseUrl: server.url, apiKey: ws.adminKey, threadId: longThread, body: { agent_id: chatty, messages: [{ role: 'user', content: `message ${i}` }] } });
      expect(stream.status).toBe(200);
      await collect(stream);
    }
    const runs = await ws.client.GET('/v1/deepagents/threads/{thread_id}/runs', { params: { path: { thread_id: longThread }, query: { limit: 21, offset: 0 } } });
    expect(runs.data).toHaveLength(21);
    oldestRun = runs.data![20]!.run_id;
    const note = async (i: number) => {
      const res = await ws.client.PUT('/v1/deepagents/store/items', { body: { namespace: [chatty, 'memories'], key: `/note-${String(i).padStart(3, '0')}.md`, value: { content: `note ${i}` } } });
      expect(res.response.status).toBe(204);
    };
    await note(0); // alone, before the others: the least recently changed
    await inBatches(100, (i) => note(i + 1));
    await inBatches(principals.length, async (i) => {
      const res = await ws.client.PUT('/v1/deepagents/store/items', { body: { namespace: [chatty, 'memories', 'user', principalLabel(principals[i]!)], key: '/a.md', value: { content: 'a' } } });
      expect(res.response.status).toBe(204);
    });
  }, 600_000);

  /**
   * A list of `scope` paged one more row than its page holds: the first page has `size` `rows` and
   * not `last`; Next page shows `last` alone, with First page and no Next page.
   */
  async function pagesOnTo(scope: Locator, rows: Locator, size: number, last: Locator): Promise<void> {
    await scope.getByRole('button', { name: 'Next page' }).waitFor();
    expect(await rows.count()).toBe(size);
    expect(await last.count()).toBe(0);
    expect(await scope.getByRole('button', { name: 'First page' }).count()).toBe(0);
    await scope.getByRole('button', { name: 'Next page' }).click();
    await last.waitFor();
    await scope.getByRole('button', { name: 'First page' }).waitFor();
    expect(await rows.count()).toBe(1);
    expect(await scope.getByRole('button', { name: 'Next page' }).count()).toBe(0);
  }

  it('shows every deployment: the next page holds the oldest', async () => {
    const { context, page, errors } = await open();
    await signIn(page, ws.adminKey, '/deployments');
    const links = page.getByRole('table').getByRole('link');
    await pagesOnTo(page.locator('main'), links, 100, page.getByRole('link', { name: 'dep-000', exact: true }));
    await expectAccessible(page);
    await screenshot(page, 'deployments-second-page');
    await page.getByRole('button', { name: 'First page' }).click();
    await page.getByRole('button', { name: 'Next page' }).waitFor();
    expect(await links.count()).toBe(100);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('shows every revision of a deployment: the next page holds its first', async () => {
    const { context, page, errors } = await open();
    await signIn(page, ws.adminKey, `/deployments/${newestDeployment}`);
    const revisions = page.getByLabel('Revisions');
    const first = revisions.getByRole('button', { name: new RegExp(`${firstRevision.slice(0, 8)}$`) });
    await pagesOnTo(revisions, revisions.getByRole('button', { name: / · [0-9a-f]{8}$/ }), 50, first);
    await first.click();
    await page.getByText(`Logs of ${firstRevision.slice(0, 8)}`).waitFor();
    await expectAccessible(page);
    await screenshot(page, 'deployment-revisions-second-page');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('shows every revision of an agent, and compares the first with the last', async () => {
    const { context, page, errors } = await open();
    await signIn(page, ws.adminKey, `/agents/${revised}`);
    await page.getByRole('tab', { name: 'Revisions' }).click();
    const list = page.getByLabel('Revision list');
    await list.getByText('#101', { exact: true }).waitFor();
    await pagesOnTo(page.getByRole('tabpanel'), list.getByText(/^#\d+$/), 100, list.getByText('#1', { exact: true }));
    // The newest (chosen on the first page) against the first, from the second page.
    await page.getByRole('textbox', { name: 'From revision' }).click();
    await page.getByRole('option', { name: /^#1 / }).click();
    await page.getByLabel('Diff').getByText(/change 100/).first().waitFor();
    await expectAccessible(page);
    await screenshot(page, 'agent-revisions-second-page');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('shows every thread of an agent and every run of a thread', async () => {
    const { context, page, errors } = await open();
    await signIn(page, ws.adminKey, `/threads/${longThread}`);
    const runs = page.getByLabel('Runs', { exact: true });
    await pagesOnTo(runs, runs.getByRole('link'), 20, runs.getByRole('link', { name: `Trace of run ${oldestRun.slice(0, 8)}` }));
    const threads = page.getByLabel('Threads');
    await pagesOnTo(threads, threads.getByRole('link'), 50, threads.getByText(oldestThread.slice(0, 8)));
    await expectAccessible(page);
    await screenshot(page, 'playground-second-pages');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('shows every memory file of an agent', async () => {
    const { context, page, errors } = await open();
    await signIn(page, ws.adminKey, `/agents/${chatty}/memories`);
    const shared = page.getByRole('region', { name: 'Agent memories' });
    const oldest = shared.getByRole('button', { name: /\/memories\/note-000\.md/ });
    await pagesOnTo(shared, shared.getByRole('navigation').getByRole('button'), 100, oldest);
    await oldest.click();
    await expect(shared.getByLabel('Content of /memories/note-000.md').inputValue()).resolves.toBe('note 0');
    await expectAccessible(page);
    await screenshot(page, 'memories-second-page');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('offers every OAuth provider when registering a tool server', async () => {
    const { context, page, errors } = await open();
    await signIn(page, ws.adminKey, '/tool-servers');
    await page.getByRole('button', { name: 'Register tool server' }).click();
    const dialog = page.getByRole('dialog', { name: 'Register tool server' });
    await dialog.getByText('OAuth', { exact: true }).click();
    await dialog.getByRole('textbox', { name: 'OAuth provider' }).click();
    await page.getByRole('option', { name: 'IdP 00 (idp-00)' }).waitFor();
    expect(await page.getByRole('option').count()).toBe(21);
    await animationsDone(page);
    await screenshot(page, 'tool-server-oauth-providers');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('offers every integration when creating a deployment', async () => {
    const { context, page, errors } = await open();
    await signIn(page, ws.adminKey, '/deployments');
    await page.getByRole('button', { name: 'New deployment' }).click();
    const dialog = page.getByRole('dialog', { name: 'New deployment' });
    await dialog.getByRole('textbox', { name: 'Integration' }).click();
    // One answer offers them all: once one is there, every one is.
    await page.getByRole('option', { name: /^local repos/ }).waitFor();
    expect(await page.getByRole('option').count()).toBe(21);
    await page.getByRole('option', { name: /^more repos 19/ }).click();
    await dialog.getByRole('textbox', { name: 'Repository' }).click();
    await page.getByRole('option', { name: /app$/ }).waitFor();
    await expectAccessible(page);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('offers an admin every principal with memories, the 1001st too (a request answers at most 1000)', async () => {
    const { context, page, errors } = await open();
    await signIn(page, ws.adminKey, `/agents/${chatty}/memories`);
    const choice = page.getByLabel('Another principal’s memories');
    await choice.waitFor();
    expect(await choice.locator('option').count()).toBe(principals.length + 1);
    await choice.selectOption({ label: principals[1000]! });
    await page.getByRole('region', { name: `Memories of ${principals[1000]}` }).getByRole('button', { name: /\/memories\/user\/a\.md/ }).waitFor();
    await expectAccessible(page);
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe('playground (useStream over the LangGraph protocol)', { timeout: 180_000 }, () => {
  let approvalTools: ToolServerFixture;
  beforeAll(async () => {
    approvalTools = await startBearerToolServer('approvals-token');
  });
  afterAll(async () => {
    await approvalTools?.close();
  });

  async function scriptedAgent(name: string, model = 'scripted:demo', toolsConfig?: object): Promise<string> {
    const res = await server.client.POST('/v1/deepagents/agents', { body: { name, runtime: { model: { model_id: model } }, ...(toolsConfig ? { tools: toolsConfig } : {}) } });
    expect(res.response.status).toBe(201);
    return res.data!.id;
  }

  it('chats with a scripted agent, streams the answer and links the run to its trace', async () => {
    const agentId = await scriptedAgent('Echo');
    const { context, page, errors } = await open();
    await signIn(page, server.adminKey, `/agents/${agentId}/playground`);
    await page.getByLabel('Message', { exact: true }).fill('hello from the console');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByLabel('Conversation').getByText('You said: hello from the console').waitFor();
    await page.waitForURL(/\/threads\/[0-9a-f-]{36}$/);
    const threadId = page.url().split('/').pop()!;
    // The answer streams before the run's end is recorded: on a busy machine the run can still read
    // 'running' the moment the text shows.
    await expect
      .poll(async () => (await server.client.GET('/v1/deepagents/threads/{thread_id}/runs', { params: { path: { thread_id: threadId }, query: { limit: 1, offset: 0 } } })).data![0]!.status, { timeout: 30_000 })
      .toBe('success');
    await expectAccessible(page);
    await screenshot(page, 'playground-chat');

    await page.getByRole('link', { name: /^Trace of run/ }).first().click();
    await page.getByLabel('Waterfall').waitFor();
    await page.getByLabel('Waterfall').getByRole('button', { name: /^llm/ }).first().click();
    await page.getByLabel('Run details').getByText('hello from the console').first().waitFor();
    await expectAccessible(page);
    await screenshot(page, 'trace-waterfall');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('opens Traces, the Playground and Usage with their data: the run and thread are listed, Usage names its agent and draws the charts', async () => {
    const agentId = await scriptedAgent('Usage probe');
    await run(server, await createThread(server, agentId), { agent_id: agentId, messages: [{ role: 'user', content: 'count me' }] });
    const { context, page, errors } = await open();
    await signIn(page, server.adminKey, '/agents');
    // Loads straight at a page: its first data is asked before React renders (ui/src/routes.ts) —
    // the Playground's thread search (a POST) only once the session's CSRF token is known.
    await page.goto(`${server.url}/traces`);
    await page.getByRole('table').getByRole('link').first().waitFor();
    await page.goto(`${server.url}/agents/${agentId}/playground`);
    await page.getByLabel('Threads').getByRole('link').first().waitFor();
    // In-app navigation: Usage's table, then its charts (a chunk of their own).
    await page.getByRole('link', { name: 'Usage', exact: true }).click();
    await page.getByRole('cell', { name: 'Usage probe', exact: true }).waitFor();
    await page.getByLabel('Runs per day').locator('svg.recharts-surface').waitFor();
    await page.getByLabel('Tokens per day').locator('svg.recharts-surface').waitFor();
    await expectAccessible(page);
    await screenshot(page, 'usage');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('has one main landmark, a legend on each usage chart, and a link to Settings beside an unknown model’s error', async () => {
    const agentId = await scriptedAgent('Legend probe');
    await run(server, await createThread(server, agentId), { agent_id: agentId, messages: [{ role: 'user', content: 'count me too' }] });
    const { context, page, errors } = await open();
    await signIn(page, server.adminKey, '/agents');
    await page.getByRole('heading', { name: 'Agents' }).waitFor();
    expect(await page.locator('main').count()).toBe(1);

    // The server's message names the API path; the Console adds a link to its page for it.
    await page.getByRole('button', { name: 'New agent' }).click();
    const dialog = page.getByRole('dialog', { name: 'New agent' });
    await dialog.getByRole('textbox', { name: /^Name/ }).fill('Unknown model');
    await dialog.getByRole('textbox', { name: /^Model/ }).fill('no-such-config');
    await dialog.getByRole('textbox', { name: /^Model/ }).press('Escape');
    await dialog.getByRole('button', { name: 'Create agent' }).click();
    await dialog.getByText(/create it under \/v1\/deepagents\/model-configs/).waitFor();
    await expectAccessible(page);
    await screenshot(page, 'agent-unknown-model');
    await dialog.getByRole('link', { name: 'Save a model configuration in Settings' }).click();
    await page.waitForURL(/\/settings$/);
    await page.getByRole('heading', { name: 'Settings', level: 2 }).waitFor();

    await page.getByRole('link', { name: 'Usage', exact: true }).click();
    const runs = page.getByLabel('Runs per day');
    const tokens = page.getByLabel('Tokens per day');
    for (const [chart, series] of [[runs, ['Runs', 'Errors']], [tokens, ['Input', 'Output']]] as const) {
      for (const name of series) await chart.getByText(name, { exact: true }).waitFor();
    }
    expect(await page.locator('main').count()).toBe(1);
    await expectAccessible(page);
    await screenshot(page, 'usage-legends');
    expect(errors.filter((e) => !/422/.test(e))).toEqual([]);
    await context.close();
  });

  it('approves, edits, rejects and responds to calls of a real MCP tool, each from its approval card', async () => {
    await server.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'Approval tools', url: approvalTools.url, headers: [{ key: 'Authorization', value: 'Bearer approvals-token' }] } });
    const agentId = await scriptedAgent('Careful adder', 'scripted:demo', {
      tools: [{ name: 'add', mcp_server_url: approvalTools.url }],
      interrupt_config: { [`${approvalTools.url}::add`]: true },
    });
    const { context, page, errors } = await open();
    await signIn(page, server.adminKey, `/agents/${agentId}/playground`);
    const card = page.getByLabel('Approval needed: add');
    const ask = async (a: number, b: number) => {
      await page.getByLabel('Message', { exact: true }).fill(`/call add {"a": ${a}, "b": ${b}}`);
      await page.getByRole('button', { name: 'Send' }).click();
      await card.waitFor();
    };
    const answer = (text: string) => page.getByLabel('Conversation').getByText(text).first().waitFor();

    await ask(2, 3);
    await expectAccessible(page);
    await screenshot(page, 'playground-approval');
    await card.getByRole('button', { name: 'Approve' }).click();
    await answer('add: 5');
    expect(approvalTools.calls).toEqual([{ name: 'add', args: { a: 2, b: 3 } }]);
    // The card shows how long the call took (from the run's trace, once the run is over).
    await expect.poll(async () => page.getByLabel('Tool call add').first().getByLabel('Duration of add').textContent().catch(() => null), { timeout: 30_000 }).toMatch(/^\d+(\.\d+)? (ms|s)$/);

    await ask(4, 4);
    await card.getByRole('button', { name: 'Edit' }).click();
    await card.getByLabel('Arguments').fill('{"a": 40, "b": 2}');
    await card.getByRole('button', { name: 'Run with these arguments' }).click();
    await answer('add: 42');
    expect(approvalTools.calls.at(-1)).toEqual({ name: 'add', args: { a: 40, b: 2 } });

    await ask(1, 1);
    await card.getByRole('button', { name: 'Reject' }).click();
    await card.getByLabel('Reason (optional)').fill('not now');
    await card.getByRole('button', { name: 'Reject call' }).click();
    await card.waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Send' }).waitFor();
    await expect.poll(async () => (await page.getByLabel('Conversation').getByText('not now').count()) > 0).toBe(true);

    await ask(7, 7);
    await card.getByRole('button', { name: 'Respond' }).click();
    await card.getByLabel('Response to the agent').fill('the answer is fourteen');
    await card.getByRole('button', { name: 'Send response' }).click();
    await answer('add: the answer is fourteen');
    // Rejected and answered calls never reached the tool server.
    expect(approvalTools.calls.length).toBe(2);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('resumes a run after a reload mid-stream', async () => {
    await server.client.POST('/v1/deepagents/model-configs', { body: { name: 'slow-scripted', model_id: 'scripted:slow', parameters: { delay_ms: 150 } } });
    const agentId = await scriptedAgent('Slow talker', 'slow-scripted');
    const { context, page, errors } = await open();
    await signIn(page, server.adminKey, `/agents/${agentId}/playground`);
    const words = Array.from({ length: 30 }, (_, i) => `word${i}`).join(' ');
    await page.getByLabel('Message', { exact: true }).fill(words);
    await page.getByRole('button', { name: 'Send' }).click();
    await page.waitForURL(/\/threads\//);
    // Reload once the answer has started but not finished.
    await page.getByLabel('Conversation').getByText(/You said: word0/).waitFor();
    expect(await page.getByLabel('Conversation').getByText(`You said: ${words}`).count()).toBe(0);
    await page.reload();
    await page.getByLabel('Conversation').getByText(`You said: ${words}`).waitFor();
    expect(errors).toEqual([]);
    await context.close();
  });
  it('shows another tab, and a viewer, what a busy thread’s first run has said so far, then the rest as it streams', async () => {
    await server.client.POST('/v1/deepagents/model-configs', { body: { name: 'slow-for-watchers', model_id: 'scripted:slow', parameters: { delay_ms: 250 } } });
    const agentId = await scriptedAgent('Watched talker', 'slow-for-watchers');
    const { context, page, errors } = await open();
    await signIn(page, server.adminKey, `/agents/${agentId}/playground`);
    const words = Array.from({ length: 40 }, (_, i) => `v${i}`).join(' ');
    await page.getByLabel('Message', { exact: true }).fill(words);
    await page.getByRole('button', { name: 'Send' }).click();
    await page.waitForURL(/\/threads\/[0-9a-f-]{36}$/);
    const threadId = page.url().split('/').pop()!;
    await page.getByLabel('Conversation').getByText(/You said: v0 v1/).waitFor();

    // Another tab of the same person, opened mid-run: the thread's state is saved only when the run
    // ends, so it once showed "No message yet" and an empty conversation until then.
    const other = await context.newPage();
    const otherErrors = collectErrors(other);
    await other.goto(`${server.url}/threads/${threadId}`);
    const conversation = other.getByLabel('Conversation');
    await conversation.getByText(words, { exact: true }).waitFor();
    await conversation.getByText(/You said: v0 v1/).waitFor();
    await other.getByLabel('Threads').getByRole('link', { name: /^v0 v1 v2/ }).waitFor();
    expect(await conversation.getByText(`You said: ${words}`).count()).toBe(0); // mid-run
    expect((await server.client.GET('/v1/deepagents/threads/{thread_id}/runs', { params: { path: { thread_id: threadId }, query: { limit: 1, offset: 0 } } })).data![0]!.status).toMatch(/^(pending|running)$/);
    await other.getByRole('status', { name: 'Agent is working' }).waitFor();
    await expectAccessible(other);
    await screenshot(other, 'playground-other-tab-mid-run');

    // A viewer, at 390 px, sees it too (read-only: no message box, no Cancel).
    const viewerKey = await server.createKey({ role: 'viewer', principal: 'watcher@example.com' });
    const viewer = await open(390);
    await signIn(viewer.page, viewerKey, `/threads/${threadId}`);
    const seen = viewer.page.getByLabel('Conversation');
    await seen.getByText(words, { exact: true }).waitFor();
    await seen.getByText(/You said: v0 v1/).waitFor();
    expect(await viewer.page.getByRole('button', { name: 'Cancel run' }).count()).toBe(0);
    expect(await viewer.page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await expectAccessible(viewer.page);
    await screenshot(viewer.page, 'playground-viewer-mid-run-390');

    // Both follow the answer to its end, and say it once.
    await conversation.getByText(`You said: ${words}`, { exact: true }).waitFor({ timeout: 120_000 });
    await seen.getByText(`You said: ${words}`, { exact: true }).waitFor({ timeout: 120_000 });
    await other.getByRole('status', { name: 'Agent is working' }).waitFor({ state: 'detached' });
    expect(await conversation.getByLabel('Agent message').count()).toBe(1);
    expect(await conversation.getByLabel('You message').count()).toBe(1);
    expect(errors).toEqual([]);
    expect(otherErrors).toEqual([]);
    expect(viewer.errors).toEqual([]);
    await viewer.context.close();
    await context.close();
  });

  it('notices, on a thread left open and idle, a run started elsewhere: one that ended between two looks, and one still going', async () => {
    await server.client.POST('/v1/deepagents/model-configs', { body: { name: 'slow-for-idle-tab', model_id: 'scripted:slow', parameters: { delay_ms: 250 } } });
    const agentId = await scriptedAgent('Left open', 'slow-for-idle-tab');
    const threadId = await createThread(server, agentId);
    await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: 'first' }] });
    const { context, page, errors } = await open();
    await signIn(page, server.adminKey, `/threads/${threadId}`);
    const conversation = page.getByLabel('Conversation');
    await conversation.getByText('You said: first', { exact: true }).waitFor();
    // Nothing on the page is touched from here on, and it keeps its focus: it once noticed another
    // client's run only when it regained focus (or was reloaded).
    // A run of another client that starts and ends before the page looks again.
    await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: 'second' }] });
    await conversation.getByText('You said: second', { exact: true }).waitFor({ timeout: 30_000 });
    // A run still going when the page looks: followed as it streams.
    const words = Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ');
    const res = await fetch(`${server.url}/v1/deepagents/threads/${threadId}/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': server.adminKey },
      body: JSON.stringify({ assistant_id: agentId, input: { messages: [{ role: 'user', content: words }] }, stream_mode: ['values', 'messages-tuple'] }),
    });
    expect(res.status).toBe(200);
    const runId = ((await res.json()) as { run_id: string }).run_id;
    await page.getByRole('status', { name: 'Agent is working' }).waitFor({ timeout: 30_000 });
    await conversation.getByText(/You said: w0 w1/).waitFor();
    const status = (await server.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}', { params: { path: { thread_id: threadId, run_id: runId } } })).data!.status;
    expect(status).toMatch(/^(pending|running)$/); // seen mid-run
    await conversation.getByText(`You said: ${words}`, { exact: true }).waitFor({ timeout: 120_000 });
    await page.getByRole('status', { name: 'Agent is working' }).waitFor({ state: 'detached' });
    expect(await conversation.getByLabel('You message').count()).toBe(3);
    expect(await conversation.getByLabel('Agent message').count()).toBe(3);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('follows the running run of a thread, cancels that one from its Cancel button, then follows the one queued behind it', async () => {
    await server.client.POST('/v1/deepagents/model-configs', { body: { name: 'slow-for-queue', model_id: 'scripted:slow', parameters: { delay_ms: 250 } } });
    const agentId = await scriptedAgent('Queued talker', 'slow-for-queue');
    const threadId = await createThread(server, agentId);
    const first = Array.from({ length: 30 }, (_, i) => `a${i}`).join(' ');
    const startRun = async (content: string) => {
      const res = await fetch(`${server.url}/v1/deepagents/threads/${threadId}/runs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': server.adminKey },
        body: JSON.stringify({ assistant_id: agentId, input: { messages: [{ role: 'user', content }] }, stream_mode: ['values', 'messages-tuple'], multitask_strategy: 'enqueue' }),
      });
      expect(res.status).toBe(200);
      return ((await res.json()) as { run_id: string }).run_id;
    };
    const running = await startRun(first);
    const queued = await startRun('b0 b1');
    const { context, page, errors } = await open();
    await signIn(page, server.adminKey, `/threads/${threadId}`);
    const conversation = page.getByLabel('Conversation');
    // The running run, mid-answer (the queued one, newer, was once the one joined: nothing showed until it ran).
    await conversation.getByText(/You said: a0 a1/).waitFor();
    const status = async (runId: string) => (await server.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}', { params: { path: { thread_id: threadId, run_id: runId } } })).data!.status;
    expect(await status(running)).toBe('running');
    // Cancel stops the run shown (it once stopped the queued one, the newest), and the queued one runs.
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await expect.poll(() => status(running), { timeout: 30_000 }).toBe('interrupted');
    await conversation.getByText('You said: b0 b1', { exact: true }).waitFor({ timeout: 120_000 });
    expect(await status(queued)).not.toBe('interrupted');
    expect(await conversation.getByText(`You said: ${first}`, { exact: true }).count()).toBe(0);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('names a new thread in the threads list by its first message while its first run is still going', async () => {
    await server.client.POST('/v1/deepagents/model-configs', { body: { name: 'slow-for-naming', model_id: 'scripted:slow', parameters: { delay_ms: 300 } } });
    const agentId = await scriptedAgent('Named while running', 'slow-for-naming');
    const { context, page, errors } = await open(390);
    await signIn(page, server.adminKey, `/agents/${agentId}/playground`);
    const words = Array.from({ length: 60 }, (_, i) => `n${i}`).join(' ');
    await page.getByLabel('Message', { exact: true }).fill(`Plan the launch\n${words}`);
    await page.getByRole('button', { name: 'Send' }).click();
    await page.waitForURL(/\/threads\/[0-9a-f-]{36}$/);
    const threadId = page.url().split('/').pop()!;
    await page.getByLabel('Conversation').getByText(/You said: Plan the launch\s+n0/).waitFor();
    // The run is still going (its answer is not whole): the list already names the thread by what was asked.
    const link = page.getByLabel('Threads').getByRole('link', { name: /^Plan the launch n0 n1/ });
    await link.filter({ hasText: threadId.slice(0, 8) }).waitFor();
    expect(await page.getByLabel('Conversation').getByText(`You said: Plan the launch ${words}`).count()).toBe(0);
    expect((await server.client.GET('/v1/deepagents/threads/{thread_id}/runs', { params: { path: { thread_id: threadId }, query: { limit: 1, offset: 0 } } })).data![0]!.status).toMatch(/^(pending|running)$/);
    expect(await page.getByLabel('Threads').getByRole('link', { name: /^No message yet/ }).count()).toBe(0);
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await expectAccessible(page);
    await screenshot(page, 'playground-named-while-running-390');
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await page.getByRole('button', { name: 'Cancel run' }).waitFor({ state: 'detached' });
    expect(errors).toEqual([]);
    await context.close();
  });

  it('cancels a run from the playground: the answer stops, the conversation stays and the run is marked cancelled', async () => {
    await server.client.POST('/v1/deepagents/model-configs', { body: { name: 'slow-for-cancel', model_id: 'scripted:slow', parameters: { delay_ms: 200 } } });
    const agentId = await scriptedAgent('Long talker', 'slow-for-cancel');
    const { context, page, errors } = await open();
    await signIn(page, server.adminKey, `/agents/${agentId}/playground`);
    const words = Array.from({ length: 60 }, (_, i) => `w${i}`).join(' ');
    await page.getByLabel('Message', { exact: true }).fill(words);
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByLabel('Conversation').getByText(/You said: w0/).waitFor();
    // Mid-run the page shows its working indicator: a status, named, that passes the accessibility check
    // (a named loader without a role broke it: aria-label is not allowed on a plain span).
    await page.getByRole('status', { name: 'Agent is working' }).waitFor();
    await expectAccessible(page);
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await page.getByRole('button', { name: 'Cancel run' }).waitFor({ state: 'detached' });
    const threadId = page.url().split('/').pop()!;
    await expect
      .poll(async () => (await server.client.GET('/v1/deepagents/threads/{thread_id}/runs', { params: { path: { thread_id: threadId }, query: { limit: 1, offset: 0 } } })).data![0]!.status, { timeout: 30_000 })
      .not.toMatch(/^(pending|running)$/);
    const [last] = (await server.client.GET('/v1/deepagents/threads/{thread_id}/runs', { params: { path: { thread_id: threadId }, query: { limit: 1, offset: 0 } } })).data!;
    expect(last!.status).not.toBe('success');
    await page.getByLabel('Runs').getByText(last!.status, { exact: true }).first().waitFor();
    expect(await page.getByLabel('Conversation').getByText(`You said: ${words}`).count()).toBe(0);
    // The conversation stays as it was when the run was cut off: the question and the partial answer
    // (cancelling once blanked it until a reload).
    const conversation = page.getByLabel('Conversation');
    await conversation.getByText(words, { exact: true }).waitFor();
    await conversation.getByText(/You said: w0/).waitFor();
    expect(await conversation.getByText(/^Say something to/).count()).toBe(0);
    await screenshot(page, 'playground-cancelled');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('nests a subagent’s activity under the task call that started it', async () => {
    const created = await server.client.POST('/v1/deepagents/agents', {
      body: { name: 'Delegator', runtime: { model: { model_id: 'scripted:demo' } }, subagents: [{ name: 'researcher', description: 'Looks things up', instructions: 'You research.' }] },
    });
    const { context, page, errors } = await open();
    await signIn(page, server.adminKey, `/agents/${created.data!.id}/playground`);
    await page.getByLabel('Message', { exact: true }).fill('/call task {"description": "find the answer", "subagent_type": "researcher"}');
    await page.getByRole('button', { name: 'Send' }).click();
    const call = page.getByLabel('Tool call task').first();
    const sub = call.getByLabel('Subagent researcher');
    await sub.waitFor();
    // The subagent (the same scripted model) answers the description it was given, inside the card.
    await sub.getByText(/You said: find the answer/).first().waitFor();
    await page.getByLabel('Conversation').getByText(/^Done\./).first().waitFor();
    await expectAccessible(page);
    await screenshot(page, 'playground-subagent');
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe('deployments in the browser', { timeout: 180_000 }, () => {
  it('checks the new-deployment form before sending it, and says how to add an integration when there is none', async () => {
    const workspace = await server.createWorkspace('no-integrations'); // a workspace of its own: no integrations
    const { context, page, errors } = await open();
    const sent: string[] = [];
    page.on('request', (r) => {
      if (r.method() === 'POST' && new URL(r.url()).pathname === '/v2/deployments') sent.push(r.url());
    });
    await signIn(page, workspace.adminKey, '/deployments');
    await page.getByRole('button', { name: 'New deployment' }).click();
    const dialog = page.getByRole('dialog', { name: 'New deployment' });
    await dialog.getByText('No code-host integrations yet').waitFor();
    await dialog.getByText('POST /v1/integrations/forge/vcshost').waitFor();
    await dialog.getByRole('textbox', { name: /^Deployment name/ }).fill('My App!');
    await dialog.getByRole('button', { name: 'Create deployment' }).click();
    await dialog.getByText('Choose an integration', { exact: true }).waitFor();
    await dialog.getByText('Choose an integration first, then one of its repositories').waitFor();
    await dialog.getByText(/^1 to 63 lowercase letters/).waitFor();
    expect(await dialog.getByRole('textbox', { name: /^Deployment name/ }).getAttribute('aria-invalid')).toBe('true');
    // Nothing was sent, so no server error about fields the form does not show.
    expect(sent).toEqual([]);
    expect(await dialog.getByText(/repo_ref|repo_url/).count()).toBe(0);
    await expectAccessible(page);
    await screenshot(page, 'deployment-form-checked');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('creates a deployment from an integration’s repository and follows it to READY with its build and deploy logs', async () => {
    await repo.push('main', { label: 'v1' });
    const integration = await fetch(`${server.url}/v1/integrations/forge/vcshost`, {
      method: 'POST',
      headers: { 'X-Api-Key': server.adminKey, 'content-type': 'application/json' },
      body: JSON.stringify({ kind: 'git', name: 'local repos', base_url: repo.directoryUrl }),
    });
    expect(integration.status).toBe(201);
    const { context, page, errors } = await open();
    await signIn(page, server.adminKey, '/deployments');
    await page.getByRole('button', { name: 'New deployment' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('textbox', { name: 'Integration' }).click();
    await page.getByRole('option', { name: /^local repos/ }).click();
    await dialog.getByRole('textbox', { name: 'Repository' }).click();
    await page.getByRole('option', { name: /app$/ }).click();
    await dialog.getByRole('textbox', { name: /^Deployment name/ }).fill('echo-console');
    await dialog.getByRole('button', { name: 'Create deployment' }).click();
    await page.waitForURL(/\/deployments\/[0-9a-f-]{36}$/);
    // The revision timeline never goes blank once shown, as the deployment's status changes under it.
    await page.evaluate(`(() => {
      window.timeline = { shown: false, blanked: false };
      const look = () => {
        const items = document.querySelectorAll('[aria-label="Revisions"] .mantine-Timeline-item').length;
        if (items > 0) window.timeline.shown = true;
        else if (window.timeline.shown) window.timeline.blanked = true;
      };
      new MutationObserver(look).observe(document.body, { childList: true, subtree: true });
      look();
    })()`);
    await page.getByLabel('Status READY').waitFor({ timeout: 120_000 });
    expect(await page.evaluate<{ shown: boolean; blanked: boolean }>('window.timeline')).toEqual({ shown: true, blanked: false });
    const logs = page.getByLabel('Logs');
    await expect.poll(async () => (await logs.locator('pre, code').first().textContent())?.trim() ?? '', { timeout: 30_000 }).not.toMatch(/^(\(no output yet\))?$/);
    await logs.getByText('Deploy', { exact: true }).click();
    await expect(logs.getByRole('radio', { name: 'Deploy' }).isChecked()).resolves.toBe(true);
    await expect.poll(async () => (await logs.locator('pre, code').first().textContent())?.trim() ?? '', { timeout: 30_000 }).not.toMatch(/^(\(no output yet\))?$/);
    await page.getByLabel('Revisions').getByText('DEPLOYED').first().waitFor();
    await expectAccessible(page);
    await screenshot(page, 'deployment-ready');
    // Deleting asks first: Cancel keeps the deployment, the dialog's button deletes it.
    await page.getByRole('button', { name: 'Delete deployment' }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete deployment' });
    await confirm.getByText(/Its app stops serving/).waitFor();
    await animationsDone(page);
    await screenshot(page, 'deployment-confirm-delete');
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'detached' });
    expect(page.url()).toMatch(/\/deployments\/[0-9a-f-]{36}$/);
    await page.getByRole('button', { name: 'Delete deployment' }).click();
    await confirm.getByRole('button', { name: 'Delete deployment' }).click();
    await page.waitForURL(/\/deployments$/);
    expect(errors).toEqual([]);
    await context.close();
  });
});
