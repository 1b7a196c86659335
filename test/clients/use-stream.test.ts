// `useStream` from @langchain/langgraph-sdk/react in a real Chromium (Debian's `chromium`, driven
// by playwright-core) against a real Hangar, the page served from another origin: submit, tokens
// arriving one by one, a tool call paused for approval and approved with `command.resume`, reload
// with the history read back, a switch between threads, and an earlier message edited (a run from a
// past checkpoint) with its versions switched.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBearerToolServer, type ToolServerFixture } from '../support/mcp.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent } from '../runtime/support.js';

const TOKEN = 'use-stream-test-token';
let server: TestServer;
let tools: ToolServerFixture;
let pages: Server;
let pageOrigin: string;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];

/** The page, bundled for the browser as a user's build would (React in production mode). */
async function bundle(): Promise<string> {
  const out = await build({
    entryPoints: [fileURLToPath(new URL('./browser/page.ts', import.meta.url))],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    define: { 'process.env.NODE_ENV': '"production"' },
    logLevel: 'silent',
  });
  return out.outputFiles[0]!.text;
}

beforeAll(async () => {
  const script = await bundle();
  pages = createServer((req, res) => {
    if (req.url?.startsWith('/app.js')) res.writeHead(200, { 'content-type': 'text/javascript' }).end(script);
    else res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><html><body><div id="root"></div><script type="module" src="/app.js"></script></body></html>');
  });
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
  // Another port is another origin: every call from the page is a cross-origin call.
  pageOrigin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
  [server, tools] = await Promise.all([startTestServer({ env: { HANGAR_CORS_ORIGINS: pageOrigin } }), startBearerToolServer(TOKEN)]);
  await server.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'calc', url: tools.url, headers: [{ key: 'Authorization', value: `Bearer ${TOKEN}` }] } });
  // The scripted model pauses between tokens, so that a page can see them arrive one by one.
  await server.client.POST('/v1/deepagents/model-configs', { body: { name: 'slow-scripted', model_id: 'scripted:demo', parameters: { delay_ms: 25 } } });
  const agentId = await createAgent(server, {
    runtime: { model: { model_id: 'slow-scripted' } },
    tools: { tools: [{ name: 'add', mcp_server_url: tools.url }], interrupt_config: { [`${tools.url}::add`]: true } },
  });
  const executablePath = execFileSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).trim();
  browser = await chromium.launch({
    executablePath,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  page = await browser.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
  const query = new URLSearchParams({ api: `${server.url}/v1/deepagents`, key: server.adminKey, assistant: agentId });
  await page.goto(`${pageOrigin}/?${query}`);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await new Promise<void>((resolve) => (pages ? pages.close(() => resolve()) : resolve()));
  await Promise.all([server?.close(), tools?.close()]);
});

const ai = () => page.locator('li.msg.ai');
async function send(text: string) {
  await page.fill('#draft', text);
  await page.click('#send');
}

describe('useStream in Chromium against Hangar, from another origin', () => {
  it('submits, streams tokens, pauses a tool call for approval, resumes, reloads and switches threads', async () => {
    await send('hello streaming world');
    await ai().filter({ hasText: 'You said: hello streaming world' }).waitFor();
    const threadA = (await page.textContent('#thread'))!;
    expect(threadA).toMatch(/^[0-9a-f-]{36}$/);
    // Tokens arrived one after another: the page rendered partial answers before the whole one.
    const seen = await page.evaluate(() => (globalThis as unknown as { __seen: string[] }).__seen);
    const partial = seen.filter((s) => s.length > 0 && s !== 'You said: hello streaming world' && 'You said: hello streaming world'.startsWith(s));
    expect(partial.length).toBeGreaterThan(0);

    // A tool call that needs approval: the interrupt reaches the page through `stream.interrupt`.
    await send('/call add {"a": 2, "b": 40}');
    await page.locator('#interrupt').filter({ hasText: 'approve add {"a":2,"b":40}?' }).waitFor();
    expect(tools.calls).toEqual([]);
    await page.click('#approve');
    await ai().filter({ hasText: 'add: 42' }).waitFor();
    await page.locator('#state').filter({ hasText: 'idle' }).waitFor();
    expect(tools.calls).toEqual([{ name: 'add', args: { a: 2, b: 40 } }]);
    expect(await page.locator('li.msg.tool').first().textContent()).toBe('42');
    const before = await page.locator('li.msg').allTextContents();

    // Reload: the thread id is in the URL and the conversation comes back from the thread's history.
    await page.reload();
    await ai().filter({ hasText: 'add: 42' }).waitFor();
    expect(await page.textContent('#thread')).toBe(threadA);
    expect(await page.locator('li.msg').allTextContents()).toEqual(before);

    // A new thread, then back to the first.
    await page.click('#new-thread');
    await page.locator('li.msg').first().waitFor({ state: 'detached' });
    await send('second thread');
    await ai().filter({ hasText: 'You said: second thread' }).waitFor();
    const threadB = (await page.textContent('#thread'))!;
    expect(threadB).not.toBe(threadA);
    await page.fill('#switch-to', threadA);
    await page.click('#switch');
    await ai().filter({ hasText: 'add: 42' }).waitFor();
    expect(await page.locator('li.msg').allTextContents()).toEqual(before);
    await page.screenshot({ path: `${server.dataDir}/use-stream.png` });
    expect(pageErrors).toEqual([]);
  });

  it('edits an earlier message (a fork from the checkpoint before it) and switches between its versions', async () => {
    await page.click('#new-thread');
    await page.locator('li.msg').first().waitFor({ state: 'detached' });
    await send('alpha');
    await ai().filter({ hasText: 'You said: alpha' }).waitFor();
    await send('beta');
    await ai().filter({ hasText: 'You said: beta' }).waitFor();
    await page.locator('#state').filter({ hasText: 'idle' }).waitFor();
    const texts = () => page.locator('li.msg .text, li.msg.ai').allTextContents();

    // Edit "beta": the answer to the edited message replaces it, and the message shows version 2 of 2.
    await page.fill('#draft', 'beta, edited');
    await page.locator('li.msg.human').nth(1).locator('button.edit').click();
    await ai().filter({ hasText: 'You said: beta, edited' }).waitFor();
    await page.locator('#state').filter({ hasText: 'idle' }).waitFor();
    await page.locator('li.msg.human').nth(1).locator('.of').filter({ hasText: '2/2' }).waitFor();
    expect(await texts()).toEqual(['alpha', 'You said: alpha', 'beta, edited', 'You said: beta, edited']);
    // Back to the first version: the thread's history still holds it.
    await page.locator('li.msg.human').nth(1).locator('button.prev').click();
    await page.locator('li.msg.human').nth(1).locator('.of').filter({ hasText: '1/2' }).waitFor();
    expect(await texts()).toEqual(['alpha', 'You said: alpha', 'beta', 'You said: beta']);

    // The first message of the thread can be edited too.
    await page.locator('li.msg.human').nth(1).locator('button.next').click();
    await page.fill('#draft', 'alpha, edited');
    await page.locator('li.msg.human').first().locator('button.edit').click();
    await ai().filter({ hasText: 'You said: alpha, edited' }).waitFor();
    await page.locator('#state').filter({ hasText: 'idle' }).waitFor();
    await page.locator('li.msg.human').first().locator('.of').filter({ hasText: '2/2' }).waitFor();
    expect(await texts()).toEqual(['alpha, edited', 'You said: alpha, edited']);
    expect(pageErrors).toEqual([]);
  });
});
