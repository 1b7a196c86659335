// Usage of the agent runtime: runs, tokens and errors per agent and model over a time range, from the
// runs table (each settled run keeps its model and token counts in `metadata.usage`). Runs of test
// threads (`options.test_run`) are left out.
import { sql } from 'kysely';
import type { Db } from '../../db/index.js';
import type { Caller } from '../caller.js';
import { invalid } from '../errors.js';

/** Usage of one agent with one model. */
export interface UsageRow {
  agentId: string;
  model: string;
  runs: number;
  errors: number;
  inputTokens: number;
  outputTokens: number;
}

/** A usage report. */
export interface UsageReport {
  start: Date;
  end: Date;
  rows: UsageRow[];
}

/** How far back a report reaches when no start is given. */
const DEFAULT_RANGE_MS = 30 * 24 * 3600 * 1000;

/**
 * The sum of a token count over a group. A run's metadata starts as what its caller sent, so `usage`
 * may hold anything until the run settles: only non-negative numbers count (whole tokens), and the
 * sum is numeric, so nothing a caller wrote can fail the report.
 */
function tokens(field: 'input_tokens' | 'output_tokens') {
  const value = sql`metadata->'usage'->${sql.lit(field)}`;
  return sql`coalesce(sum(CASE WHEN jsonb_typeof(${value}) = 'number' AND (${value})::numeric >= 0 THEN trunc((${value})::numeric) END), 0)::text`;
}

/** Reports usage of a workspace. */
export class UsageService {
  constructor(private readonly db: Db) {}

  /** Runs created in [start, end) per agent and model, newest agents first within the range. */
  async report(caller: Caller, range: { start?: Date | undefined; end?: Date | undefined; agentId?: string | undefined }): Promise<UsageReport> {
    const end = range.end ?? new Date();
    const start = range.start ?? new Date(end.getTime() - DEFAULT_RANGE_MS);
    if (start >= end) throw invalid([{ loc: ['query', 'start'], msg: 'must be before end', type: 'value_error' }]);
    let q = this.db
      .selectFrom('runs')
      .select([
        'agent_id',
        sql<string>`CASE WHEN jsonb_typeof(metadata->'usage'->'model') = 'string' THEN metadata->'usage'->>'model' ELSE 'unknown' END`.as('model'),
        sql<number>`count(*)::int`.as('runs'),
        sql<number>`count(*) FILTER (WHERE status IN ('error', 'timeout'))::int`.as('errors'),
        sql<string>`${tokens('input_tokens')}`.as('input_tokens'),
        sql<string>`${tokens('output_tokens')}`.as('output_tokens'),
      ])
      .where('workspace_id', '=', caller.workspaceId)
      .where('created_at', '>=', start)
      .where('created_at', '<', end)
      .where(sql<boolean>`metadata->'is_test_run' IS DISTINCT FROM 'true'::jsonb`);
    if (range.agentId) q = q.where('agent_id', '=', range.agentId);
    const rows = await q.groupBy(['agent_id', sql`2`]).orderBy('agent_id').orderBy(sql`2`).execute();
    return {
      start,
      end,
      rows: rows.map((r) => ({
        agentId: r.agent_id,
        model: r.model,
        runs: Number(r.runs),
        errors: Number(r.errors),
        inputTokens: Number(r.input_tokens),
        outputTokens: Number(r.output_tokens),
      })),
    };
  }
}
