// The Console's Schedules page in a real browser (Debian Chromium via playwright-core) against a real
// `hangar serve` on port 0: a person creates a schedule, sees it listed with its next run, follows its
// runs to their thread, pauses it and deletes it; a bad cron or zone is said in words beside its input.
import type { Browser, Page } from 'playwright-core';
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

async function schedulesOf(agentId: string) {
  return (await server.client.GET('/v1/deepagents/schedules', { params: { query: { agent_id: agentId } } })).data!.items;
}

/** Until the page's finite animations (a dialog fading in) have ended, so a screenshot shows the end state. */
async function animationsDone(page: Page): Promise<void> {
  await page.evaluate(`Promise.all(document.getAnimations().filter((a) => a.effect?.getTiming().iterations !== Infinity).map((a) => a.finished.catch(() => undefined))).then(() => undefined)`);
}

describe('the Schedules page', { timeout: 240_000 }, () => {
  it('creates a schedule (a bad cron or zone said in words beside its input), lists it with its next run, pauses, resumes and deletes it after asking', async () => {
    const agentId = await agentWith('Morning reporter');
    await agentWith('Someone else');
    const { context, page, errors } = await open();
    await signIn(page, server.adminKey);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Schedules' }).click();
    await page.getByRole('heading', { name: 'Schedules' }).waitFor();
    await page.getByText('No schedules yet.').waitFor();

    await page.getByRole('button', { name: 'New schedule' }).click();
    const dialog = page.getByRole('dialog', { name: 'New schedule' });
    // Nothing chosen or written: said before anything is sent.
    await dialog.getByRole('button', { name: 'Create schedule' }).click();
    await dialog.getByText('Choose an agent').waitFor();
    await dialog.getByText('Write the message each run is sent').waitFor();

    await dialog.getByRole('textbox', { name: 'Agent' }).fill('Morning');
    await page.getByRole('option', { name: 'Morning reporter' }).click();
    await dialog.getByRole('textbox', { name: 'Cron expression' }).fill('0 9 * *');
    await dialog.getByRole('textbox', { name: 'Time zone' }).fill('Mars/Olympus_Mons');
    await dialog.getByRole('textbox', { name: 'Message' }).fill('What changed overnight?');
    await dialog.getByRole('button', { name: 'Create schedule' }).click();
    // The server's reason, in words, under the input it is about (not a JSON body, not a field path).
    const cronError = dialog.getByText('must have 5 fields (minute hour day month weekday) or 6 with seconds first; got 4');
    await cronError.waitFor();
    expect(await dialog.getByRole('textbox', { name: 'Cron expression' }).getAttribute('aria-invalid')).toBe('true');
    expect(await dialog.textContent()).not.toMatch(/[{}]|body\.schedule/);
    await animationsDone(page);
    await screenshot(page, 'schedules-bad-cron');
    expect(await schedulesOf(agentId)).toEqual([]);

    // The cron fixed, the zone is checked next.
    await dialog.getByRole('textbox', { name: 'Cron expression' }).fill('0 9 * * 1-5');
    await cronError.waitFor({ state: 'detached' });
    await dialog.getByRole('button', { name: 'Create schedule' }).click();
    await dialog.getByText('unknown IANA time zone "Mars/Olympus_Mons"').waitFor();
    expect(await schedulesOf(agentId)).toEqual([]);

    await dialog.getByRole('textbox', { name: 'Time zone' }).fill('Europe/Paris');
    await dialog.getByRole('button', { name: 'Create schedule' }).click();
    await dialog.waitFor({ state: 'detached' });
    const [created] = await schedulesOf(agentId);
    expect(created).toMatchObject({ schedule: '0 9 * * 1-5', timezone: 'Europe/Paris', enabled: true, input: { messages: [{ role: 'user', content: 'What changed overnight?' }] } });

    // Listed with its agent, expression, zone and next run (in the browser's zone).
    const row = page.getByRole('row', { name: 'Schedule Morning reporter 0 9 * * 1-5' });
    await row.getByText('Europe/Paris').first().waitFor();
    const nextRun = await page.evaluate(`new Date(${JSON.stringify(created!.next_run_at)}).toLocaleString()`);
    await row.getByText(String(nextRun), { exact: true }).waitFor();
    await row.getByText('Not yet').waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'schedules-listed');

    // Pause, then resume.
    await row.getByRole('button', { name: 'Pause Morning reporter 0 9 * * 1-5' }).click();
    await row.getByText('Paused', { exact: true }).waitFor();
    expect((await schedulesOf(agentId))[0]).toMatchObject({ enabled: false, next_run_at: null });
    await row.getByRole('button', { name: 'Resume Morning reporter 0 9 * * 1-5' }).click();
    await row.getByRole('button', { name: 'Pause Morning reporter 0 9 * * 1-5' }).waitFor();
    expect((await schedulesOf(agentId))[0]!.enabled).toBe(true);

    // Deleting asks first; cancelling keeps it.
    await row.getByRole('button', { name: 'Delete Morning reporter 0 9 * * 1-5' }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete schedule' });
    await confirm.getByText('the threads and runs it started stay').waitFor();
    await animationsDone(page);
    await screenshot(page, 'schedules-delete-ask');
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'detached' });
    expect(await schedulesOf(agentId)).toHaveLength(1);
    await row.getByRole('button', { name: 'Delete Morning reporter 0 9 * * 1-5' }).click();
    await confirm.getByRole('button', { name: 'Delete schedule' }).click();
    await confirm.waitFor({ state: 'detached' });
    await row.waitFor({ state: 'detached' });
    await page.getByText('No schedules yet.').waitFor();
    expect(await schedulesOf(agentId)).toEqual([]);
    expect(errors.filter((e) => !e.includes('422'))).toEqual([]);
    await context.close();
  });

  it("shows a schedule's last run and recent runs, each linked to its thread; the agent page links to the agent's schedules", async () => {
    const agentId = await agentWith('Ticking agent');
    const otherId = await agentWith('Quiet agent');
    await server.client.POST('/v1/deepagents/schedules', { body: { agent_id: otherId, schedule: '0 0 1 1 *', input: { messages: [{ role: 'user', content: 'new year' }] } } });
    // Every second, until it has started a run that has finished (then paused: nothing fires meanwhile).
    const made = await server.client.POST('/v1/deepagents/schedules', { body: { agent_id: agentId, schedule: '* * * * * *', input: { messages: [{ role: 'user', content: 'status?' }] } } });
    expect(made.response.status).toBe(201);
    const scheduleId = made.data!.id;
    await expect
      .poll(async () => (await server.client.GET('/v1/deepagents/schedules/{schedule_id}', { params: { path: { schedule_id: scheduleId } } })).data!.last_run?.run?.status, { timeout: 60_000, interval: 250 })
      .toBe('success');
    await server.client.PATCH('/v1/deepagents/schedules/{schedule_id}', { params: { path: { schedule_id: scheduleId } }, body: { enabled: false } });
    const ticks = (await server.client.GET('/v1/deepagents/schedules/{schedule_id}/runs', { params: { path: { schedule_id: scheduleId } } })).data!.items;
    const finished = ticks.find((t) => t.run?.status === 'success')!;

    const { context, page, errors } = await open();
    await signIn(page, server.adminKey, `/agents/${agentId}`);
    await page.getByRole('main').getByRole('link', { name: 'Schedules' }).click();
    await page.getByRole('heading', { name: 'Schedules of Ticking agent' }).waitFor();
    const row = page.getByRole('row', { name: 'Schedule Ticking agent * * * * * *' });
    await row.waitFor();
    // Only this agent's schedules.
    expect(await page.getByRole('row', { name: /^Schedule Quiet agent/ }).count()).toBe(0);
    await row.getByText('Paused', { exact: true }).waitFor();
    await screenshot(page, 'schedules-of-agent');

    await row.getByRole('button', { name: 'Recent runs of Ticking agent * * * * * *' }).click();
    const runs = page.getByRole('dialog', { name: 'Recent runs' }).getByRole('table', { name: 'Runs of the schedule' });
    const tickRow = runs.getByRole('row').filter({ hasText: String(await page.evaluate(`new Date(${JSON.stringify(finished.tick_at)}).toLocaleString()`)) });
    await tickRow.getByText('success').waitFor();
    await animationsDone(page);
    await screenshot(page, 'schedules-recent-runs');
    await tickRow.getByRole('link', { name: 'Thread' }).click();
    await page.waitForURL(`**/threads/${finished.thread_id}`);
    await page.getByLabel('Conversation').getByText('status?').first().waitFor();

    // Every agent's schedules, from the navigation.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Schedules' }).click();
    await page.getByRole('row', { name: 'Schedule Quiet agent 0 0 1 1 *' }).waitFor();
    await page.getByRole('row', { name: 'Schedule Ticking agent * * * * * *' }).waitFor();
    expect(errors).toEqual([]);
    await context.close();
  });

  it("says in words why a schedule of a deleted agent cannot be resumed", async () => {
    const agentId = await agentWith('Short-lived agent');
    const made = await server.client.POST('/v1/deepagents/schedules', { body: { agent_id: agentId, schedule: '0 12 * * *', enabled: false, input: { messages: [{ role: 'user', content: 'noon' }] } } });
    expect(made.response.status).toBe(201);
    expect((await server.client.DELETE('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: agentId } } })).response.status).toBe(204);
    const { context, page, errors } = await open();
    await signIn(page, server.adminKey, '/schedules');
    const row = page.getByRole('row', { name: `Schedule Deleted agent ${agentId.slice(0, 8)} 0 12 * * *` });
    await row.getByRole('button', { name: /^Resume / }).click();
    await row.getByRole('alert').filter({ hasText: `Not resumed: agent ${agentId} was deleted; a schedule of it cannot run again` }).waitFor();
    expect(await row.getByRole('alert').textContent()).not.toMatch(/[{}]|body\./);
    expect((await server.client.GET('/v1/deepagents/schedules/{schedule_id}', { params: { path: { schedule_id: made.data!.id } } })).data!.enabled).toBe(false);
    // The browser logs the refused resume (422) and the deleted agent's name asked for (404).
    expect(errors.filter((e) => !/\b(404|422)\b/.test(e))).toEqual([]);
    await context.close();
  });

  it("edits a schedule: a bad change said in words beside its input and nothing written; every option the API has; never over a change made meanwhile", async () => {
    const agentId = await agentWith('Editable agent');
    const made = await server.client.POST('/v1/deepagents/schedules', { body: { agent_id: agentId, schedule: '0 9 * * *', timezone: 'UTC', input: { messages: [{ role: 'user', content: 'Old question' }] } } });
    expect(made.response.status).toBe(201);
    const scheduleId = made.data!.id;
    const read = async () => (await server.client.GET('/v1/deepagents/schedules/{schedule_id}', { params: { path: { schedule_id: scheduleId } } })).data!;
    const thread = await server.client.POST('/v1/deepagents/threads', { body: { agent_id: agentId } });
    expect(thread.response.status).toBe(201);
    const threadId = thread.data!.id;

    const { context, page, errors } = await open();
    await signIn(page, server.adminKey, `/schedules?agent=${agentId}`);
    const row = page.getByRole('row', { name: 'Schedule Editable agent 0 9 * * *' });
    await row.getByRole('button', { name: 'Edit Editable agent 0 9 * * *' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit schedule' });
    // The form starts from the schedule as it is.
    expect(await dialog.getByRole('textbox', { name: 'Cron expression' }).inputValue()).toBe('0 9 * * *');
    expect(await dialog.getByRole('textbox', { name: 'Message' }).inputValue()).toBe('Old question');
    expect(await dialog.getByRole('switch', { name: 'Runs on schedule' }).isChecked()).toBe(true);
    expect(await dialog.getByRole('radio', { name: 'A new thread for every run' }).isChecked()).toBe(true);

    // A bad expression and a bad webhook: each said under its input, nothing written.
    await dialog.getByRole('textbox', { name: 'Cron expression' }).fill('0 9 * *');
    await dialog.getByRole('textbox', { name: 'Webhook URL' }).fill('ftp://example.com/hook');
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    await dialog.getByText('must be an absolute http:// or https:// URL').waitFor();
    expect(await dialog.getByRole('textbox', { name: 'Webhook URL' }).getAttribute('aria-invalid')).toBe('true');
    expect((await read()).updated_at).toBe(made.data!.updated_at);
    await dialog.getByRole('textbox', { name: 'Webhook URL' }).fill('https://hooks.example.com/hangar');
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    await dialog.getByText('must have 5 fields (minute hour day month weekday) or 6 with seconds first; got 4').waitFor();
    expect(await dialog.getByRole('textbox', { name: 'Cron expression' }).getAttribute('aria-invalid')).toBe('true');
    expect(await dialog.textContent()).not.toMatch(/[{}]|body\./);
    expect(await read()).toMatchObject({ schedule: '0 9 * * *', webhook: null, updated_at: made.data!.updated_at });
    await dialog.getByRole('textbox', { name: 'Cron expression' }).fill('30 8 * * 1-5');

    // Every field the API takes.
    await dialog.getByRole('textbox', { name: 'Time zone' }).fill('Asia/Tokyo');
    await dialog.getByRole('textbox', { name: 'Message' }).fill('New question');
    await dialog.getByRole('switch', { name: 'Runs on schedule' }).uncheck({ force: true });
    await dialog.getByRole('radio', { name: /^Always the same thread/ }).check({ force: true });
    await dialog.getByRole('textbox', { name: 'Thread id' }).fill(threadId);
    await dialog.getByRole('textbox', { name: 'When the thread is still busy at a tick' }).click();
    await page.getByRole('option', { name: 'Queue the run after the busy one (at most 3 waiting)' }).click();
    await dialog.getByLabel('End').fill('2031-06-30T18:00');
    expect(await axeViolations(page)).toEqual([]);
    await animationsDone(page);
    await screenshot(page, 'schedules-edit');
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    await dialog.waitFor({ state: 'detached' });
    const endTime = String(await page.evaluate(`new Date('2031-06-30T18:00').toISOString()`));
    const changed = await read();
    expect(changed).toMatchObject({
      schedule: '30 8 * * 1-5',
      timezone: 'Asia/Tokyo',
      input: { messages: [{ role: 'user', content: 'New question' }] },
      enabled: false,
      next_run_at: null,
      thread: threadId,
      multitask_strategy: 'enqueue',
      webhook: 'https://hooks.example.com/hangar',
    });
    expect(new Date(changed.end_time!).toISOString()).toBe(endTime);
    // The list shows it changed, with its options.
    const edited = page.getByRole('row', { name: 'Schedule Editable agent 30 8 * * 1-5' });
    await edited.getByText('Paused', { exact: true }).waitFor();
    await edited.getByText('Asia/Tokyo').waitFor();
    await edited.getByText('if it is busy, queues the run').waitFor();
    await edited.getByText('Webhook https://hooks.example.com/hangar').waitFor();
    await screenshot(page, 'schedules-edited');

    // Changed elsewhere while the form is open: nothing saved over it (If-Match), said in words; the
    // latest loads into the form. Then only the fields changed are sent: clearing the end, the webhook
    // and the fixed thread sends them as cleared, and the other change stays.
    await edited.getByRole('button', { name: 'Edit Editable agent 30 8 * * 1-5' }).click();
    await dialog.getByRole('textbox', { name: 'Cron expression' }).waitFor();
    const elsewhere = await server.client.PATCH('/v1/deepagents/schedules/{schedule_id}', { params: { path: { schedule_id: scheduleId } }, body: { input: { messages: [{ role: 'user', content: 'Changed by the CLI' }] } } });
    expect(elsewhere.response.status).toBe(200);
    await dialog.getByRole('switch', { name: 'Runs on schedule' }).check({ force: true });
    await dialog.getByRole('textbox', { name: 'Message' }).fill('My own question');
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    const stale = dialog.getByRole('alert').filter({ hasText: 'This schedule was changed since you opened it' });
    await stale.getByText('nothing was saved').waitFor();
    expect(await read()).toMatchObject({ enabled: false, input: { messages: [{ content: 'Changed by the CLI' }] } });
    await stale.scrollIntoViewIfNeeded();
    await animationsDone(page);
    await screenshot(page, 'schedules-edit-stale');
    await stale.getByRole('button', { name: 'Load the latest' }).click();
    await stale.waitFor({ state: 'detached' });
    // What was typed is not lost: the person's changes stay in the form, over the latest version, and
    // the latest's values of those fields are shown beside them.
    expect(await dialog.getByRole('textbox', { name: 'Message' }).inputValue()).toBe('My own question');
    expect(await dialog.getByRole('switch', { name: 'Runs on schedule' }).isChecked()).toBe(true);
    const keptNote = dialog.getByRole('status').filter({ hasText: 'Your changes are kept over the latest version' });
    expect(await keptNote.getByLabel('Latest Messages').textContent()).toBe('Messages: user: Changed by the CLI');
    expect(await keptNote.getByLabel('Latest Runs on schedule').textContent()).toBe('Runs on schedule: off (paused)');
    expect(await axeViolations(page)).toEqual([]);
    await keptNote.scrollIntoViewIfNeeded();
    await animationsDone(page);
    await screenshot(page, 'schedules-edit-kept');
    await dialog.getByRole('radio', { name: 'A new thread for every run' }).check({ force: true });
    await dialog.getByLabel('End').fill('');
    await dialog.getByRole('textbox', { name: 'Webhook URL' }).fill('');
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    await dialog.waitFor({ state: 'detached' });
    const last = await read();
    expect(last).toMatchObject({ enabled: true, thread: 'new', end_time: null, webhook: null, schedule: '30 8 * * 1-5', input: { messages: [{ role: 'user', content: 'My own question' }] } });
    expect(last.next_run_at).not.toBeNull();
    await edited.getByRole('button', { name: 'Pause Editable agent 30 8 * * 1-5' }).waitFor();
    // The browser logs the refused saves (422, 412).
    expect(errors.filter((e) => !/\b(412|422)\b/.test(e))).toEqual([]);
    await context.close();
  });

  it("creates a schedule with the API's options: paused, on one thread, what a busy thread does, an end and a webhook", async () => {
    const agentId = await agentWith('Optioned agent');
    const otherId = await agentWith('Other optioned agent');
    const threadOf = async (id: string) => (await server.client.POST('/v1/deepagents/threads', { body: { agent_id: id } })).data!.id;
    const [own, others] = [await threadOf(agentId), await threadOf(otherId)];
    const { context, page, errors } = await open();
    await signIn(page, server.adminKey, `/schedules?agent=${agentId}`);
    await page.getByRole('button', { name: 'New schedule' }).click();
    const dialog = page.getByRole('dialog', { name: 'New schedule' });
    await dialog.getByRole('textbox', { name: 'Cron expression' }).fill('15 6 * * *');
    await dialog.getByRole('textbox', { name: 'Message' }).fill('Morning digest');
    await dialog.getByRole('button', { name: /^More options/ }).click();
    await dialog.getByRole('switch', { name: 'Runs on schedule' }).uncheck({ force: true });
    await dialog.getByRole('radio', { name: /^Always the same thread/ }).check({ force: true });
    // Another agent's thread: the server's reason under the thread's input, nothing created.
    await dialog.getByRole('textbox', { name: 'Thread id' }).fill(others);
    await dialog.getByRole('button', { name: 'Create schedule' }).click();
    await dialog.getByText(`thread ${others} belongs to another agent (${otherId})`).waitFor();
    expect(await dialog.getByRole('textbox', { name: 'Thread id' }).getAttribute('aria-invalid')).toBe('true');
    expect(await schedulesOf(agentId)).toEqual([]);
    await dialog.getByRole('textbox', { name: 'Thread id' }).fill(own);
    await dialog.getByRole('textbox', { name: 'When the thread is still busy at a tick' }).click();
    await page.getByRole('option', { name: 'Interrupt the busy run, keep its progress, start this one' }).click();
    await dialog.getByLabel('End').fill('2032-01-15T07:30');
    await dialog.getByRole('textbox', { name: 'Webhook URL' }).fill('https://hooks.example.com/digest');
    expect(await axeViolations(page)).toEqual([]);
    await animationsDone(page);
    await screenshot(page, 'schedules-new-options');
    await dialog.getByRole('button', { name: 'Create schedule' }).click();
    await dialog.waitFor({ state: 'detached' });
    const [created] = await schedulesOf(agentId);
    expect(created).toMatchObject({
      schedule: '15 6 * * *',
      enabled: false,
      next_run_at: null,
      thread: own,
      multitask_strategy: 'interrupt',
      webhook: 'https://hooks.example.com/digest',
      input: { messages: [{ role: 'user', content: 'Morning digest' }] },
    });
    expect(created!.end_time && new Date(created!.end_time).toISOString()).toBe(String(await page.evaluate(`new Date('2032-01-15T07:30').toISOString()`)));
    await page.getByRole('row', { name: 'Schedule Optioned agent 15 6 * * *' }).getByText('if it is busy, interrupts the busy run').waitFor();
    expect(errors.filter((e) => !e.includes('422'))).toEqual([]);
    await context.close();
  });

  it('edits a schedule of several messages: each shown with its role, the one changed sent with the others kept as they are', async () => {
    const agentId = await agentWith('Briefing agent');
    const messages = [
      { role: 'system' as const, content: 'Answer in French.' },
      { role: 'user' as const, content: 'Here is the context.' },
      { role: 'user' as const, content: 'Summarise the day.' },
    ];
    const made = await server.client.POST('/v1/deepagents/schedules', { body: { agent_id: agentId, schedule: '0 18 * * *', input: { messages } } });
    expect(made.response.status).toBe(201);
    const { context, page, errors } = await open(390);
    await signIn(page, server.adminKey, `/schedules?agent=${agentId}`);
    const row = page.getByRole('row', { name: 'Schedule Briefing agent 0 18 * * *' });
    await row.getByText('3 messages, the last: Summarise the day.').waitFor();
    await row.getByRole('button', { name: 'Edit Briefing agent 0 18 * * *' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit schedule' });
    const first = dialog.getByRole('textbox', { name: 'Message 1 of 3 (system)' });
    expect(await first.inputValue()).toBe('Answer in French.');
    expect(await dialog.getByRole('textbox', { name: 'Message 2 of 3 (user)' }).inputValue()).toBe('Here is the context.');
    expect(await dialog.getByRole('textbox', { name: 'Message 3 of 3 (user)' }).inputValue()).toBe('Summarise the day.');
    await animationsDone(page);
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'schedules-edit-messages-390');
    // An emptied earlier message is said under it; nothing is sent.
    await first.fill('');
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    await dialog.getByText('Write this message, or the schedule cannot keep it').waitFor();
    expect((await server.client.GET('/v1/deepagents/schedules/{schedule_id}', { params: { path: { schedule_id: made.data!.id } } })).data!.updated_at).toBe(made.data!.updated_at);
    await first.fill('Answer in German.');
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    await dialog.waitFor({ state: 'detached' });
    const after = (await server.client.GET('/v1/deepagents/schedules/{schedule_id}', { params: { path: { schedule_id: made.data!.id } } })).data!;
    expect(after.input.messages).toEqual([{ role: 'system', content: 'Answer in German.' }, messages[1], messages[2]]);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('a viewer sees no Edit button', async () => {
    const agentId = await agentWith('Viewed agent');
    await server.client.POST('/v1/deepagents/schedules', { body: { agent_id: agentId, schedule: '0 6 * * *', input: { messages: [{ role: 'user', content: 'hi' }] } } });
    const viewer = await server.client.POST('/v1/api-keys', { body: { role: 'viewer' } });
    const { context, page } = await open();
    await signIn(page, viewer.data!.key, `/schedules?agent=${agentId}`);
    const row = page.getByRole('row', { name: 'Schedule Viewed agent 0 6 * * *' });
    await row.getByRole('button', { name: 'Recent runs of Viewed agent 0 6 * * *' }).waitFor();
    expect(await row.getByRole('button', { name: /^Edit / }).count()).toBe(0);
    await context.close();
  });

  it('fits a phone: the list and the form at 390 px wide', async () => {
    const agentId = await agentWith('Phone agent');
    await server.client.POST('/v1/deepagents/schedules', {
      body: { agent_id: agentId, schedule: '30 7 * * *', timezone: 'America/New_York', input: { messages: [{ role: 'user', content: 'Good morning' }] } },
    });
    const { context, page, errors } = await open(390);
    await signIn(page, server.adminKey, '/schedules');
    const row = page.getByRole('row', { name: 'Schedule Phone agent 30 7 * * *' });
    await row.getByRole('button', { name: 'Pause Phone agent 30 7 * * *' }).waitFor();
    // Nothing wider than the screen: the page does not scroll sideways.
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await screenshot(page, 'schedules-390');
    await page.getByRole('button', { name: 'New schedule' }).click();
    await page.getByRole('dialog', { name: 'New schedule' }).getByRole('textbox', { name: 'Cron expression' }).waitFor();
    await animationsDone(page);
    await screenshot(page, 'schedules-new-390');
    await page.getByRole('dialog', { name: 'New schedule' }).getByRole('button', { name: 'Close' }).click();
    await page.getByRole('dialog', { name: 'New schedule' }).waitFor({ state: 'detached' });
    await row.getByRole('button', { name: 'Edit Phone agent 30 7 * * *' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit schedule' });
    await edit.getByRole('textbox', { name: 'Webhook URL' }).waitFor();
    await animationsDone(page);
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'schedules-edit-390');
    // A 404 logged by the browser: the name of the agent deleted in the test above, asked for.
    expect(errors.filter((e) => !e.includes('404'))).toEqual([]);
    await context.close();
  });
});
