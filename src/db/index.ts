// Opening the database: a pg pool, the typed query layer on top of it, and migrations.
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.js';

export type { Database } from './schema.js';

// Return bigint columns (counts, sizes) as numbers: every value Hangar stores fits in 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number.parseInt(v, 10));

/** The typed query layer Hangar's services use. */
export type Db = Kysely<Database>;

/** A connection pool and the query layer over it. */
export interface DatabaseHandle {
  db: Db;
  pool: pg.Pool;
  close(): Promise<void>;
}

/** Open a pool on `url`. */
export function openDatabase(url: string, options: { max?: number } = {}): DatabaseHandle {
  const pool = new pg.Pool({ connectionString: url, max: options.max ?? 20 });
  // An idle client losing its connection (a restarted database) must not crash the process.
  pool.on('error', () => {});
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    pool,
    // Kysely's destroy ends the pool it was given.
    close: () => db.destroy(),
  };
}
