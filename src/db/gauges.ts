// Database-wide counts Prometheus reads at scrape time (src/metrics.ts): plain SQL over the tables.
import { sql } from 'kysely';
import type { Db } from './index.js';

async function countBy(db: Db, table: 'runs' | 'deployments'): Promise<Record<string, number>> {
  const { rows } = await sql<{ status: string; n: number }>`SELECT status, count(*)::int AS n FROM ${sql.table(table)} GROUP BY status`.execute(db);
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

/** Runs and deployments by status, and the run queue. */
export function databaseGauges(db: Db) {
  return {
    runsByStatus: () => countBy(db, 'runs'),
    deploymentsByStatus: () => countBy(db, 'deployments'),
    async queue() {
      const { rows } = await sql<{ depth: number; wait: number | null }>`
        SELECT count(*)::int AS depth, EXTRACT(EPOCH FROM now() - min(created_at))::float8 AS wait FROM runs WHERE status = 'pending'`.execute(db);
      return { depth: rows[0]?.depth ?? 0, oldestWaitSeconds: rows[0]?.wait ?? 0 };
    },
  };
}
