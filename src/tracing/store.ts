// The trace store: tracing projects and runs in PostgreSQL. Every query is scoped by workspace.
// Callers hand it runs that are already redacted; it never sees an HTTP request.
import { sql, type Insertable, type Selectable } from 'kysely';
import type { Db } from '../db/index.js';
import type { TracingProjectsTable, TracingRunsTable } from '../db/tables/tracing.js';
import type { RunCreate, RunUpdate, TokenUsage, TraceRun, TraceRunTree } from './run.js';
import { extractTokenUsage } from './tokens.js';
import { buildTree } from './tree.js';

/** Name of the project every workspace has. */
export const DEFAULT_PROJECT = 'default';

/** A tracing project. */
export interface TracingProject {
  id: string;
  workspaceId: string;
  name: string;
  description: string | null;
  isDefault: boolean;
  createdAt: Date;
}

/** A run create whose project is resolved. */
export type ResolvedCreate = RunCreate & { projectId: string };

/** Filters of the root-runs list. */
export interface RootRunFilter {
  projectId: string;
  startAfter?: Date | undefined;
  startBefore?: Date | undefined;
  status?: 'pending' | 'success' | 'error' | undefined;
  /** Case-insensitive substring of the run name. */
  name?: string | undefined;
  /** true: only failed runs; false: only runs without an error. */
  error?: boolean | undefined;
  minLatencyMs?: number | undefined;
  limit: number;
  /** Position after which the page starts (from a previous page). */
  after?: { startTime: Date; id: string } | undefined;
}

/** A root run with the token totals of its whole trace. */
export interface RootRun extends TraceRun {
  traceTokens: TokenUsage | null;
}

/** Figures of one project. */
export interface ProjectStats {
  runCount: number;
  errorCount: number;
  errorRate: number;
  latencyP50Ms: number | null;
  latencyP99Ms: number | null;
  tokens: TokenUsage;
  firstStartTime: Date | null;
  lastStartTime: Date | null;
}

/** Which trace an agent run has: the root run id of its trace. */
export interface AgentRunLink {
  runId: string;
  threadId: string;
  rootRunId: string;
}

/** PostgreSQL trace store. */
export class TraceStore {
  constructor(private readonly db: Db) {}

  /** The project named `name` in the workspace, created when missing (safe under concurrency). */
  async ensureProject(workspaceId: string, name: string, description: string | null = null): Promise<TracingProject> {
    const existing = await this.findProjectByName(workspaceId, name);
    if (existing) return existing;
    await this.db
      .insertInto('tracing_projects')
      .values({ workspace_id: workspaceId, name, description })
      .onConflict((oc) => oc.columns(['workspace_id', 'name']).doNothing())
      .execute();
    return (await this.findProjectByName(workspaceId, name))!;
  }

  /** Create a project; undefined when the name is taken. */
  async createProject(workspaceId: string, name: string, description: string | null): Promise<TracingProject | undefined> {
    const row = await this.db
      .insertInto('tracing_projects')
      .values({ workspace_id: workspaceId, name, description })
      .onConflict((oc) => oc.columns(['workspace_id', 'name']).doNothing())
      .returningAll()
      .executeTakeFirst();
    return row ? toProject(row) : undefined;
  }

  /** The workspace's default project, created on first use. */
  async defaultProject(workspaceId: string): Promise<TracingProject> {
    const find = () =>
      this.db.selectFrom('tracing_projects').selectAll().where('workspace_id', '=', workspaceId).where('is_default', '=', true).executeTakeFirst();
    let row = await find();
    if (row) return toProject(row);
    await this.db
      .insertInto('tracing_projects')
      .values({ workspace_id: workspaceId, name: DEFAULT_PROJECT, is_default: true, description: 'Runs that name no other project.' })
      .onConflict((oc) => oc.doNothing())
      .execute();
    row = await find();
    if (!row) {
      // A project already took the name: it becomes the default.
      await this.db
        .updateTable('tracing_projects')
        .set({ is_default: true })
        .where('workspace_id', '=', workspaceId)
        .where('name', '=', DEFAULT_PROJECT)
        .where(({ not, exists, selectFrom }) =>
          not(exists(selectFrom('tracing_projects').select('id').where('workspace_id', '=', workspaceId).where('is_default', '=', true))),
        )
        .execute();
      row = await find();
    }
    return toProject(row!);
  }

