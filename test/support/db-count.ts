// Raw row counts, for tests that assert a bad request wrote nothing.
import pg from 'pg';

/** Number of rows of `table` in the database at `url`. */
export async function countRows(url: string, table: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return Number((await client.query(`SELECT count(*) FROM "${table}"`)).rows[0].count);
  } finally {
    await client.end();
  }
}

/** Every row of every public table as text, to look for secrets stored in clear. */
export async function allRowsAsText(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const tables = await client.query<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'");
    const out: string[] = [];
    for (const { table_name } of tables.rows) {
      const rows = await client.query<{ row: string }>(`SELECT t::text AS row FROM "${table_name}" t`);
      out.push(...rows.rows.map((r) => r.row));
    }
    return out.join('\n');
  } finally {
    await client.end();
  }
}
