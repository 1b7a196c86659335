// Every time setting ends up in a Node.js timer, which cannot wait longer than 2^31 - 1 ms (a longer
// one fires after 1 ms): `hangar serve` refuses a larger value at start, naming each setting and its
// maximum, for every setting in milliseconds or seconds, not only the run and model limits.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { settings } from '../../src/config/index.js';
import { spawnHangar } from '../support/cli.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

// The settings the bug bash found with no maximum (the rule must cover each).
const FOUND = [
  'HANGAR_TOOL_TIMEOUT_MS',
  'HANGAR_TOOL_CONNECT_TIMEOUT_MS',
  'HANGAR_DEPLOY_POLL_MS',
  'HANGAR_DEPLOY_LEASE_MS',
  'HANGAR_DEPLOY_BUILD_TIMEOUT_MS',
  'HANGAR_DEPLOY_HEALTH_TIMEOUT_MS',
  'HANGAR_WEBHOOK_BACKOFF_MS',
  'HANGAR_WEBHOOK_TIMEOUT_MS',
  'HANGAR_WEBHOOK_POLL_MS',
  'HANGAR_DRAIN_TIMEOUT_MS',
  'HANGAR_HEARTBEAT_MS',
  'HANGAR_RUN_LEASE_MS',
  'HANGAR_SCHEDULE_POLL_MS',
  'HANGAR_SCHEDULE_MISSED_AFTER_MS',
  'HANGAR_AUTH_FAILURE_WINDOW_SECONDS',
  'HANGAR_SANDBOX_CPU_SECONDS',
];

describe('time settings longer than a timer can wait', () => {
  it('stop `hangar serve` at start (exit 2), each named with its maximum', async () => {
    const timeSettings = Object.values(settings)
      .map((s) => s.env)
      .filter((env) => /_(MS|SECONDS)$/.test(env));
    expect(timeSettings).toEqual(expect.arrayContaining(FOUND));
    // 2^31 ms (and 2^31 / 1000 s rounded up): one past the longest wait of a Node.js timer.
    const env = Object.fromEntries(timeSettings.map((name) => [name, name.endsWith('_MS') ? String(2 ** 31) : String(Math.ceil(2 ** 31 / 1000))]));
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'hangar-timer-limits-'));
    dirs.push(dataDir);
    const serve = spawnHangar(['serve', '--data-dir', dataDir, '--port', '0', '--host', '127.0.0.1'], env);
    // Whichever comes first: the refusal (the process exits) or a server that started anyway.
    const started = await Promise.race([serve.waitFor(/Hangar is listening/).then(() => true), serve.exited.then(() => false)]);
    if (started) {
      serve.child.kill('SIGTERM');
      await serve.exited;
    }
    expect(started).toBe(false);
    expect(await serve.exited).toBe(2);
    const stderr = serve.output();
    for (const name of timeSettings) {
      const max = name.endsWith('_MS') ? '2147483647 ms' : '2147483 seconds';
      expect(stderr, name).toContain(`${name}: must be at most ${max}`);
    }
  });

  it('and retentions past a century stop it too (they went to SQL, where a sweep then failed every hour)', async () => {
    const retention = Object.values(settings)
      .map((s) => s.env)
      .filter((env) => /_RETENTION_(DAYS|HOURS)$/.test(env));
    expect(retention).toEqual(expect.arrayContaining(['HANGAR_RUN_EVENT_RETENTION_DAYS', 'HANGAR_TRACE_RETENTION_DAYS', 'HANGAR_SCHEDULE_TICK_RETENTION_DAYS', 'HANGAR_DEPLOY_UPLOAD_RETENTION_HOURS']));
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'hangar-timer-limits-'));
    dirs.push(dataDir);
    // One past the maximum each; a bad port as well, so that a server accepting them stops at once.
    const env = Object.fromEntries(retention.map((name) => [name, name.endsWith('_DAYS') ? '36501' : String(36_500 * 24 + 1)]));
    const serve = spawnHangar(['serve', '--data-dir', dataDir, '--port', '70000', '--host', '127.0.0.1'], env);
    expect(await serve.exited).toBe(2);
    const stderr = serve.output();
    for (const name of retention) expect(stderr, name).toContain(`${name}: must be at most ${name.endsWith('_DAYS') ? '36500 days' : '876000 hours'}`);
  });

  it('take the largest value a timer can wait', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'hangar-timer-limits-'));
    dirs.push(dataDir);
    // At the maximum, with a bad port so that the server stops right after reading its settings.
    const serve = spawnHangar(['serve', '--data-dir', dataDir, '--port', '70000', '--host', '127.0.0.1'], {
      HANGAR_TOOL_TIMEOUT_MS: String(2 ** 31 - 1),
      HANGAR_AUTH_FAILURE_WINDOW_SECONDS: String(Math.floor((2 ** 31 - 1) / 1000)),
    });
    expect(await serve.exited).toBe(2);
    const stderr = serve.output();
    expect(stderr).toContain('--port:');
    expect(stderr).not.toContain('HANGAR_TOOL_TIMEOUT_MS');
    expect(stderr).not.toContain('HANGAR_AUTH_FAILURE_WINDOW_SECONDS');
  });
});
