// Versioned SQL migrations, applied at start-up under an advisory lock so that replicas starting
// together apply each migration exactly once.
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';

/** Where the `NNNN_name.sql` files live (the package's `migrations/` folder). */
export const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations/', import.meta.url));

const LOCK_KEY = 7_246_001; // arbitrary, constant: "hangar migrations"

/** Apply every migration not yet applied, in file-name order; returns the versions applied now. */
export async function migrate(pool: pg.Pool, dir: string = MIGRATIONS_DIR): Promise<string[]> {
  const files = (await readdir(dir)).filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f)).sort();
  const client = await pool.connect();
  const applied: string[] = [];
  try {
    await client.query('SELECT pg_advisory_lock($1)', [LOCK_KEY]);
    await client.query(`CREATE TABLE IF NOT EXISTS hangar_migrations (
      version text PRIMARY KEY,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const done = new Set(
      (await client.query<{ version: string }>('SELECT version FROM hangar_migrations')).rows.map((r) => r.version),
    );
    for (const file of files) {
      const version = file.replace(/\.sql$/, '');
      if (done.has(version)) continue;
      const sql = await readFile(`${dir}/${file}`, 'utf8');
      await client.query('BEGIN');
      try {
        await client.query(sql);
        await client.query('INSERT INTO hangar_migrations (version) VALUES ($1)', [version]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw new Error(`migration ${file} failed: ${error instanceof Error ? error.message : String(error)}`);
      }
      applied.push(version);
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [LOCK_KEY]).catch(() => {});
    client.release();
  }
  return applied;
}

/** Migrations in `dir` not yet applied to the database (all of them when none ever ran). */
export async function pendingMigrations(pool: pg.Pool, dir: string = MIGRATIONS_DIR): Promise<string[]> {
  const versions = (await readdir(dir)).filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f)).map((f) => f.replace(/\.sql$/, ''));
  const { rows } = await pool.query<{ versions: string[] | null }>(
    `SELECT CASE WHEN to_regclass('hangar_migrations') IS NULL THEN NULL ELSE (SELECT array_agg(version) FROM hangar_migrations) END AS versions`,
  );
  const done = new Set(rows[0]?.versions ?? []);
  return versions.filter((v) => !done.has(v)).sort();
}
