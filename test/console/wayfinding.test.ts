// Finding one's way in the Console, in a real browser against a real `hangar serve`: the header names
// who is signed in as a person knows it (not the key's UUID), the playground names each thread by its
// first message, and an address that names nothing says so in words with a way back.
import { randomUUID } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations, consoleSessions, ensureConsoleBuilt, launchBrowser, screenshot } from '../support/browser.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let browser: Browser;

beforeAll(async () => {
  ensureConsoleBuilt();
  [server, browser] = await Promise.all([startTestServer(), launchBrowser()]);
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const { open, signIn } = consoleSessions(() => browser, () => server.url);

async function agentWith(name: string): Promise<string> {
  const res = await server.client.POST('/v1/deepagents/agents', { body: { name, runtime: { model: { model_id: 'scripted:demo' } } } });
  expect(res.response.status).toBe(201);
  return res.data!.id;
}

describe('the header', { timeout: 180_000 }, () => {
  it("names who is signed in by the key's principal, else its description, never by the key's UUID", async () => {
    const alice = await server.client.POST('/v1/api-keys', { body: { role: 'member', principal: 'alice@example.com' } });
    const laptop = await server.client.POST('/v1/api-keys', { body: { role: 'viewer', description: 'Ops laptop' } });
    const bare = await server.client.POST('/v1/api-keys', { body: { role: 'viewer' } });
    for (const [key, shown] of [
      [alice.data!, 'alice@example.com'],
      [laptop.data!, `Ops laptop (${laptop.data!.prefix}…)`],
      [bare.data!, `Key ${bare.data!.prefix}…`],
    ] as const) {
      const { context, page, errors } = await open();
      await signIn(page, key.key, '/agents');
      const header = page.getByRole('banner');
      await header.getByText(shown, { exact: true }).waitFor();
      // The key's own id is its principal when none was given: it is not what the header shows.
      expect(await header.textContent()).not.toContain(key.id);
      if (key === laptop.data) await screenshot(page, 'header-key-description');
      expect(errors).toEqual([]);
      await context.close();
    }
  });
});

describe("the playground's threads list", { timeout: 180_000 }, () => {
  it('names each thread by its first message, cut short on one line, with its time and id', async () => {
    const agentId = await agentWith('Trip planner');
    const said = async (content: string) => {
      const thread = await server.client.POST('/v1/deepagents/threads', { body: { agent_id: agentId } });
      const ran = await server.client.POST('/v1/deepagents/threads/{thread_id}/runs/wait', {
        params: { path: { thread_id: thread.data!.id } },
        body: { agent_id: agentId, input: { messages: [{ role: 'user', content }] } },
      });
      expect(ran.response.status).toBe(200);
      return thread.data!.id;
    };
    const lisbon = await said('Plan the Lisbon offsite for March');
    const long = await said(`Compare these   two\nquotes ${'and then some more words '.repeat(10)}`);
    const empty = (await server.client.POST('/v1/deepagents/threads', { body: { agent_id: agentId } })).data!.id;

    const { context, page, errors } = await open();
    await signIn(page, server.adminKey, `/agents/${agentId}/playground`);
    const threads = page.getByLabel('Threads');
    const first = threads.getByRole('link', { name: /^Plan the Lisbon offsite for March/ });
    await first.waitFor();
    expect(await first.textContent()).toContain(lisbon.slice(0, 8));
    // Several lines typed, and a long text: one line, cut short with an ellipsis.
    const cut = threads.getByRole('link', { name: /^Compare these two quotes and then some more words/ });
    expect(await cut.textContent()).toMatch(/…/);
    expect(await cut.textContent()).toContain(long.slice(0, 8));
    // A thread nobody has written in yet says so.
    await threads.getByRole('link', { name: /^No message yet/ }).filter({ hasText: empty.slice(0, 8) }).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'playground-thread-titles');
    await first.click();
    await page.waitForURL(`**/threads/${lisbon}`);
    await page.getByLabel('Conversation').getByText('Plan the Lisbon offsite for March').first().waitFor();
    // A thread started here is named by what was typed once its run has ended.
    await page.getByRole('link', { name: 'New thread' }).click();
    await page.getByRole('textbox', { name: 'Message' }).fill('Book the train to Porto');
    await page.getByRole('button', { name: 'Send' }).click();
    await threads.getByRole('link', { name: /^Book the train to Porto/ }).waitFor();
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe('an address that names nothing', { timeout: 180_000 }, () => {
  it('is answered with the Console (404) when a browser asks for a page outside the API, and with JSON otherwise', async () => {
    const html = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };
    const mistyped = await fetch(`${server.url}/agnets/x`, { headers: html });
    expect(mistyped.status).toBe(404);
    expect(mistyped.headers.get('content-type')).toMatch(/^text\/html/);
    expect(mistyped.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(await mistyped.text()).toContain('<div id="root">');
    // An API client's unknown path, and any unknown API path, stay JSON 404s.
    const client = await fetch(`${server.url}/agnets/x`);
    expect(client.status).toBe(404);
    expect(await client.json()).toMatchObject({ code: 'route_not_found' });
    const api = await fetch(`${server.url}/v1/deepagents/nope`, { headers: { ...html, 'X-Api-Key': server.adminKey } });
    expect(api.status).toBe(404);
    expect(await api.json()).toMatchObject({ code: 'route_not_found' });
    expect((await fetch(`${server.url}/agnets`, { method: 'POST', headers: html })).status).toBe(404);
  });

  it('says there is no such agent, thread, run or page, in words, with a way back', async () => {
    const { context, page, errors } = await open();
    await signIn(page, server.adminKey, '/agents/not-an-agent');
    const main = page.getByRole('main');
    await main.getByRole('heading', { name: 'No such agent' }).waitFor();
    await main.getByText('There is no agent at /agents/not-an-agent in this workspace').waitFor();
    expect(await main.textContent()).not.toMatch(/must be a UUID|path\.|agent_id/);
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'not-found-agent');
    await main.getByRole('link', { name: 'Go to Agents' }).click();
    await page.getByRole('heading', { name: 'Agents' }).waitFor();

    // A well-formed id that is not (or no longer) in the workspace.
    await page.goto(`${server.url}/agents/${randomUUID()}`);
    await main.getByRole('heading', { name: 'No such agent' }).waitFor();
    await page.goto(`${server.url}/threads/123`);
    await main.getByRole('heading', { name: 'No such thread' }).waitFor();
    await page.goto(`${server.url}/threads/${randomUUID()}`);
    await main.getByRole('heading', { name: 'No such thread' }).waitFor();
    await page.goto(`${server.url}/deployments/abc`);
    await main.getByRole('heading', { name: 'No such deployment' }).waitFor();
    await main.getByRole('link', { name: 'Go to Deployments' }).waitFor();
    await page.goto(`${server.url}/traces/${randomUUID()}`);
    await main.getByRole('heading', { name: 'No such run' }).waitFor();

    // A page the Console does not have: said, not a silent jump to another page.
    await page.goto(`${server.url}/agents/${randomUUID()}/setings`);
    await main.getByRole('heading', { name: 'Page not found' }).waitFor();
    expect(page.url()).toMatch(/\/setings$/);
    await main.getByText(/The Console has no page at \/agents\/.*\/setings/).waitFor();
    await main.getByRole('button', { name: 'Go back' }).click();
    await main.getByRole('heading', { name: 'No such run' }).waitFor();
    // A mistyped address outside the Console's pages: the server answers the Console (404), not JSON.
    await page.goto(`${server.url}/agnets`);
    await main.getByRole('heading', { name: 'Page not found' }).waitFor();
    await main.getByText('The Console has no page at /agnets').waitFor();
    await main.getByRole('link', { name: 'Go to Agents' }).click();
    await page.getByRole('heading', { name: 'Agents' }).waitFor();
    // The browser logs the 404s of the well-formed ids asked for (and of /agnets itself); nothing asks for an id that cannot be one (no 422).
    expect(errors.filter((e) => !/\b404\b/.test(e))).toEqual([]);
    await context.close();
  });
});

describe('a new workspace', { timeout: 180_000 }, () => {
  it('says on the Usage page that nothing has run yet, for each range (it showed an empty table)', async () => {
    const fresh = await server.createWorkspace('fresh-usage');
    const { context, page, errors } = await open(390);
    await signIn(page, fresh.adminKey, '/usage');
    await page.getByText('No runs in the last 7 days: usage shows here once an agent has run.').waitFor();
    await page.getByText('30 days').click();
    await page.getByText('No runs in the last 30 days: usage shows here once an agent has run.').waitFor();
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'usage-empty-390');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('the charts’ placeholder, shown while their chunk loads, passes axe too (it once had an aria-label on a plain div)', async () => {
    const fresh = await server.createWorkspace('charts-placeholder');
    const { context, page } = await open(1280);
    // Hold the charts' chunk back, so the placeholder stays on the page while axe looks.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route(/\/assets\/UsageCharts-[^/]+\.js$/, async (route) => {
      await held;
      await route.continue();
    });
    await signIn(page, fresh.adminKey, '/usage');
    await page.getByText('No runs in the last 7 days: usage shows here once an agent has run.').waitFor();
    await page.getByLabel('Loading charts').waitFor();
    expect(await axeViolations(page)).toEqual([]);
    release();
    await context.close();
  });
});
