// A new user's journeys through the Console in a real browser (Debian Chromium via playwright-core)
// against a real `hangar serve` on port 0, each step as a person would take it: what the fifth bug
// bash found wrong in them stays fixed here.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations, consoleSessions, ensureConsoleBuilt, launchBrowser, screenshot } from '../support/browser.js';
import { startBearerToolServer, type ToolServerFixture } from '../support/mcp.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let browser: Browser;
let tools: ToolServerFixture;
const TOOL_TOKEN = 'journeys-tool-token';

beforeAll(async () => {
  ensureConsoleBuilt();
  [server, browser, tools] = await Promise.all([startTestServer(), launchBrowser(), startBearerToolServer(TOOL_TOKEN)]);
});
afterAll(async () => {
  await browser?.close();
  await tools?.close();
  await server?.close();
});

const { open, signIn } = consoleSessions(() => browser, () => server.url);

async function agentWith(name: string, body: object = {}): Promise<string> {
  const res = await server.client.POST('/v1/deepagents/agents', { body: { name, runtime: { model: { model_id: 'scripted:demo' } }, ...body } });
  expect(res.response.status).toBe(201);
  return res.data!.id;
}

describe('approvals in the playground', { timeout: 180_000 }, () => {
  it('asks about every call of a batch: rejecting one call runs no other until it too is answered', async () => {
    await server.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'Batch tools', url: tools.url, headers: [{ key: 'Authorization', value: `Bearer ${TOOL_TOKEN}` }] } });
    const agentId = await agentWith('Two careful calls', {
      tools: {
        tools: [
          { name: 'add', mcp_server_url: tools.url },
          { name: 'whoami', mcp_server_url: tools.url },
        ],
        interrupt_config: { [`${tools.url}::add`]: true, [`${tools.url}::whoami`]: true },
      },
    });
    const { context, page, errors } = await open();
    await signIn(page, server.adminKey, `/agents/${agentId}/playground`);
    await page.getByLabel('Message', { exact: true }).fill('/call add {"a": 1, "b": 2}\n/call whoami {}');
    await page.getByRole('button', { name: 'Send' }).click();
    const add = page.getByLabel('Approval needed: add');
    const whoami = page.getByLabel('Approval needed: whoami');
    await add.waitFor();
    await whoami.waitFor();

    // Rejecting the first call sends nothing yet: the second still waits for its own decision.
    await add.getByRole('button', { name: 'Reject' }).click();
    await add.getByLabel('Reason (optional)').fill('not this one');
    await add.getByRole('button', { name: 'Reject call' }).click();
    await add.getByRole('status').filter({ hasText: 'Your decision: reject' }).waitFor();
    await screenshot(page, 'journeys-batch-one-answered');
    await whoami.getByRole('button', { name: 'Approve' }).waitFor();
    const threadId = page.url().split('/').pop()!;
    const runs = async () => (await server.client.GET('/v1/deepagents/threads/{thread_id}/runs', { params: { path: { thread_id: threadId } } })).data!;
    expect((await runs()).length).toBe(1);
    expect(tools.calls).toEqual([]);

    // A decision can be changed until the last call is answered.
    await add.getByRole('button', { name: 'Change' }).click();
    await add.getByRole('button', { name: 'Reject' }).click();
    await add.getByRole('button', { name: 'Reject call' }).click();

    // Answering the second sends both, each as given.
    await whoami.getByRole('button', { name: 'Approve' }).click();
    await page.getByLabel('Conversation').getByText(/whoami: a caller with the right token/).waitFor();
    await add.waitFor({ state: 'detached' });
    expect(tools.calls).toEqual([{ name: 'whoami', args: {} }]);
    await screenshot(page, 'journeys-batch-answered');
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe('approvals of parallel subagents in the playground', { timeout: 180_000 }, () => {
  it('shows every pending request, also after a reload, and answers each by its interrupt id once all are decided', async () => {
    // Two `task` calls whose subagents each write a file: each pauses on its own approval request.
    const agentId = await agentWith('Two writers', {
      tools: { tools: [], interrupt_config: { write_file: true } },
      subagents: [{ name: 'writer', description: 'Writes files', instructions: 'Write.' }],
    });
    const write = (file_path: string) => `/call write_file ${JSON.stringify({ file_path, content: file_path })}`;
    const task = (description: string) => `/call task ${JSON.stringify({ description, subagent_type: 'writer' })}`;
    const { context, page, errors } = await open();
    await signIn(page, server.adminKey, `/agents/${agentId}/playground`);
    await page.getByLabel('Message', { exact: true }).fill(`${task(write('/one.txt'))}\n${task(write('/two.txt'))}`);
    await page.getByRole('button', { name: 'Send' }).click();
    const card = (file: string) => page.getByLabel('Approval needed: write_file').filter({ hasText: file });
    await card('/one.txt').waitFor();
    await card('/two.txt').waitFor();
    // While they wait, each `task` call is still pending, its subagent runs, and the subagent's own
    // `write_file` call is shown under it, not as a message of the main agent.
    const tasks = page.getByLabel('Tool call task', { exact: true });
    await expect.poll(() => tasks.count()).toBe(2);
    for (const file of ['/one.txt', '/two.txt']) {
      const taskCard = tasks.filter({ hasText: file });
      await expect(taskCard.getByText('pending', { exact: true }).count()).resolves.toBe(1);
      const panel = taskCard.getByLabel('Subagent writer', { exact: true });
      await panel.getByText('Subagent writer · running').waitFor();
      await panel.getByLabel('Subagent tool call write_file', { exact: true }).filter({ hasText: file }).waitFor();
    }
    await expect(page.getByLabel('Tool call write_file', { exact: true }).count()).resolves.toBe(0);
    await screenshot(page, 'journeys-parallel-subagents-live');
    await expect.poll(() => page.url(), { timeout: 60_000 }).toMatch(/\/threads\/[0-9a-f-]+$/);
    const threadId = page.url().split('/').pop()!;
    const thread = async () => (await server.client.GET('/v1/deepagents/threads/{thread_id}', { params: { path: { thread_id: threadId } } })).data!;
    const files = async () => Object.keys((((await thread()).values as { files?: Record<string, unknown> }).files ?? {})).sort();
    const runs = async () => (await server.client.GET('/v1/deepagents/threads/{thread_id}/runs', { params: { path: { thread_id: threadId } } })).data!;
    await expect.poll(async () => (await thread()).status, { timeout: 60_000 }).toBe('interrupted');

    // A reload of the interrupted thread shows both requests again.
    await page.reload();
    await card('/one.txt').waitFor();
    await card('/two.txt').waitFor();
    await expect(page.getByLabel('Approval needed: write_file').count()).resolves.toBe(2);
    await screenshot(page, 'journeys-parallel-subagents-pending');

    // Approving one request sends nothing: the other still waits for its own decision.
    await card('/one.txt').getByRole('button', { name: 'Approve' }).click();
    await card('/one.txt').getByRole('status').filter({ hasText: 'Your decision: approve' }).waitFor();
    await card('/two.txt').getByRole('button', { name: 'Approve' }).waitFor();
    expect((await runs()).length).toBe(1);
    expect((await thread()).status).toBe('interrupted');

    // Rejecting the other sends both, each to its own request: only the approved file is written.
    await card('/two.txt').getByRole('button', { name: 'Reject' }).click();
    await card('/two.txt').getByRole('button', { name: 'Reject call' }).click();
    await expect.poll(async () => (await thread()).status, { timeout: 60_000 }).toBe('idle');
    await page.getByLabel('Approval needed: write_file').first().waitFor({ state: 'detached' });
    expect(await files()).toEqual(['/one.txt']);
    const all = await runs();
    expect(all.map((r) => r.status)).toEqual(['success', 'success']);
    expect(await page.getByText('Run failed').count()).toBe(0);
    await screenshot(page, 'journeys-parallel-subagents-answered');
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe('subagents in the playground after a reload', { timeout: 180_000 }, () => {
  it("shows what each subagent was asked, the steps it took (from the run's trace) and what it answered", async () => {
    const agentId = await agentWith('Delegator', { subagents: [{ name: 'researcher', description: 'Looks things up', instructions: 'Research.' }] });
    const task = (description: string) => `/call task ${JSON.stringify({ description, subagent_type: 'researcher' })}`;
    const { context, page, errors } = await open();
    await signIn(page, server.adminKey, `/agents/${agentId}/playground`);
    // The second subagent calls a tool of its own, then answers.
    const lookup = '/call ls {"path": "/memories/"}';
    await page.getByLabel('Message', { exact: true }).fill(`${task('Find the tallest tower')}\n${task(lookup)}`);
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => page.url(), { timeout: 60_000 }).toMatch(/\/threads\/[0-9a-f-]+$/);
    const threadId = page.url().split('/').pop()!;
    await expect
      .poll(async () => (await server.client.GET('/v1/deepagents/threads/{thread_id}', { params: { path: { thread_id: threadId } } })).data!.status, { timeout: 60_000 })
      .toBe('idle');
    const tasks = page.getByLabel('Tool call task', { exact: true });
    const panelOf = (what: string) => tasks.filter({ hasText: what }).getByLabel('Subagent researcher', { exact: true });
    await panelOf('Find the tallest tower').getByText('You said: Find the tallest tower').first().waitFor();
    await panelOf('/call ls').getByLabel('Subagent tool call ls').waitFor();

    await page.reload();
    await page.getByLabel('Agent message').getByText(/^Done\./).last().waitFor();
    await expect.poll(() => tasks.count()).toBe(2);
    const tower = panelOf('Find the tallest tower');
    await tower.getByLabel('Asked').getByText('Find the tallest tower', { exact: true }).waitFor();
    await tower.getByLabel('Answered').getByText('You said: Find the tallest tower', { exact: true }).waitFor();
    await tower.getByText(/answered with no other step \(read from the run's trace\)/).waitFor();
    // The subagent's own tool call, rebuilt from the run's trace (it was once only "in the trace").
    const looked = panelOf('/call ls'); // the call's arguments show the description JSON-escaped
    await looked.getByLabel('Asked').getByText(lookup, { exact: true }).waitFor();
    const step = looked.getByLabel('Steps').getByLabel('Subagent tool call ls');
    await step.waitFor();
    expect(await step.textContent()).toBe('ls {"path":"/memories/"} · completed');
    await looked.getByLabel('Answered').getByText(/^Done\.\s+ls:/).waitFor();
    await looked.getByText(/steps are read from the run's trace/).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'journeys-subagents-after-reload');
    await page.setViewportSize({ width: 390, height: 844 });
    await looked.scrollIntoViewIfNeeded();
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    // A call's arguments wrap on a phone: a long line once ran out of its box, cut off, in a region
    // that scrolled but could not be reached from the keyboard (axe).
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'journeys-subagents-after-reload-390');
    // So do a trace's inputs and outputs.
    await page.getByRole('link', { name: 'View trace of the last run' }).click();
    await page.getByText('Inputs').first().waitFor();
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'journeys-trace-390');
    expect(errors).toEqual([]);
    await context.close();
  });

});

describe('subagents in the playground after a reload, with tracing off', { timeout: 240_000 }, () => {
  let untraced: TestServer;
  beforeAll(async () => {
    untraced = await startTestServer({ env: { HANGAR_TRACING: 'false' } });
  });
  afterAll(async () => {
    await untraced?.close();
  });
  const sessions = consoleSessions(() => browser, () => untraced.url);

  it("shows a subagent's steps from the run's event log, and says so when the run kept none (it once showed only the question and the answer, pointing at a trace that did not exist)", async () => {
    const created = await untraced.client.POST('/v1/deepagents/agents', {
      body: { name: 'Untraced delegator', runtime: { model: { model_id: 'scripted:demo' } }, subagents: [{ name: 'researcher', description: 'Looks things up', instructions: 'Research.' }] },
    });
    const agentId = created.data!.id;
    const lookup = '/call ls {"path": "/memories/"}';
    const { context, page, errors } = await sessions.open();
    await sessions.signIn(page, untraced.adminKey, `/agents/${agentId}/playground`);
    await page.getByLabel('Message', { exact: true }).fill(`/call task ${JSON.stringify({ description: lookup, subagent_type: 'researcher' })}`);
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => page.url(), { timeout: 60_000 }).toMatch(/\/threads\/[0-9a-f-]+$/);
    const threadId = page.url().split('/').pop()!;
    await expect
      .poll(async () => (await untraced.client.GET('/v1/deepagents/threads/{thread_id}', { params: { path: { thread_id: threadId } } })).data!.status, { timeout: 60_000 })
      .toBe('idle');
    const runsOf = async (thread: string) => (await untraced.client.GET('/v1/deepagents/threads/{thread_id}/runs', { params: { path: { thread_id: thread } } })).data!;
    await expect.poll(async () => (await runsOf(threadId))[0]?.status, { timeout: 60_000 }).toBe('success');
    const [runRow] = await runsOf(threadId);
    expect((await untraced.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}/trace', { params: { path: { thread_id: threadId, run_id: runRow!.run_id } } })).response.status).toBe(404);

    await page.reload();
    await page.getByLabel('Agent message').getByText(/^Done\./).last().waitFor();
    const looked = page.getByLabel('Tool call task', { exact: true }).getByLabel('Subagent researcher', { exact: true });
    await looked.getByLabel('Asked').getByText(lookup, { exact: true }).waitFor();
    const step = looked.getByLabel('Steps').getByLabel('Subagent tool call ls');
    await step.waitFor();
    expect(await step.textContent()).toBe('ls {"path":"/memories/"} · completed');
    await looked.getByLabel('Answered').getByText(/^Done\.\s+ls:/).waitFor();
    await looked.getByText("Its steps are read from the run's event log.", { exact: true }).waitFor();
    // No link to a trace that does not exist: the run is named without one.
    expect(await page.getByRole('link', { name: /^(View trace|Trace of run)/ }).count()).toBe(0);
    await page.getByLabel('Runs').getByText(`Run ${runRow!.run_id.slice(0, 8)}`, { exact: true }).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'journeys-subagents-untraced-after-reload');

    // A run of the API streamed without its subagents' events kept no step of them: the panel says so.
    const other = (await untraced.client.POST('/v1/deepagents/threads', { body: { agent_id: agentId } })).data!.id;
    const res = await fetch(`${untraced.url}/v1/deepagents/threads/${other}/runs/wait`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': untraced.adminKey },
      body: JSON.stringify({ assistant_id: agentId, input: { messages: [{ role: 'user', content: `/call task ${JSON.stringify({ description: 'Find the tallest tower', subagent_type: 'researcher' })}` }] }, stream_mode: ['values'] }),
    });
    expect(res.status).toBe(200);
    await page.goto(`${untraced.url}/threads/${other}`);
    const tower = page.getByLabel('Tool call task', { exact: true }).getByLabel('Subagent researcher', { exact: true });
    await tower.getByLabel('Answered').getByText('You said: Find the tallest tower', { exact: true }).waitFor();
    await tower.getByText(/^Its own steps were not kept: the run has no trace \(tracing is off\)/).waitFor();
    expect(await tower.getByLabel('Steps').count()).toBe(0);
    // The Traces page says why this server's runs are not there.
    await page.getByRole('link', { name: 'Traces', exact: true }).click();
    await page.getByRole('alert').filter({ hasText: 'Tracing is off' }).getByText(/HANGAR_TRACING=false/).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe("editing an agent's files", { timeout: 180_000 }, () => {
  const getAgent = async (id: string) => (await server.client.GET('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: id } } })).data!;

  it('never overwrites unseen a change saved meanwhile in another tab: the save is refused, the draft stays, and the latest can be loaded', async () => {
    const agentId = await agentWith('Shared agent', { instructions: 'First version.' });
    const { context, page, errors } = await open();
    await signIn(page, server.adminKey, `/agents/${agentId}`);
    const other = await context.newPage();
    await other.goto(`${server.url}/agents/${agentId}`);
    const instructions = (p: Page) => p.getByRole('textbox', { name: 'Instructions (AGENTS.md)' });
    await instructions(page).waitFor();
    await instructions(other).waitFor();

    // The other tab saves first.
    await instructions(other).fill('Written in the other tab.');
    await other.getByRole('button', { name: 'Save' }).click();
    await other.getByRole('status').filter({ hasText: 'Saved as revision' }).waitFor();

    // This tab, still on the first revision, edits the same file: its save is refused.
    await instructions(page).fill('Written in this tab.');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Not saved: this agent was changed meanwhile').waitFor();
    await screenshot(page, 'journeys-agent-changed-meanwhile');
    expect((await getAgent(agentId)).instructions).toBe('Written in the other tab.');
    expect(await instructions(page).inputValue()).toBe('Written in this tab.');

    // Loading the latest shows what the other tab saved; saving from there works.
    await page.getByRole('button', { name: /Load the latest revision/ }).click();
    await expect.poll(() => instructions(page).inputValue()).toBe('Written in the other tab.');
    await instructions(page).fill('Written in the other tab, then here.');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved as revision' }).waitFor();
    expect((await getAgent(agentId)).instructions).toBe('Written in the other tab, then here.');
    expect(errors.filter((e) => !e.includes('412'))).toEqual([]);
    await context.close();
  });

  it('adds a skill with Enter, and drops a refused save’s error once the draft is edited', async () => {
    const agentId = await agentWith('Skilled agent');
    const { context, page } = await open();
    await signIn(page, server.adminKey, `/agents/${agentId}`);
    await page.getByRole('tab', { name: 'Skills' }).click();
    const name = page.getByLabel('New skill name');
    await name.fill('Bad Name!');
    await name.press('Enter');
    await page.getByText('Bad Name!', { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Save' }).click();
    const refused = page.getByText(/is not a valid skill name/);
    await refused.waitFor();
    // Removing the refused skill leaves nothing to save: the error about it goes too.
    await page.getByRole('button', { name: 'Remove skill Bad Name!' }).click();
    await refused.waitFor({ state: 'detached' });
    await name.fill('summarize');
    await name.press('Enter');
    await page.getByLabel('Description of summarize').fill('Summarizes a text');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved as revision' }).waitFor();
    await screenshot(page, 'journeys-skill-added');
    expect((await getAgent(agentId)).skills.map((s) => [s.name, s.description])).toEqual([['summarize', 'Summarizes a text']]);
    await context.close();
  });
});

describe('going back to a revision', { timeout: 180_000 }, () => {
  it('restores an earlier revision from the Revisions tab as a new revision, after asking', async () => {
    const agentId = await agentWith('Versioned agent', {
      description: 'first',
      instructions: 'Version one.',
      skills: [{ name: 'summarize', description: 'Summarizes', instructions: 'Be short.' }],
    });
    const patched = await server.client.PATCH('/v1/deepagents/agents/{agent_id}', {
      params: { path: { agent_id: agentId } },
      body: { description: 'second', instructions: 'Version two.', skills: [] },
    });
    expect(patched.response.status).toBe(200);
    const { context, page, errors } = await open();
    await signIn(page, server.adminKey, `/agents/${agentId}`);
    await page.getByRole('tab', { name: 'Revisions' }).click();
    await page.getByRole('button', { name: 'Restore revision #1' }).click();
    const dialog = page.getByRole('dialog', { name: 'Restore a revision' });
    await dialog.getByText('every revision stays in the history').waitFor();
    await screenshot(page, 'journeys-restore-ask');
    await dialog.getByRole('button', { name: 'Restore #1' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.getByRole('status').filter({ hasText: 'Saved as revision' }).waitFor();
    await page.getByLabel('Revision list').getByText('#3', { exact: true }).waitFor();
    // The comparison shown follows: what the restore changed, from #2 to #3.
    await page.getByLabel('Diff').getByText('+ Version one.').waitFor();
    await page.getByLabel('Diff').getByText('- Version two.').waitFor();
    await screenshot(page, 'journeys-restored');

    const agent = (await server.client.GET('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: agentId } } })).data!;
    expect([agent.description, agent.instructions]).toEqual(['first', 'Version one.']);
    expect(agent.skills.map((s) => [s.name, s.description, s.instructions])).toEqual([['summarize', 'Summarizes', 'Be short.']]);
    const revisions = (await server.client.GET('/v1/deepagents/agents/{agent_id}/revisions', { params: { path: { agent_id: agentId } } })).data!.items;
    expect(revisions.map((r) => r.number)).toEqual([3, 2, 1]);
    // The new revision is titled as what it is, in the list too.
    const restoredTitle = `Restore revision #1 (${revisions[2]!.id.slice(0, 7)})`;
    expect(revisions[0]!.message).toBe(restoredTitle);
    await page.getByLabel('Revision list').getByText(restoredTitle, { exact: false }).waitFor();
    // The page shows the restored agent.
    await page.getByRole('tab', { name: 'AGENTS.md' }).click();
    expect(await page.getByRole('textbox', { name: 'Instructions (AGENTS.md)' }).inputValue()).toBe('Version one.');
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe('the conversation', { timeout: 180_000 }, () => {
  it('shows a message of several lines as it was typed', async () => {
    const agentId = await agentWith('Echo of lines');
    const { context, page, errors } = await open();
    await signIn(page, server.adminKey, `/agents/${agentId}/playground`);
    const message = page.getByLabel('Message', { exact: true });
    // The conversation stays mounted (its stream open) while the new thread's URL replaces the
    // playground's: the element marked here is the one that shows the answer.
    await page.getByLabel('Conversation').waitFor();
    await page.evaluate('document.querySelector("[aria-label=Conversation]").dataset.marked = "yes"');
    await message.fill('first line\nsecond line');
    await message.press('Enter');
    await page.waitForURL(/\/threads\/[0-9a-f-]{36}$/);
    await page.getByLabel('Conversation').getByText(/You said: first line/).waitFor();
    expect(await page.getByLabel('Conversation').getAttribute('data-marked')).toBe('yes');
    await screenshot(page, 'journeys-lines');
    expect(await page.getByLabel('You message').first().innerText()).toMatch(/first line\nsecond line/);
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe('tool servers', { timeout: 180_000 }, () => {
  it('tests the connection again once the headers are replaced: a failure of the old headers is not left shown', async () => {
    const { context, page, errors } = await open();
    await signIn(page, server.adminKey, '/tool-servers');
    await page.getByRole('button', { name: 'Register tool server' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('textbox', { name: /^Name/ }).fill('Wrong token first');
    await dialog.getByRole('textbox', { name: /^URL/ }).fill(`${tools.url}?server=replaced`);
    await page.getByRole('button', { name: 'Add header' }).click();
    await page.getByLabel('Header 1 name').fill('Authorization');
    await page.getByLabel('Header 1 value').fill('Bearer wrong');
    await page.getByRole('button', { name: 'Register', exact: true }).click();
    await dialog.waitFor({ state: 'detached' });
    // Other tests' servers may be listed too: this one's card.
    const card = page.locator('.mantine-Card-root', { hasText: 'Wrong token first' });
    await card.getByRole('button', { name: 'Test connection' }).click();
    const failed = card.getByText('Connection failed');
    await failed.waitFor();

    await card.getByRole('button', { name: 'Replace headers' }).click();
    await card.getByRole('button', { name: 'Add header' }).click();
    await card.getByLabel('Header 1 name').fill('Authorization');
    await card.getByLabel('Header 1 value').fill(`Bearer ${TOOL_TOKEN}`);
    await card.getByRole('button', { name: 'Save headers' }).click();
    await card.getByLabel('Tools of Wrong token first').getByText('2 tools').waitFor();
    expect(await failed.count()).toBe(0);
    await screenshot(page, 'journeys-headers-replaced');
    // The new secret is not kept in the page: opening the form again starts empty.
    await card.getByRole('button', { name: 'Replace headers' }).click();
    expect(await card.getByLabel('Header 1 value').count()).toBe(0);
    // Enter in a header's value saves, as in the register form.
    await card.getByRole('button', { name: 'Add header' }).click();
    await card.getByLabel('Header 1 name').fill('Authorization');
    await card.getByLabel('Header 1 value').fill(`Bearer ${TOOL_TOKEN}`);
    await card.getByLabel('Header 1 value').press('Enter');
    await card.getByRole('button', { name: 'Save headers' }).waitFor({ state: 'detached' });
    await card.getByLabel('Tools of Wrong token first').getByText('2 tools').waitFor();
    expect(errors.filter((e) => !e.includes('502'))).toEqual([]);
    await context.close();
  });
});

describe('usage', { timeout: 180_000 }, () => {
  it('counts a model answer once: approving a call does not count the answer that asked for it again', async () => {
    const url = `${tools.url}?server=usage`;
    await server.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'Usage tools', url, headers: [{ key: 'Authorization', value: `Bearer ${TOOL_TOKEN}` }] } });
    const agentId = await agentWith('Approved once', { tools: { tools: [{ name: 'add', mcp_server_url: url }], interrupt_config: { [`${url}::add`]: true } } });
    const { context, page, errors } = await open();
    await signIn(page, server.adminKey, `/agents/${agentId}/playground`);
    await page.getByLabel('Message', { exact: true }).fill('/call add {"a": 20, "b": 22}');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByLabel('Approval needed: add').getByRole('button', { name: 'Approve' }).click();
    await page.getByLabel('Conversation').getByText(/add: 42/).waitFor();
    const threadId = page.url().split('/').pop()!;
    // Both runs over (the approval's and the answer's)…
    await expect
      .poll(async () => (await server.client.GET('/v1/deepagents/threads/{thread_id}/runs', { params: { path: { thread_id: threadId } } })).data!.map((r) => r.status), { timeout: 30_000 })
      .toEqual(['success', 'success']);
    // …the thread holds each model answer once, with its usage.
    const state = (await server.client.GET('/v1/deepagents/threads/{thread_id}/state', { params: { path: { thread_id: threadId } } })).data!;
    const answers = (state.values as { messages: { type: string; usage_metadata?: { input_tokens: number; output_tokens: number } }[] }).messages.filter((m) => m.type === 'ai');
    expect(answers).toHaveLength(2);
    const input = answers.reduce((n, m) => n + m.usage_metadata!.input_tokens, 0);
    const output = answers.reduce((n, m) => n + m.usage_metadata!.output_tokens, 0);

    await page.getByRole('link', { name: 'Usage' }).click();
    const row = page.getByRole('row').filter({ hasText: 'Approved once' });
    await row.waitFor();
    await screenshot(page, 'journeys-usage');
    expect(await row.getByRole('cell').allInnerTexts()).toEqual(['Approved once', 'demo', '2', '0', `${input} / ${output}`]);
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe('the playground on a phone', { timeout: 180_000 }, () => {
  it('gives the threads list the full width of the page, as the conversation has', async () => {
    const agentId = await agentWith('Phone chat');
    const { context, page, errors } = await open(390);
    await signIn(page, server.adminKey, `/agents/${agentId}/playground`);
    const threads = page.getByLabel('Threads');
    const conversation = page.getByLabel('Conversation');
    await conversation.waitFor();
    const [a, b] = [(await threads.boundingBox())!, (await conversation.boundingBox())!];
    await screenshot(page, 'journeys-playground-390');
    expect(Math.round(a.width)).toBe(Math.round(b.width));
    // On a wide window the conversation takes two of three columns.
    await page.setViewportSize({ width: 1280, height: 900 });
    await expect.poll(async () => Math.round((await conversation.boundingBox())!.width / (await threads.boundingBox())!.width)).toBe(2);
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe('the Console on a phone (390 px)', { timeout: 180_000 }, () => {
  /** Whether every element `selector` finds under `scope` shows its whole text, neither cut nor run out of the page. */
  async function whole(page: Page, selector: string): Promise<string[]> {
    return page.evaluate(`[...document.querySelectorAll(${JSON.stringify(selector)})].filter((el) => {
      const r = el.getBoundingClientRect();
      return el.scrollWidth > el.clientWidth + 1 || r.right > document.documentElement.clientWidth + 1;
    }).map((el) => el.textContent)`);
  }

  it('keeps status words whole, wraps long errors and labels, and names people as the header does', async () => {
    const name = 'An agent with a name long enough to fill the first column of a table on a phone';
    const agentId = await agentWith(name);
    await server.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'Gone away', url: 'http://127.0.0.1:9/mcp/a/rather/long/path/that/keeps/going/past/the/edge' } });
    const { context, page, errors } = await open(390);
    await signIn(page, server.adminKey, '/agents');
    const threadId = (await server.client.POST('/v1/deepagents/threads', { body: { agent_id: agentId } })).data!.id;
    const res = await fetch(`${server.url}/v1/deepagents/threads/${threadId}/runs/wait`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': server.adminKey },
      body: JSON.stringify({ assistant_id: agentId, input: { messages: [{ role: 'user', content: 'hello' }] } }),
    });
    expect(res.status).toBe(200);

    // Traces: the status of a run with a long name once read "SU…"; the waterfall's run types "C…".
    await page.goto(`${server.url}/traces`);
    await page.getByRole('table').getByRole('link', { name }).first().waitFor();
    expect(await whole(page, 'td .mantine-Badge-label')).toEqual([]);
    await page.getByRole('table').getByRole('link', { name }).first().click();
    await page.getByLabel('Waterfall').waitFor();
    expect(await whole(page, '[aria-label="Waterfall"] .mantine-Badge-label')).toEqual([]);
    await screenshot(page, 'journeys-phone-trace');

    // A tool server's error names its long URL in full, wrapped inside its box.
    await page.goto(`${server.url}/agents/${agentId}`);
    await page.getByRole('tab', { name: 'Tools' }).click();
    await page.getByText(/could not list the tools of http:\/\/127\.0\.0\.1:9/).waitFor();
    expect(await whole(page, '.mantine-Alert-message')).toEqual([]);
    await screenshot(page, 'journeys-phone-tool-error');

    // The new-schedule form's "More options" wraps inside its dialog.
    await page.goto(`${server.url}/schedules`);
    await page.getByRole('button', { name: 'New schedule' }).click();
    const more = page.getByRole('dialog', { name: 'New schedule' }).getByRole('button', { name: /^More options/ });
    await more.waitFor();
    expect(await whole(page, '[role="dialog"] button')).toEqual([]);
    // Escape closes the agent's open list first, then the dialog.
    await page.keyboard.press('Escape');
    await page.getByRole('listbox').waitFor({ state: 'hidden' });
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'detached' });

    // The bootstrap key has no principal of its own: it acts for itself (its id). Memories once
    // titled "Your memories (<uuid>)", and Settings listed the uuid as its principal.
    await page.goto(`${server.url}/agents/${agentId}/memories`);
    const yours = page.getByRole('heading', { name: /^Your memories/ });
    await yours.waitFor();
    expect(await yours.textContent()).toMatch(/^Your memories \(HANGAR_BOOTSTRAP_API_KEY \(test_admin_[^)]*…\)\)$/);
    await page.goto(`${server.url}/settings`);
    const own = page.getByRole('row').filter({ hasText: 'this session' });
    await own.getByText('the key itself', { exact: true }).waitFor();
    expect(await own.textContent()).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/);
    expect(await axeViolations(page)).toEqual([]);
    expect(errors.filter((e) => !/502/.test(e))).toEqual([]); // the unreachable tool server's listing
    await context.close();
  });
});

describe('the server stopped and started again under an open page', { timeout: 240_000 }, () => {
  let own: TestServer;
  afterAll(async () => {
    await own?.close();
  });
  const sessions = consoleSessions(() => browser, () => own.url);

  it('says Hangar cannot be reached (not that a run failed, or that the server was updated), gives the message back, and says when the server is back', async () => {
    own = await startTestServer();
    const agentId = (await own.client.POST('/v1/deepagents/agents', { body: { name: 'Restart probe', runtime: { model: { model_id: 'scripted:demo' } } } })).data!.id;
    const { context, page, errors } = await sessions.open();
    await sessions.signIn(page, own.adminKey, `/agents/${agentId}/playground`);
    const message = page.getByLabel('Message', { exact: true });
    await message.fill('before');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByLabel('Conversation').getByText('You said: before', { exact: true }).waitFor();
    await expect.poll(async () => (await own.client.GET('/v1/deepagents/threads/{thread_id}', { params: { path: { thread_id: page.url().split('/').pop()! } } })).data?.status, { timeout: 30_000 }).toBe('idle');
    const port = Number(new URL(own.url).port);
    const { databaseUrl, dataDir, adminKey } = own;
    await own.close();

    // A message sent meanwhile: it once said "Run failed: Unable to connect to LangGraph server", and the message was gone.
    await message.fill('while it was down');
    await page.getByRole('button', { name: 'Send' }).click();
    const notSent = page.getByRole('alert').filter({ hasText: 'Not sent' });
    await notSent.getByText(/^Hangar could not be reached: the server may be stopped or restarting\./).waitFor();
    expect(await notSent.textContent()).not.toMatch(/LangGraph/);
    await expect.poll(() => message.inputValue()).toBe('while it was down');
    await screenshot(page, 'journeys-server-down-send');

    // Another page, whose code cannot be fetched: it once blamed an update of the server.
    await page.getByRole('link', { name: 'Schedules', exact: true }).click();
    await page.getByText(/^Hangar cannot be reached: the server may be stopped or restarting/).waitFor();
    await screenshot(page, 'journeys-server-down-page');

    own = await startTestServer({ databaseUrl, dataDir, adminKey, port });
    await page.getByText('Hangar is back: reload the Console to show this page.', { exact: true }).waitFor({ timeout: 60_000 });
    await page.getByRole('button', { name: 'Reload the Console' }).click();
    await page.getByRole('heading', { name: 'Schedules' }).waitFor();
    // Still signed in (sessions live in the database); the thread's page sends the message again.
    await page.goBack();
    await page.getByLabel('Conversation').getByText('You said: before', { exact: true }).waitFor();
    await message.fill('while it was down');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByLabel('Conversation').getByText('You said: while it was down', { exact: true }).waitFor();
    // What a stopped server causes in the page's console is expected: any network-level failure (refused,
    // and a kept-alive connection reset or answered empty as the server closed it), failed fetches and
    // module loads. Anything else is named.
    const unexpected = errors.filter((e) => !/net::ERR_(CONNECTION_REFUSED|CONNECTION_RESET|CONNECTION_CLOSED|EMPTY_RESPONSE)|Failed to fetch|ConnectionError|dynamically imported module|^\s+at /.test(e));
    expect(unexpected, unexpected.join('\n')).toEqual([]);
    await context.close();
  });
});

describe('an agent deleted under the playground', { timeout: 180_000 }, () => {
  it('says in words why a message cannot run (no JSON), and its threads stay readable without a message box', async () => {
    const agentId = await agentWith('Soon deleted');
    const { context, page, errors } = await open();
    await signIn(page, server.adminKey, `/agents/${agentId}/playground`);
    const message = page.getByLabel('Message', { exact: true });
    await message.fill('before the delete');
    await message.press('Enter');
    await page.getByLabel('Conversation').getByText('You said: before the delete').waitFor();
    await page.waitForURL(/\/threads\/[0-9a-f-]{36}$/);
    const threadId = page.url().split('/').pop()!;
    await expect.poll(async () => (await server.client.GET('/v1/deepagents/threads/{thread_id}', { params: { path: { thread_id: threadId } } })).data!.status, { timeout: 30_000 }).toBe('idle');

    expect((await server.client.DELETE('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: agentId } } })).response.status).toBe(204);
    await message.fill('after the delete');
    await message.press('Enter');
    const failed = page.getByRole('alert').filter({ hasText: 'Run failed' });
    await failed.waitFor();
    await screenshot(page, 'journeys-agent-deleted-send');
    const said = await failed.innerText();
    expect(said).toContain(`no agent with id ${agentId}`);
    expect(said).not.toContain('{');

    // Opened again, the thread shows its conversation, says why it cannot run, and offers no message box.
    await page.goto(`${server.url}/threads/${threadId}`);
    await page.getByLabel('Conversation').getByText('You said: before the delete').waitFor();
    await page.getByText('Its threads stay readable, but cannot run again.').waitFor();
    expect(await page.getByLabel('Message', { exact: true }).count()).toBe(0);
    await screenshot(page, 'journeys-agent-deleted-thread');
    expect(errors.filter((e) => !/404/.test(e))).toEqual([]);
    await context.close();
  });
});

describe('a page whose code cannot be loaded', { timeout: 180_000 }, () => {
  it('says so inside the Console, keeps the navigation, and reloads on request (it was a blank page)', async () => {
    const { context, page, errors } = await open();
    await signIn(page, server.adminKey, '/agents');
    // What a tab opened before an upgrade meets: the page's chunk under its old name is gone.
    await page.route(/\/assets\/Deployments-[^/]+\.js$/, (route) => route.fulfill({ status: 404, body: 'not found' }));
    await page.getByRole('link', { name: 'Deployments' }).click();
    await page.getByText('This page could not be shown').waitFor();
    await page.getByText('the server may have been updated').waitFor();
    await screenshot(page, 'journeys-page-not-loaded');
    expect(await page.getByRole('button', { name: 'Sign out' }).isVisible()).toBe(true);
    // Another page still opens.
    await page.getByRole('link', { name: 'Tool servers' }).click();
    await page.getByRole('heading', { name: 'Tool servers' }).waitFor();
    await page.getByRole('link', { name: 'Deployments' }).click();
    await page.unroute(/\/assets\/Deployments-[^/]+\.js$/);
    await page.getByRole('button', { name: 'Reload the Console' }).click();
    await page.getByRole('heading', { name: 'Deployments' }).waitFor();
    expect(errors.filter((e) => !/404|dynamically imported module/.test(e))).toEqual([]);
    await context.close();
  });
});
