// The API reference at /docs, as a newcomer opens it from the start-up line: in a real browser, the
// page renders from local assets and asks for nothing the server does not have (a missing icon shows
// as an error in the browser's console on every visit).
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleSessions, ensureConsoleBuilt, launchBrowser, screenshot } from '../support/browser.js';
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

const { open } = consoleSessions(() => browser, () => server.url);

describe('/docs in a browser', { timeout: 120_000 }, () => {
  it('renders the API reference with no failed request', async () => {
    const { context, page, errors } = await open();
    const failed: string[] = [];
    page.on('response', (r) => void (r.status() >= 400 && failed.push(`${r.status()} ${r.url()}`)));
    await page.goto(`${server.url}/docs`);
    await page.getByRole('heading', { name: /Hangar API/ }).first().waitFor();
    // The icon is fetched once the page has loaded: wait for the network to go quiet.
    await page.waitForLoadState('networkidle');
    await screenshot(page, 'api-reference');
    expect(failed).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });
});
