// The preparing client on a real PostgreSQL: what it prepares, what it leaves alone, and a plan that
// no longer fits its table.
import { afterEach, describe, expect, it } from 'vitest';
import { freshDatabaseUrl } from '../../test/support/database.js';
import { openDatabase, type DatabaseHandle } from './index.js';

const opened: DatabaseHandle[] = [];
afterEach(async () => {
  for (const d of opened.splice(0)) await d.close();
});

/** One connection of a pool of one, so every statement below shares it and its prepared statements. */
async function connection(prepare?: boolean) {
  const database = openDatabase(await freshDatabaseUrl(), { max: 1, ...(prepare === undefined ? {} : { prepare }) });
  opened.push(database);
  const prepared = async () =>
    (await database.pool.query<{ statement: string }>("SELECT statement FROM pg_prepared_statements WHERE name LIKE 'hangar_%' ORDER BY statement")).rows.map((r) => r.statement);
  return { database, pool: database.pool, prepared };
}

describe('PreparingClient', () => {
  it('prepares a statement with parameters from its second use, and only that one', async () => {
    const { pool, prepared } = await connection();
    await pool.query('CREATE TABLE items (id int PRIMARY KEY, label text)');
    const insert = 'INSERT INTO items (id, label) VALUES ($1, $2)';
    await pool.query(insert, [1, 'one']);
    expect(await prepared()).toEqual([]);
    await pool.query(insert, [2, 'two']);
    await pool.query(insert, [3, 'three']);
    // Once, with parameters: not prepared. Repeated without parameters, or with more than 64 (a
    // multi-row insert, whose text changes with its rows): not prepared either.
    const many = Array.from({ length: 65 }, (_, i) => `$${i + 1}::int`).join(', ');
    for (let i = 0; i < 3; i++) await pool.query(`SELECT ARRAY[${many}]`, Array.from({ length: 65 }, (_, j) => j));
    await pool.query('SELECT label FROM items WHERE id = $1 AND label <> $2', [1, 'x']);
    await pool.query('SELECT count(*) FROM items');
    await pool.query('SELECT count(*) FROM items');
    expect(await prepared()).toEqual([insert]);
    // The prepared statement answers as an unnamed one would, through every form pg accepts.
    expect((await pool.query({ text: 'SELECT label FROM items WHERE id = $1', values: [2] })).rows).toEqual([{ label: 'two' }]);
    const viaCallback = await new Promise<unknown>((resolve, reject) =>
      pool.query('SELECT label FROM items WHERE id = $1', [3], (error, result) => (error ? reject(error) : resolve(result.rows))),
    );
    expect(viaCallback).toEqual([{ label: 'three' }]);
    expect(await prepared()).toEqual([insert, 'SELECT label FROM items WHERE id = $1']);
    expect((await pool.query('SELECT count(*)::int AS n FROM items')).rows[0]).toEqual({ n: 3 });
  });

  it('plans every execution with its parameters: no generic plan kept across a change of the data', async () => {
    const { pool } = await connection();
    expect((await pool.query('SHOW plan_cache_mode')).rows).toEqual([{ plan_cache_mode: 'force_custom_plan' }]);
    const off = openDatabase(await freshDatabaseUrl(), { max: 1, prepare: false });
    opened.push(off);
    expect((await off.pool.query('SHOW plan_cache_mode')).rows).toEqual([{ plan_cache_mode: 'auto' }]);
  });

  it('through Kysely, the query layer Hangar uses', async () => {
    const { database, pool, prepared } = await connection();
    await pool.query('CREATE TABLE items (id int PRIMARY KEY, label text)');
    const db = database.db as unknown as import('kysely').Kysely<{ items: { id: number; label: string } }>;
    for (let i = 1; i <= 3; i++) await db.insertInto('items').values({ id: i, label: `n${i}` }).execute();
    const found = await db.selectFrom('items').select('label').where('id', '=', 2).executeTakeFirst();
    expect(found).toEqual({ label: 'n2' });
    expect(await prepared()).toEqual(['insert into "items" ("id", "label") values ($1, $2)']);
  });

  it('a plan that no longer fits its table (another replica migrated): sent again unnamed outside a transaction, one failure inside', async () => {
    const { pool } = await connection();
    await pool.query('CREATE TABLE items (id int PRIMARY KEY, label text)');
    await pool.query('CREATE TABLE others (id int PRIMARY KEY, label text)');
    await pool.query('INSERT INTO items VALUES (1, $1)', ['one']);
    await pool.query('INSERT INTO others VALUES (1, $1)', ['other']);
    // A connection held across the change, as Kysely and the checkpointer hold theirs (pool.query
    // would throw a failed connection away).
    const client = await pool.connect();
    const prepared = async () => (await client.query<{ statement: string }>("SELECT statement FROM pg_prepared_statements WHERE name LIKE 'hangar_%' ORDER BY statement")).rows.map((r) => r.statement);
    try {
      const items = 'SELECT * FROM items WHERE id = $1';
      const others = 'SELECT * FROM others WHERE id = $1';
      for (let i = 0; i < 2; i++) {
        await client.query(items, [1]);
        await client.query(others, [1]);
      }
      expect(await prepared()).toEqual([items, others]);
      await client.query('ALTER TABLE items ADD COLUMN size int');
      await client.query('ALTER TABLE others ADD COLUMN size int');
      // Outside a transaction: answered, from the table as it is now.
      expect((await client.query(items, [1])).rows).toEqual([{ id: 1, label: 'one', size: null }]);
      // Inside one: the transaction is lost, once; after it the statement works (no longer prepared).
      await client.query('BEGIN');
      await expect(client.query(others, [1])).rejects.toMatchObject({ code: '0A000', message: expect.stringMatching(/cached plan/) });
      await client.query('ROLLBACK');
      expect((await client.query(others, [1])).rows).toEqual([{ id: 1, label: 'other', size: null }]);
      expect((await client.query(items, [1])).rows).toEqual([{ id: 1, label: 'one', size: null }]);
      // The callback form takes the same path.
      const viaCallback = await new Promise<unknown>((resolve, reject) => client.query(items, [1], (error, result) => (error ? reject(error) : resolve(result.rows))));
      expect(viaCallback).toEqual([{ id: 1, label: 'one', size: null }]);
    } finally {
      client.release();
    }
  });

  it('prepares nothing when turned off (HANGAR_DATABASE_PREPARED_STATEMENTS=false)', async () => {
    const { pool, prepared } = await connection(false);
    for (let i = 0; i < 3; i++) await pool.query('SELECT $1::int AS n', [i]);
    expect(await prepared()).toEqual([]);
  });
});
