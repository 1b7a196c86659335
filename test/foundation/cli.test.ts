// `hangar serve` and the operator commands, run as child processes on the embedded database.
import { existsSync } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHangarClient } from '../../src/client/index.js';
import { runHangar, spawnHangar, type RunningHangar } from '../support/cli.js';

let dataDir: string;
beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'hangar-cli-'));
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

async function serve(): Promise<{ running: RunningHangar; url: string }> {
  const running = spawnHangar(['serve', '--port', '0', '--data-dir', dataDir, '--log-level', 'warn']);
  const [, url] = await running.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
  return { running, url: url! };
}

async function stop(running: RunningHangar): Promise<number | null> {
  running.child.kill('SIGTERM');
  return running.exited;
}

describe('hangar CLI', () => {
  it('first start creates and prints an admin key once; keys, workspaces and restart work as documented', async () => {
    const first = await serve();
    const [, adminKey] = await first.running.waitFor(/\n {2}(hgr_[A-Za-z0-9_-]+)\n/);
    const admin = createHangarClient({ baseUrl: first.url, apiKey: adminKey! });

    const info = await (await fetch(`${first.url}/info`)).json();
    expect(info).toMatchObject({ name: 'hangar', storage: 'embedded' });

    const created = await admin.POST('/v1/deepagents/mcp-servers', {
      body: { name: 'Tools', url: 'https://tools.example.com/mcp', headers: [{ key: 'Authorization', value: 'Bearer cli-secret' }] },
    });
    expect(created.response.status).toBe(201);

    // Operator commands work beside the running server (they reach its embedded database).
    const viewerKey = await runHangar(['keys', 'create', '--data-dir', dataDir, '--role', 'viewer']);
    expect(viewerKey.code).toBe(0);
    const key = viewerKey.stdout.trim();
    expect(key).toMatch(/^hgr_/);
    const viewer = createHangarClient({ baseUrl: first.url, apiKey: key });
    const seen = await viewer.GET('/v1/deepagents/mcp-servers');
    expect(seen.response.status).toBe(200);
    expect(seen.data![0]).not.toHaveProperty('headers');

    const list = await runHangar(['keys', 'list', '--data-dir', dataDir]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/admin/);
    expect(list.stdout).toMatch(/viewer/);
    expect(list.stdout).not.toContain(key); // never the key itself
    expect(list.stdout).not.toContain(adminKey);
    const viewerId = list.stdout.split('\n').find((l) => l.includes('viewer'))!.split(/\s+/)[0]!;
    const unknown = await runHangar(['keys', 'list', '--workspace', 'nope', '--data-dir', dataDir]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe('hangar: no workspace named "nope"\n');
    const revoked = await runHangar(['keys', 'revoke', viewerId, '--data-dir', dataDir]);
    expect(revoked.code).toBe(0);
    expect((await viewer.GET('/v1/deepagents/mcp-servers')).response.status).toBe(401);

    // A workspace without preview access: its keys get 403 on the agent runtime.
    expect((await runHangar(['workspaces', 'create', 'lab', '--no-preview-access', '--data-dir', dataDir])).code).toBe(0);
    const labKey = (await runHangar(['keys', 'create', '--workspace', 'lab', '--role', 'admin', '--data-dir', dataDir])).stdout.trim();
    const lab = await fetch(`${first.url}/v1/deepagents/mcp-servers`, { headers: { 'x-api-key': labKey } });
    expect(lab.status).toBe(403);
    expect(await lab.json()).toMatchObject({ error: 'Forbidden' });
    expect((await runHangar(['workspaces', 'set', 'lab', '--preview-access', 'on', '--data-dir', dataDir])).code).toBe(0);
    expect((await fetch(`${first.url}/v1/deepagents/mcp-servers`, { headers: { 'x-api-key': labKey } })).status).toBe(200);
    const dup = await runHangar(['workspaces', 'create', 'lab', '--data-dir', dataDir]);
    expect(dup.code).toBe(2);
    expect(dup.stderr).toMatch(/already exists/);

    // SIGTERM drains and stops the embedded database too.
    expect(await stop(first.running)).toBe(0);
    // Standard output is the JSON log, line by line; the key and the "listening" line for people went to standard error.
    for (const line of first.running.stdout().split('\n').filter((l) => l.trim() !== '')) expect(() => JSON.parse(line), line).not.toThrow();
    expect(first.running.stdout()).not.toContain(adminKey);
    expect(existsSync(path.join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);

    // A second start reuses the data: no new key, the old one works, the tool server is there.
    const second = await serve();
    try {
      expect(second.running.output()).not.toMatch(/hgr_/);
      const again = createHangarClient({ baseUrl: second.url, apiKey: adminKey! });
      const servers = await again.GET('/v1/deepagents/mcp-servers');
      expect(servers.data!.map((s) => s.name)).toEqual(['Tools']);
      expect(servers.data![0]!.headers).toEqual([{ key: 'Authorization', value: 'Bearer cli-secret' }]);
    } finally {
      expect(await stop(second.running)).toBe(0);
    }
    expect((await stat(path.join(dataDir, 'secret.key'))).mode & 0o777).toBe(0o600);
    // Creates a PostgreSQL cluster and starts the server twice: well over the default minute on a busy machine.
  }, 180_000);

  it('a bad setting stops start-up with a message naming it', async () => {
    const bad = await runHangar(['serve', '--data-dir', dataDir], { PORT: 'eighty' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/PORT/);
    const badFlag = await runHangar(['serve', '--data-dir', dataDir, '--database-url', 'mysql://x']);
    expect(badFlag.code).toBe(2);
    expect(badFlag.stderr).toMatch(/--database-url: must be a postgres/);
    // A driver list naming a source that does not exist, or one source twice, is a setting error too.
    const unknownSource = await runHangar(['serve', '--data-dir', dataDir], { HANGAR_DEPLOY_DRIVERS: 'vcshost=local,github=local' });
    expect(unknownSource.code).toBe(2);
    expect(unknownSource.stderr).toMatch(/HANGAR_DEPLOY_DRIVERS: unknown source "github"/);
    const twice = await runHangar(['serve', '--data-dir', dataDir], { HANGAR_DEPLOY_DRIVERS: 'vcshost=local,vcshost=kubernetes' });
    expect(twice.code).toBe(2);
    expect(twice.stderr).toMatch(/HANGAR_DEPLOY_DRIVERS: source "vcshost" is given twice/);
  });

  it('--help describes every setting', async () => {
    const help = await runHangar(['serve', '--help']);
    expect(help.code).toBe(0);
    for (const name of ['PORT', 'HANGAR_DATA_DIR', 'DATABASE_URL', 'HANGAR_SECRET_KEY', 'HANGAR_BOOTSTRAP_API_KEY']) {
      expect(help.stdout).toContain(name);
    }
    // Each setting's default, as the README's settings table gives it (a user without the README
    // should not have to guess what an unset setting means).
    const entry = (env: string) => help.stdout.split(new RegExp(`\\n  (?:--[a-z-]+, )?${env}\\n`))[1]!.split(/\n {2}(?=\S)/)[0]!;
    expect(entry('PORT')).toContain('Default: 8124.');
    expect(entry('HANGAR_RUN_LEASE_MS')).toContain('Default: 30000.');
    expect(entry('HANGAR_DEPLOY_DRIVERS')).toContain('Default: vcshost=local,internal_source=local,internal_template=local.');
    expect(entry('HANGAR_TRACING')).toContain('Default: true.');
    expect(entry('DATABASE_URL')).not.toContain('Default:');
  });

  it('refuses a bad --role as every other bad setting: exit 2, naming it and what it accepts', async () => {
    const bad = await runHangar(['serve', '--role', 'nope']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--role: .*"all"\|"api"\|"worker"/);
    const env = await runHangar(['serve'], { HANGAR_ROLE: 'nope' });
    expect(env.code).toBe(2);
    expect(env.stderr).toMatch(/HANGAR_ROLE: .*"all"\|"api"\|"worker"/);
  });
});