  async findProjectByName(workspaceId: string, name: string): Promise<TracingProject | undefined> {
    const row = await this.db.selectFrom('tracing_projects').selectAll().where('workspace_id', '=', workspaceId).where('name', '=', name).executeTakeFirst();
    return row ? toProject(row) : undefined;
  }

  /** The project name of each of these runs that exists in the workspace, by run id. */
  async projectNamesOfRuns(workspaceId: string, runIds: string[]): Promise<Map<string, string>> {
    if (runIds.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('tracing_runs as r')
      .innerJoin('tracing_projects as p', 'p.id', 'r.project_id')
      .select(['r.id', 'p.name'])
      .where('r.workspace_id', '=', workspaceId)
      .where('r.id', 'in', runIds)
      .execute();
    return new Map(rows.map((r) => [r.id, r.name]));
  }

  async getProject(workspaceId: string, id: string): Promise<TracingProject | undefined> {
    const row = await this.db.selectFrom('tracing_projects').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
    return row ? toProject(row) : undefined;
  }

  async listProjects(workspaceId: string): Promise<TracingProject[]> {
    const rows = await this.db
      .selectFrom('tracing_projects')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(toProject);
  }

  /**
   * Insert runs; a run already stored (reported earlier, or by a patch that came first) is completed.
   * `link`: also record, in the same statement, which agent run these runs trace.
   */
  async insertRuns(workspaceId: string, runs: ResolvedCreate[], link?: AgentRunLink): Promise<void> {
    if (runs.length === 0) return;
    const rows = runs.map((r): Insertable<TracingRunsTable> => {
      const tokens = r.runType === 'llm' ? extractTokenUsage(r.outputs, r.extra) : null;
      return {
        workspace_id: workspaceId,
        id: r.id,
        project_id: r.projectId,
        trace_id: r.traceId,
        parent_run_id: r.parentRunId,
        dotted_order: r.dottedOrder,
        name: r.name,
        run_type: r.runType,
        inputs: json(r.inputs),
        outputs: json(r.outputs),
        error: r.error ?? null,
        start_time: r.startTime,
        end_time: r.endTime ?? null,
        prompt_tokens: tokens?.promptTokens ?? null,
        completion_tokens: tokens?.completionTokens ?? null,
        total_tokens: tokens?.totalTokens ?? null,
        tags: r.tags ?? [],
        extra: JSON.stringify(r.extra ?? {}),
        events: json(r.events),
      };
    });
    // PostgreSQL takes at most 65535 parameters per statement: ~20 per row, so 1000 rows at a time.
    for (let i = 0; i < rows.length; i += 1000) await this.insertRows(workspaceId, rows.slice(i, i + 1000), i === 0 ? link : undefined);
  }

  private async insertRows(workspaceId: string, rows: Insertable<TracingRunsTable>[], link?: AgentRunLink): Promise<void> {
    // The CTE only adds a table the insert does not use; Kysely's types cannot say both are alike.
    const db = (link ? this.db.with('linked', () => this.linkQuery(workspaceId, link)) : this.db) as Db;
    await db
      .insertInto('tracing_runs')
      .values(rows)
      .onConflict((oc) =>
        oc.columns(['workspace_id', 'id']).doUpdateSet((eb) => ({
          project_id: eb.ref('excluded.project_id'),
          parent_run_id: eb.ref('excluded.parent_run_id'),
          dotted_order: eb.ref('excluded.dotted_order'),
          name: eb.ref('excluded.name'),
          run_type: eb.ref('excluded.run_type'),
          start_time: eb.ref('excluded.start_time'),
          inputs: sql`coalesce(excluded.inputs, tracing_runs.inputs)`,
          outputs: sql`coalesce(tracing_runs.outputs, excluded.outputs)`,
          error: sql`coalesce(tracing_runs.error, excluded.error)`,
          end_time: sql`coalesce(tracing_runs.end_time, excluded.end_time)`,
          prompt_tokens: sql`coalesce(tracing_runs.prompt_tokens, excluded.prompt_tokens)`,
          completion_tokens: sql`coalesce(tracing_runs.completion_tokens, excluded.completion_tokens)`,
          total_tokens: sql`coalesce(tracing_runs.total_tokens, excluded.total_tokens)`,
          tags: eb.ref('excluded.tags'),
          extra: sql`excluded.extra || tracing_runs.extra`,
          events: sql`coalesce(tracing_runs.events, excluded.events)`,
          updated_at: sql`now()`,
        })),
      )
      .execute();
  }

  /** Apply an update; an update for a run not stored yet stores what it knows under `fallbackProjectId`. */
  async updateRun(workspaceId: string, update: RunUpdate, fallbackProjectId: string): Promise<void> {
    const tokens = update.outputs === undefined ? null : extractTokenUsage(update.outputs, update.extra);
    const result = await this.db
      .updateTable('tracing_runs')
      .set((eb) => ({
        ...(update.endTime ? { end_time: update.endTime } : {}),
        ...(update.inputs !== undefined ? { inputs: json(update.inputs) } : {}),
        ...(update.outputs !== undefined ? { outputs: json(update.outputs) } : {}),
        ...(update.error !== undefined ? { error: update.error } : {}),
        ...(update.tags ? { tags: update.tags } : {}),
        ...(update.events ? { events: json(update.events) } : {}),
        ...(update.extra ? { extra: sql`extra || ${JSON.stringify(update.extra)}::jsonb` } : {}),
        ...(tokens
          ? {
              prompt_tokens: eb.case().when('run_type', '=', 'llm').then(tokens.promptTokens).else(eb.ref('prompt_tokens')).end(),
              completion_tokens: eb.case().when('run_type', '=', 'llm').then(tokens.completionTokens).else(eb.ref('completion_tokens')).end(),
              total_tokens: eb.case().when('run_type', '=', 'llm').then(tokens.totalTokens).else(eb.ref('total_tokens')).end(),
            }
          : {}),
        updated_at: new Date(),
      }))
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', update.id)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) > 0) return;
    // The update overtook its create (separate batches): keep it; the create completes the row.
    await this.insertRuns(workspaceId, [
      {
        id: update.id,
        traceId: update.traceId,
        parentRunId: update.parentRunId ?? null,
        dottedOrder: update.dottedOrder,
        name: 'unknown',
        runType: 'chain',
        startTime: update.endTime ?? new Date(),
        endTime: update.endTime,
        inputs: update.inputs,
        outputs: update.outputs,
        error: update.error,
        tags: update.tags,
        extra: update.extra,
        events: update.events,
        projectId: fallbackProjectId,
      },
    ]);
  }

  /** One page of root runs, newest first. */
  async listRootRuns(workspaceId: string, f: RootRunFilter): Promise<RootRun[]> {
    let q = this.db
      .selectFrom('tracing_runs as r')
      .selectAll('r')
      .select((eb) => [
        eb
          .selectFrom('tracing_runs as c')
          .select(sql<string | null>`json_build_array(sum(c.prompt_tokens), sum(c.completion_tokens), sum(c.total_tokens))::text`.as('t'))
          .whereRef('c.workspace_id', '=', 'r.workspace_id')
          .whereRef('c.trace_id', '=', 'r.trace_id')
          .where('c.run_type', '=', 'llm')
          .as('trace_tokens'),
      ])
      .where('r.workspace_id', '=', workspaceId)
      .where('r.project_id', '=', f.projectId)
      .where('r.parent_run_id', 'is', null);
    if (f.startAfter) q = q.where('r.start_time', '>=', f.startAfter);
    if (f.startBefore) q = q.where('r.start_time', '<', f.startBefore);
    if (f.status) q = q.where('r.status', '=', f.status);
    if (f.name) q = q.where('r.name', 'ilike', `%${f.name.replace(/[\\%_]/g, (m) => `\\${m}`)}%`);
    if (f.error === true) q = q.where('r.error', 'is not', null);
    if (f.error === false) q = q.where('r.error', 'is', null);
    if (f.minLatencyMs !== undefined) q = q.where('r.latency_ms', '>=', f.minLatencyMs);
    if (f.after) {
      const { startTime, id } = f.after;
      q = q.where((eb) => eb.or([eb('r.start_time', '<', startTime), eb.and([eb('r.start_time', '=', startTime), eb('r.id', '<', id)])]));
    }
    const rows = await q.orderBy('r.start_time', 'desc').orderBy('r.id', 'desc').limit(f.limit).execute();
    return rows.map((row) => ({ ...toRun(row), traceTokens: parseTokenTriple(row.trace_tokens) }));
  }

  /** A run and every run beneath it, as a tree; token counts of non-model runs sum their model runs. */
  async getRunTree(workspaceId: string, runId: string): Promise<TraceRunTree | undefined> {
    const root = await this.db.selectFrom('tracing_runs').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', runId).executeTakeFirst();
    if (!root) return undefined;
    const rows = await this.db
      .selectFrom('tracing_runs')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('trace_id', '=', root.trace_id)
      .where('dotted_order', '>=', root.dotted_order)
      .where('dotted_order', '<', `${root.dotted_order}\uffff`)
      .orderBy('dotted_order')
      .execute();
    return buildTree(rows.map(toRun), runId);
  }

  /** One run without its children. */
  async findRun(workspaceId: string, runId: string): Promise<TraceRun | undefined> {
    const row = await this.db.selectFrom('tracing_runs').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', runId).executeTakeFirst();
    return row ? toRun(row) : undefined;
  }

  /** The statement recording that agent run `runId` is traced under root run `rootRunId` (a retried attempt replaces it). */
  private linkQuery(workspaceId: string, link: AgentRunLink) {
    return this.db
      .insertInto('tracing_run_links')
      .values({ workspace_id: workspaceId, run_id: link.runId, thread_id: link.threadId, root_run_id: link.rootRunId })
      .onConflict((oc) => oc.columns(['workspace_id', 'run_id']).doUpdateSet({ root_run_id: link.rootRunId, created_at: new Date() }));
  }

  /** The root run id of an agent run's trace, if it was traced. */
  async rootOfAgentRun(workspaceId: string, threadId: string, runId: string): Promise<string | undefined> {
    const row = await this.db
      .selectFrom('tracing_run_links')
      .select('root_run_id')
      .where('workspace_id', '=', workspaceId)
      .where('thread_id', '=', threadId)
      .where('run_id', '=', runId)
      .executeTakeFirst();
    return row?.root_run_id;
  }

  /** When agent run `runId` ended; null while it has not, undefined when there is no such run. */
  async agentRunEnded(workspaceId: string, threadId: string, runId: string): Promise<Date | null | undefined> {
    const row = await this.db.selectFrom('runs').select('ended_at').where('workspace_id', '=', workspaceId).where('thread_id', '=', threadId).where('id', '=', runId).executeTakeFirst();
    return row?.ended_at;
  }

  /** Count, error rate, latency percentiles of root runs and model tokens of a project. */
  async projectStats(workspaceId: string, projectId: string, range: { startAfter?: Date | undefined; startBefore?: Date | undefined } = {}): Promise<ProjectStats> {
    const scope = sql`workspace_id = ${workspaceId} AND project_id = ${projectId}
      ${range.startAfter ? sql`AND start_time >= ${range.startAfter}` : sql``}
      ${range.startBefore ? sql`AND start_time < ${range.startBefore}` : sql``}`;
    const roots = await sql<{ n: number; errors: number; p50: number | null; p99: number | null; first: Date | null; last: Date | null }>`
      SELECT count(*)::int AS n, count(*) FILTER (WHERE error IS NOT NULL)::int AS errors,
             percentile_cont(0.5) WITHIN GROUP (ORDER BY latency_ms) AS p50,
             percentile_cont(0.99) WITHIN GROUP (ORDER BY latency_ms) AS p99,
             min(start_time) AS first, max(start_time) AS last
      FROM tracing_runs WHERE ${scope} AND parent_run_id IS NULL`.execute(this.db);
    const tokens = await sql<{ p: number | null; c: number | null; t: number | null }>`
      SELECT sum(prompt_tokens)::bigint AS p, sum(completion_tokens)::bigint AS c, sum(total_tokens)::bigint AS t
      FROM tracing_runs WHERE ${scope} AND run_type = 'llm'`.execute(this.db);
    const r = roots.rows[0]!;
    const t = tokens.rows[0]!;
    return {
      runCount: r.n,
      errorCount: r.errors,
      errorRate: r.n === 0 ? 0 : r.errors / r.n,
      latencyP50Ms: r.p50,
      latencyP99Ms: r.p99,
      tokens: { promptTokens: Number(t.p ?? 0), completionTokens: Number(t.c ?? 0), totalTokens: Number(t.t ?? 0) },
      firstStartTime: r.first,
      lastStartTime: r.last,
    };
  }

  /** A digest of the workspace's tool server URLs and header records: it changes whenever one is added, changed or removed. */
  async toolServerHeadersVersion(workspaceId: string): Promise<string> {
    const { rows } = await sql<{ v: string }>`
      SELECT count(*)::text || ':' || coalesce(md5(string_agg(id::text || ':' || url || ':' || headers_encrypted, ',' ORDER BY id)), '') AS v
      FROM mcp_servers WHERE workspace_id = ${workspaceId}`.execute(this.db);
    return rows[0]?.v ?? '';
  }

  /** Delete runs stored before `cutoff`, at most `batch` at a time; returns how many were deleted. */
  async deleteOlderThan(cutoff: Date, batch = 5000): Promise<number> {
    const result = await sql`
      DELETE FROM tracing_runs WHERE ctid IN (SELECT ctid FROM tracing_runs WHERE created_at < ${cutoff} LIMIT ${batch})`.execute(this.db);
    await sql`DELETE FROM tracing_run_links WHERE created_at < ${cutoff}`.execute(this.db);
    return Number(result.numAffectedRows ?? 0);
  }
}

function json(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value);
}

