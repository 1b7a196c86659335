// What a user of a deployment sees across its life, end to end with the local driver: a conversation
// (a thread, its runs and checkpoints, a store entry) held through the stable URL survives two
// rollouts, a rollback (a PATCH back to an earlier ref), a crash of the application and a restart
// of Hangar; continuous requests through the stable URL are all answered meanwhile; and the statuses
// say what is true at every moment (exactly one DEPLOYED revision, the active one; READY only while
// the stable URL answers).
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { makeAppRepo, waitFor, type AppRepo } from './git-fixture.js';

// file:// sources without an integration (the hardening rules: allowed and under a listed root).
const ENV = { HANGAR_DEPLOY_POLL_MS: '300', HANGAR_DEPLOY_HEALTH_TIMEOUT_MS: '60000', HANGAR_DEPLOY_ALLOW_LOCAL_REPOS: 'true', HANGAR_LOCAL_REPO_ROOTS: os.tmpdir() };

let server: TestServer;
let repo: AppRepo;

beforeAll(async () => {
  repo = await makeAppRepo();
  server = await startTestServer({ env: ENV });
});
afterAll(async () => {
  await server?.close();
});

async function api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { 'X-Api-Key': server.adminKey, 'Content-Type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** A request through the stable URL of deployment `id` on the current server. */
async function app(id: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}/v2/deployments/${id}/app${path}`, {
    method,
    headers: { 'X-Api-Key': server.adminKey, 'Content-Type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // not JSON (an error page): keep the text
  }
  return { status: res.status, body: parsed };
}

const FINAL = ['DEPLOYED', 'BUILD_FAILED', 'DEPLOY_FAILED', 'CREATE_FAILED', 'SKIPPED', 'INTERRUPTED'];

async function settled(d: string, r: string) {
  return waitFor(`revision ${r} to finish`, async () => {
    const rev = (await api('GET', `/v2/deployments/${d}/revisions/${r}`)).body as { status: string; number: number };
    return FINAL.includes(rev.status) ? rev : undefined;
  });
}

/** The thread's conversation so far. */
async function history(id: string, thread: string): Promise<string[]> {
  const state = await app(id, 'GET', `/threads/${thread}/state`);
  expect(state.status, JSON.stringify(state.body)).toBe(200);
  return (state.body as { values: { history?: string[] } }).values.history ?? [];
}

async function say(id: string, thread: string, input: string): Promise<string> {
  const run = await app(id, 'POST', `/threads/${thread}/runs/wait`, { assistant_id: 'echo', input: { input } });
  expect(run.status, JSON.stringify(run.body)).toBe(200);
  return (run.body as { output: string }).output;
}

/**
 * Traffic through the stable URL until stopped: reads of a thread's state and runs on it, one
 * after another (its own thread: the test talks on the main one meanwhile). Every answer must be
 * 200, and the thread's conversation never shrinks (no write is lost at a switch-over).
 */
function traffic(id: string, thread: string) {
  const failures: string[] = [];
  let requests = 0;
  let running = true;
  let seen = 0;
  const loop = (async () => {
    for (let i = 0; running; i++) {
      try {
        if (i % 4 === 3) {
          const run = await app(id, 'POST', `/threads/${thread}/runs/wait`, { assistant_id: 'echo', input: { input: `t${i}` } });
          if (run.status !== 200) failures.push(`run: ${run.status} ${JSON.stringify(run.body)}`);
        } else {
          const state = await app(id, 'GET', `/threads/${thread}/state`);
          if (state.status !== 200) failures.push(`state: ${state.status} ${JSON.stringify(state.body)}`);
          const n = ((state.body as { values?: { history?: string[] } }).values?.history ?? []).length;
          if (n < seen) failures.push(`the conversation shrank from ${seen} to ${n} messages`);
          seen = Math.max(seen, n);
        }
      } catch (error) {
        failures.push(`request failed: ${String(error)}`);
      }
      requests++;
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return { failures, requests };
    },
  };
}

/**
 * Watches the statuses while things change: whenever two reads of the deployment agree on its
 * active revision, the revision list read between them shows exactly that one DEPLOYED.
 */
function statusWatch(id: string) {
  const problems: string[] = [];
  let checks = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const before = (await api('GET', `/v2/deployments/${id}`)).body;
      const revisions = (await api('GET', `/v2/deployments/${id}/revisions?limit=100`)).body.resources as { id: string; status: string }[];
      const after = (await api('GET', `/v2/deployments/${id}`)).body;
      if (before.active_revision_id !== after.active_revision_id) continue;
      checks++;
      const deployed = revisions.filter((r) => r.status === 'DEPLOYED').map((r) => r.id);
      const expected = after.active_revision_id ? [after.active_revision_id] : [];
      if (JSON.stringify(deployed) !== JSON.stringify(expected)) problems.push(`DEPLOYED ${JSON.stringify(deployed)} while active_revision_id is ${after.active_revision_id}`);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return { problems, checks };
    },
  };
}

describe('a deployment keeps its data and tells the truth', () => {
  it('keeps a conversation across rollouts, a rollback, a crash and a restart, answering every request', { timeout: 240_000 }, async () => {
    await repo.push('main', { label: 'v1' });
    const created = await api('POST', '/v2/deployments', {
      name: 'memory-app',
      source: 'vcshost',
      source_config: { repo_url: repo.url },
      source_revision_config: { repo_ref: 'main', agentgraph_config_path: 'langgraph.json' },
      secrets: [{ name: 'APP_TOKEN', value: 'tok-123' }],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id as string;
    const rev1 = await settled(id, created.body.latest_revision_id);
    expect(rev1).toMatchObject({ status: 'DEPLOYED', number: 1 });
    // READY means the stable URL answers.
    expect((await api('GET', `/v2/deployments/${id}`)).body.status).toBe('READY');
    expect((await app(id, 'GET', '/ok')).status).toBe(200);

    // A conversation and a store entry, made through the stable URL.
    const thread = (await app(id, 'POST', '/threads', {})).body.thread_id as string;
    expect(await say(id, thread, 'ada')).toBe('hello ada from v1, secret present');
    expect((await app(id, 'PUT', '/store/items', { namespace: ['notes'], key: 'user', value: { name: 'Ada' } })).status).toBe(204);

    const load = traffic(id, (await app(id, 'POST', '/threads', {})).body.thread_id as string);
    const watch = statusWatch(id);
    // Two rollouts and a rollback to the first ref, each a new revision.
    const steps: [string, string, string][] = [
      ['release', 'v2', 'hello bob from v2, secret present'],
      ['next', 'v3', 'hello cy from v3, secret present'],
      ['main', 'v1', 'hello di from v1, secret present'],
    ];
    const names = ['bob', 'cy', 'di'];
    for (const [i, [ref, label, expected]] of steps.entries()) {
      if (ref !== 'main') await repo.push(ref, { label });
      const patched = await api('PATCH', `/v2/deployments/${id}`, { source_revision_config: { repo_ref: ref } });
      expect(patched.status).toBe(200);
      const rev = await settled(id, patched.body.latest_revision_id);
      expect(rev).toMatchObject({ status: 'DEPLOYED', number: i + 2 });
      expect(await say(id, thread, names[i]!)).toBe(expected);
    }
    const { failures, requests } = await load.stop();
    const statuses = await watch.stop();
    expect(failures).toEqual([]);
    expect(requests).toBeGreaterThan(10);
    expect(statuses.problems).toEqual([]);
    expect(statuses.checks).toBeGreaterThan(0);

    // Everything said so far, on every revision, is still there; so is the store entry.
    const said = await history(id, thread);
    expect(said.slice(0, 1)).toEqual(['hello ada from v1, secret present']);
    for (const name of names) expect(said.some((m) => m.startsWith(`hello ${name} `))).toBe(true);
    expect((await app(id, 'GET', '/store/items?namespace=notes&key=user')).body).toMatchObject({ value: { name: 'Ada' } });
    // Replaced revisions say they no longer serve; the serving one is the active one.
    const revisions = (await api('GET', `/v2/deployments/${id}/revisions`)).body.resources as { id: string; number: number; status: string; status_message: string | null }[];
    expect(revisions.map((r) => [r.number, r.status])).toEqual([
      [4, 'DEPLOYED'],
      [3, 'INTERRUPTED'],
      [2, 'INTERRUPTED'],
      [1, 'INTERRUPTED'],
    ]);
    expect(revisions[1]!.status_message).toBe('replaced by revision 4; no longer serving');
    expect((await api('GET', `/v2/deployments/${id}`)).body).toMatchObject({ status: 'READY', active_revision_id: revisions[0]!.id });

    // A crash: the run that crashes is lost, the conversation before it is not.
    const before = await history(id, thread);
    await app(id, 'POST', `/threads/${thread}/runs/wait`, { assistant_id: 'echo', input: { input: 'crash' } }).catch(() => undefined);
    await waitFor('the application to be back', async () => ((await app(id, 'GET', '/ok')).status === 200 ? true : undefined));
    expect(await history(id, thread)).toEqual(before);

    // Hangar restarts: not READY until the revision answers again, then the conversation is there.
    const { databaseUrl, dataDir, adminKey } = server;
    await server.close();
    server = await startTestServer({ databaseUrl, dataDir, adminKey, env: ENV });
    const ready = await waitFor('READY after the restart', async () => {
      const d = (await api('GET', `/v2/deployments/${id}`)).body;
      if (d.status !== 'READY') {
        expect(d.status).toBe('UNKNOWN');
        return undefined;
      }
      return d;
    });
    expect(ready.active_revision_id).toBe(revisions[0]!.id);
    expect((await app(id, 'GET', '/ok')).status).toBe(200);
    expect(await history(id, thread)).toEqual(before);
    expect(await say(id, thread, 'eve')).toBe('hello eve from v1, secret present');
    expect((await app(id, 'GET', '/store/items?namespace=notes&key=user')).body).toMatchObject({ value: { name: 'Ada' } });
  });
});
