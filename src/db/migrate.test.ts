import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { freshDatabaseUrl } from '../../test/support/database.js';
import { openDatabase } from './index.js';
import { migrate } from './migrate.js';

describe('migrate', () => {
  it('applies each migration exactly once when several processes start together', async () => {
    const url = await freshDatabaseUrl();
    const dir = await mkdtemp(path.join(os.tmpdir(), 'hangar-migrations-'));
    await writeFile(path.join(dir, '0001_a.sql'), 'CREATE TABLE a (id int);');
    // Not idempotent on purpose: a second application would fail.
    await writeFile(path.join(dir, '0002_b.sql'), 'ALTER TABLE a ADD COLUMN b int;');
    const handles = Array.from({ length: 4 }, () => openDatabase(url, { max: 2 }));
    try {
      const applied = await Promise.all(handles.map((h) => migrate(h.pool, dir)));
      expect(applied.flat().sort()).toEqual(['0001_a', '0002_b']);
      const { rows } = await handles[0]!.pool.query('SELECT version FROM hangar_migrations ORDER BY version');
      expect(rows.map((r) => r.version)).toEqual(['0001_a', '0002_b']);
    } finally {
      await Promise.all(handles.map((h) => h.close()));
    }
  });

  it('rolls back a failing migration and names it', async () => {
    const url = await freshDatabaseUrl();
    const dir = await mkdtemp(path.join(os.tmpdir(), 'hangar-migrations-'));
    await writeFile(path.join(dir, '0001_bad.sql'), 'CREATE TABLE ok (id int); SELECT no_such_function();');
    const handle = openDatabase(url);
    try {
      await expect(migrate(handle.pool, dir)).rejects.toThrow(/0001_bad\.sql/);
      const { rows } = await handle.pool.query("SELECT to_regclass('ok') AS t");
      expect(rows[0].t).toBeNull();
    } finally {
      await handle.close();
    }
  });
});
