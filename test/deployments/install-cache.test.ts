// Installed dependencies are reused while the lockfile is unchanged: an application with a
// dependency of its own (a vendored package tarball, locked by a real `npm install`) is deployed,
// redeployed with a code-only change (no install), then with a new lockfile (installed again).
// Also checks the logs as stored: every line timestamped, no colour codes.
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { makeAppRepo, waitFor, type AppRepo } from './git-fixture.js';

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

async function deployed(id: string, revision: string): Promise<{ build: string; deploy: string }> {
  const rev = await waitFor(`revision ${revision}`, async () => {
    const r = (await api('GET', `/v2/deployments/${id}/revisions/${revision}`)).body;
    return ['DEPLOYED', 'BUILD_FAILED', 'DEPLOY_FAILED'].includes(r.status) ? r : undefined;
  });
  const build = (await api('GET', `/v2/deployments/${id}/revisions/${revision}/build-logs`)).body.logs as string;
  expect(rev.status, build).toBe('DEPLOYED');
  const deploy = (await api('GET', `/v2/deployments/${id}/revisions/${revision}/deploy-logs`)).body.logs as string;
  return { build, deploy };
}

async function run(id: string, input: string): Promise<string> {
  const res = await fetch(`${server.url}/v2/deployments/${id}/app/runs/wait`, {
    method: 'POST',
    headers: { 'X-Api-Key': server.adminKey, 'Content-Type': 'application/json' },
    body: JSON.stringify({ assistant_id: 'echo', input: { input } }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { output: string }).output;
}

const STAMPED = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z /;

describe('installed dependencies keyed by the lockfile', () => {
  it('installs once per lockfile and reuses the install for code-only redeploys', async () => {
    await repo.push('main', { label: 'v1', dependency: '1.0.0' });
    const created = await api('POST', '/v2/deployments', {
      name: 'deps-app',
      source: 'vcshost',
      source_config: { repo_url: repo.url },
      source_revision_config: { repo_ref: 'main', agentgraph_config_path: 'langgraph.json' },
      secrets: [],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id as string;
    const first = await deployed(id, created.body.latest_revision_id);
    expect(first.build).toContain('$ npm ci');
    expect(first.build).toMatch(/installed dependencies cached under sha256 [0-9a-f]{12} of package-lock\.json/);
    expect(await run(id, 'a')).toBe('hello (greeting 1.0.0) a from v1, secret absent');

    // Logs as stored: a timestamp on every line, no colour codes, no "not up to date (0.0.0)" warning.
    for (const log of [first.build, first.deploy]) {
      const lines = log.split('\n').filter(Boolean);
      expect(lines.length).toBeGreaterThan(3);
      for (const line of lines) expect(line).toMatch(STAMPED);
      expect(log).not.toContain('\u001b[');
    }
    expect(first.deploy).not.toMatch(/not up to date/);

    // Code-only change: the same lockfile, nothing installed.
    await repo.push('code', { label: 'v2', dependency: '1.0.0' });
    const code = await api('PATCH', `/v2/deployments/${id}`, { source_revision_config: { repo_ref: 'code' } });
    // Followed live as it is written: log events, then the end with the status the build led to.
    const followed = await fetch(`${server.url}/v2/deployments/${id}/revisions/${code.body.latest_revision_id}/build-logs?follow=true`, { headers: { 'X-Api-Key': server.adminKey } });
    expect(followed.headers.get('content-type')).toMatch(/text\/event-stream/);
    const events = await followed.text();
    const texts = [...events.matchAll(/event: log\ndata: (.*)\n/g)].map((m) => (JSON.parse(m[1]!) as { text: string }).text).join('');
    expect(texts).toContain('reusing its installed dependencies');
    expect(texts).toContain('[hangar] build done');
    expect(events).toMatch(/event: end\ndata: \{"status":"(AWAITING_DEPLOY|DEPLOYING|DEPLOYED)"\}/);
    const second = await deployed(id, code.body.latest_revision_id);
    expect(second.build).toMatch(/package-lock\.json unchanged \(sha256 [0-9a-f]{12}\): reusing its installed dependencies/);
    expect(second.build).not.toContain('$ npm ci');
    expect(await run(id, 'b')).toBe('hello (greeting 1.0.0) b from v2, secret absent');

    // A new lockfile: installed again, and the new dependency is what runs.
    await repo.push('bump', { label: 'v3', dependency: '2.0.0' });
    const bump = await api('PATCH', `/v2/deployments/${id}`, { source_revision_config: { repo_ref: 'bump' } });
    const third = await deployed(id, bump.body.latest_revision_id);
    expect(third.build).toContain('$ npm ci');
    expect(await run(id, 'c')).toBe('hello (greeting 2.0.0) c from v3, secret absent');
  }, 180_000);
});
