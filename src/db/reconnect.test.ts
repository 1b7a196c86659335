// Statements over a connection that is cut under them, on a real PostgreSQL: which errors count as a
// lost connection, a Kysely read sent again on a fresh connection, a write not, and a pooled
// connection cut between two statements no longer crashing the process.
import { sql } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { freshDatabaseUrl } from '../../test/support/database.js';
import { openDatabase } from './index.js';
import { isConnectionLost, reconnecting } from './reconnect.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function admin(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  closers.push(() => client.end());
  return client;
}

/** Terminate, once it shows up, the backend running a statement that contains `marker`. */
async function cutWhenRunning(by: pg.Client, marker: string): Promise<void> {
  for (let i = 0; i < 1_000; i++) {
    const { rows } = await by.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE state = 'active' AND query LIKE $1 AND pid <> pg_backend_pid()", [`%${marker}%`]);
    if (rows[0]) {
      await by.query('SELECT pg_terminate_backend($1)', [rows[0].pid]);
      return;
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`no statement with ${marker} ran`);
}

describe('isConnectionLost', () => {
  it('tells a terminated connection from a wrong statement', async () => {
    const url = await freshDatabaseUrl();
    const by = await admin(url);
    const victim = new pg.Client({ connectionString: url });
    victim.on('error', () => {});
    await victim.connect();
    const cut = victim.query("SELECT pg_sleep(5), 'cut-me-1'").catch((e: unknown) => e);
    await cutWhenRunning(by, 'cut-me-1');
    const error = await cut;
    expect((error as { code?: string }).code).toBe('57P01');
    expect(isConnectionLost(error)).toBe(true);
    // The same client afterwards: pg refuses it without asking the server.
    const after = await victim.query('SELECT 1').catch((e: unknown) => e);
    expect(isConnectionLost(after)).toBe(true);
    const wrong = await by.query('SELEC 1').catch((e: unknown) => e);
    expect(isConnectionLost(wrong)).toBe(false);
    const conflict = await by.query('CREATE TABLE twice (id int primary key); INSERT INTO twice VALUES (1), (1)').catch((e: unknown) => e);
    expect((conflict as { code?: string }).code).toBe('23505');
    expect(isConnectionLost(conflict)).toBe(false);
  });

  it('reconnecting() gives up on other errors at once and on lost connections after its retries', async () => {
    let calls = 0;
    const wrong = Object.assign(new Error('syntax error'), { code: '42601' });
    await expect(reconnecting(async () => (calls++, Promise.reject(wrong)))).rejects.toBe(wrong);
    expect(calls).toBe(1);
    calls = 0;
    const lost = new Error('Connection terminated unexpectedly');
    await expect(reconnecting(async () => (calls++, Promise.reject(lost)), { retries: 2 })).rejects.toBe(lost);
    expect(calls).toBe(3);
  });
});

describe('the query layer over a connection cut under a statement', () => {
  it('sends a read again on a fresh connection and returns its rows', async () => {
    const url = await freshDatabaseUrl();
    const by = await admin(url);
    const database = openDatabase(url, { max: 2 });
    closers.push(() => database.close());
    const read = sql<{ marker: string }>`SELECT 'x' AS marker`; // warm the pool
    await read.execute(database.db);
    const cut = cutWhenRunning(by, 'cut-me-2');
    const rows = await database.db
      .selectNoFrom([sql<string>`'cut-me-2'`.as('marker'), sql<number>`(SELECT 1 FROM pg_sleep(0.3))`.as('slept')])
      .execute();
    await cut;
    expect(rows).toEqual([{ marker: 'cut-me-2', slept: 1 }]);
  });

  it('reads cut on every connection of a full pool at once are all sent again (none waits for a connection the others hold)', async () => {
    const url = await freshDatabaseUrl();
    const by = await admin(url);
    const database = openDatabase(url, { max: 2 });
    closers.push(() => database.close());
    // As many reads as the pool has connections, each cut under its statement.
    const reads = ['cut-me-4a', 'cut-me-4b'].map((marker) =>
      database.db.selectNoFrom([sql<string>`${sql.lit(marker)}`.as('marker'), sql<number>`(SELECT 1 FROM pg_sleep(0.5))`.as('slept')]).execute(),
    );
    await Promise.all([cutWhenRunning(by, 'cut-me-4a'), cutWhenRunning(by, 'cut-me-4b')]);
    // A read that kept its broken connection while it waited for a fresh one never got one: bounded
    // here so that the failure says so instead of running into the test's timeout.
    let timer: NodeJS.Timeout | undefined;
    const stuck = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('the reads are still waiting for a connection after 15 s')), 15_000)));
    try {
      expect(await Promise.race([Promise.all(reads), stuck])).toEqual([[{ marker: 'cut-me-4a', slept: 1 }], [{ marker: 'cut-me-4b', slept: 1 }]]);
    } finally {
      clearTimeout(timer);
    }
    expect(database.pool.totalCount).toBeLessThanOrEqual(2);
  });

  it('passes transactions and savepoints through', async () => {
    const url = await freshDatabaseUrl();
    const database = openDatabase(url, { max: 2 });
    closers.push(() => database.close());
    await sql`CREATE TABLE kept (n int)`.execute(database.db);
    const trx = await database.db.startTransaction().execute();
    await sql`INSERT INTO kept VALUES (1)`.execute(trx);
    const inner = await trx.savepoint('second').execute();
    await sql`INSERT INTO kept VALUES (2)`.execute(inner);
    await inner.rollbackToSavepoint('second').execute();
    await trx.commit().execute();
    const { rows } = await sql<{ n: number }>`SELECT n FROM kept`.execute(database.db);
    expect(rows).toEqual([{ n: 1 }]);
  });

  it('does not send a write again: its error reaches the caller', async () => {
    const url = await freshDatabaseUrl();
    const by = await admin(url);
    const database = openDatabase(url, { max: 2 });
    closers.push(() => database.close());
    await sql`CREATE TABLE writes (n int)`.execute(database.db);
    const cut = cutWhenRunning(by, 'cut-me-3');
    const write = sql`INSERT INTO writes SELECT 1 FROM pg_sleep(0.3) WHERE 'cut-me-3' <> ''`.execute(database.db).catch((e: unknown) => e);
    await cut;
    expect(isConnectionLost(await write)).toBe(true);
    const { rows } = await by.query<{ n: number }>('SELECT count(*)::int AS n FROM writes');
    expect(rows[0]!.n).toBe(0);
  });

  it('a client cut while checked out between two statements does not crash the process', async () => {
    const url = await freshDatabaseUrl();
    const by = await admin(url);
    const database = openDatabase(url, { max: 2 });
    closers.push(() => database.close());
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown) => uncaught.push(error);
    process.on('uncaughtException', onUncaught);
    closers.push(async () => void process.off('uncaughtException', onUncaught));
    // A transaction holds its connection between statements: cut it there.
    const outcome = database.db
      .transaction()
      .execute(async (tx) => {
        const { rows } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(tx);
        await by.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
        // Let the FATAL message arrive while no statement of this client is running.
        await new Promise((r) => setTimeout(r, 100));
        await sql`SELECT 1`.execute(tx);
      })
      .catch((e: unknown) => e);
    expect(isConnectionLost(await outcome)).toBe(true);
    expect(uncaught).toEqual([]);
    // The pool dropped the dead client and serves the next statement on a new one.
    const { rows } = await sql<{ one: number }>`SELECT 1 AS one`.execute(database.db);
    expect(rows).toEqual([{ one: 1 }]);
  });
});
