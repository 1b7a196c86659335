import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { freshDatabaseUrl } from '../../../test/support/database.js';
import type { Caller } from '../caller.js';
import { AUTH_CHANNEL, KeyCache } from './key-cache.js';

const caller = (keyId: string, workspaceId: string): Caller => ({ keyId, workspaceId, role: 'member', principal: keyId, previewAccess: true });

let cache: KeyCache | undefined;
afterEach(async () => {
  await cache?.stop();
});

async function notifyFromAnotherConnection(url: string, payload: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query('SELECT pg_notify($1, $2)', [AUTH_CHANNEL, payload]);
  await client.end();
}

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setImmediate(r));
}

describe('KeyCache', () => {
  it('caches only while listening, and drops entries named by a notification from any connection', async () => {
    const url = await freshDatabaseUrl();
    cache = new KeyCache({ url });
    cache.set('h1', caller('k1', 'w1'));
    expect(cache.get('h1')).toBeUndefined(); // not listening yet: nothing cached

    await cache.start();
    cache.set('h1', caller('k1', 'w1'));
    cache.set('h2', caller('k2', 'w1'));
    cache.set('h3', caller('k3', 'w2'));
    expect(cache.get('h1')?.keyId).toBe('k1');

    await notifyFromAnotherConnection(url, 'key:k1');
    await until(() => cache!.get('h1') === undefined);
    expect(cache.get('h2')?.keyId).toBe('k2');

    await notifyFromAnotherConnection(url, 'workspace:w1');
    await until(() => cache!.get('h2') === undefined);
    expect(cache.get('h3')?.keyId).toBe('k3');

    await cache.stop();
    expect(cache.get('h3')).toBeUndefined();
  });

  it('expires entries after the TTL', async () => {
    cache = new KeyCache({ url: await freshDatabaseUrl(), ttlMs: -1 });
    await cache.start();
    cache.set('h', caller('k', 'w'));
    expect(cache.get('h')).toBeUndefined();
  });
});
