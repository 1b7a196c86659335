// The notification bus on a real PostgreSQL: delivery, and what a dropped listening connection does.
import pg from 'pg';
import pino from 'pino';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { freshDatabaseUrl } from '../../test/support/database.js';
import { BUS_APPLICATION_NAME, NotificationBus } from './bus.js';

const logger = pino({ level: 'silent' });
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 2_000 && !(await check()); i++) await new Promise((r) => setTimeout(r, 10));
  expect(await check()).toBe(true);
}

async function open(url: string) {
  const pool = new pg.Pool({ connectionString: url, max: 3 });
  const bus = new NotificationBus({ connectionString: url, pool, logger, minBackoffMs: 20, maxBackoffMs: 200 });
  await bus.start();
  closers.push(async () => {
    await bus.stop();
    await pool.end();
  });
  return { pool, bus };
}

/** Terminate every bus connection of the database (as an operator or a failover would). */
async function dropBusConnections(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ ok: boolean }>(
    'SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()',
    [BUS_APPLICATION_NAME],
  );
  return rows.length;
}

describe('NotificationBus', () => {
  it('delivers notifications from another process to every subscriber of the channel', async () => {
    const url = await freshDatabaseUrl();
    const a = await open(url);
    const b = await open(url);
    const got: string[] = [];
    const off = await a.bus.subscribe('bus_test', { onMessage: (p) => got.push(`1:${p}`) });
    await a.bus.subscribe('bus_test', { onMessage: (p) => got.push(`2:${p}`) });
    await b.bus.notify('bus_test', 'hello');
    await until(() => got.length === 2);
    expect(got.sort()).toEqual(['1:hello', '2:hello']);
    await off();
    await b.bus.notify('bus_test', 'again');
    await until(() => got.length === 3);
    expect(got.at(-1)).toBe('2:again');
    await expect(a.bus.subscribe('bad channel; drop', { onMessage: () => {} })).rejects.toThrow(/invalid channel/);
  });

  it('after its connection is terminated it reconnects, listens again and tells every subscriber to re-read', async () => {
    const url = await freshDatabaseUrl();
    const a = await open(url);
    const b = await open(url);
    const got: string[] = [];
    let gaps = 0;
    await a.bus.subscribe('bus_test', { onMessage: (p) => got.push(p), onGap: () => gaps++ });
    expect(a.bus.connects).toBe(1);

    expect(await dropBusConnections(b.pool)).toBe(2);
    await until(() => a.bus.connects >= 2 && a.bus.connected);
    // Told once when the connection went, once when it came back.
    expect(gaps).toBeGreaterThanOrEqual(2);

    // Subscriptions survived the reconnect.
    await b.bus.notify('bus_test', 'after');
    await until(() => got.includes('after'));
  });

  it('keeps retrying while the database refuses it, and stops cleanly', async () => {
    const url = await freshDatabaseUrl();
    const a = await open(url);
    let gaps = 0;
    await a.bus.subscribe('bus_test', { onMessage: () => {}, onGap: () => gaps++ });
    // Refuse new connections of this database for a while, then drop the bus.
    const admin = new pg.Client({ connectionString: inject('pgAdminUrl') });
    await admin.connect();
    const db = new URL(url).pathname.slice(1);
    await admin.query(`ALTER DATABASE ${db} ALLOW_CONNECTIONS false`);
    try {
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND datname = $2', [BUS_APPLICATION_NAME, db]);
      await until(() => gaps >= 1 && !a.bus.connected);
      await new Promise((r) => setTimeout(r, 300)); // several refused attempts
      expect(a.bus.connected).toBe(false);
    } finally {
      await admin.query(`ALTER DATABASE ${db} ALLOW_CONNECTIONS true`);
      await admin.end();
    }
    await until(() => a.bus.connected);
    expect(a.bus.connects).toBe(2);
  });
});