function parseTokenTriple(text: string | null): TokenUsage | null {
  if (!text) return null;
  const [p, c, t] = JSON.parse(text) as (number | null)[];
  if (p === null && c === null && t === null) return null;
  return { promptTokens: Number(p ?? 0), completionTokens: Number(c ?? 0), totalTokens: Number(t ?? 0) };
}

function toProject(row: Selectable<TracingProjectsTable>): TracingProject {
  return { id: row.id, workspaceId: row.workspace_id, name: row.name, description: row.description, isDefault: row.is_default, createdAt: row.created_at };
}

function toRun(row: Selectable<TracingRunsTable>): TraceRun {
  const tokens =
    row.total_tokens === null && row.prompt_tokens === null
      ? null
      : { promptTokens: row.prompt_tokens ?? 0, completionTokens: row.completion_tokens ?? 0, totalTokens: row.total_tokens ?? 0 };
  return {
    id: row.id,
    projectId: row.project_id,
    traceId: row.trace_id,
    parentRunId: row.parent_run_id,
    dottedOrder: row.dotted_order,
    name: row.name,
    runType: row.run_type,
    status: row.status,
    inputs: row.inputs ?? null,
    outputs: row.outputs ?? null,
    error: row.error,
    startTime: row.start_time,
    endTime: row.end_time,
    latencyMs: row.latency_ms,
    tokens,
    tags: row.tags,
    extra: (row.extra ?? {}) as Record<string, unknown>,
    events: (row.events as unknown[] | null) ?? null,
  };
}
