// Row types of the trace store (migrations/0400_tracing.sql).
import type { ColumnType, Generated } from 'kysely';

/** A JSON column: written as a JSON string or value, read back parsed. */
type Json = ColumnType<unknown, string | null, string | null>;

export interface TracingProjectsTable {
  id: Generated<string>;
  workspace_id: string;
  name: string;
  description: string | null;
  is_default: Generated<boolean>;
  created_at: Generated<Date>;
}

export interface TracingRunsTable {
  workspace_id: string;
  id: string;
  project_id: string;
  trace_id: string;
  parent_run_id: string | null;
  dotted_order: string;
  name: string;
  run_type: string;
  inputs: Json;
  outputs: Json;
  error: string | null;
  start_time: Date;
  end_time: Date | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  total_tokens: number | null;
  tags: Generated<string[]>;
  extra: ColumnType<unknown, string | undefined, string>;
  events: Json;
  status: ColumnType<'pending' | 'success' | 'error', never, never>;
  latency_ms: ColumnType<number | null, never, never>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface TracingRunLinksTable {
  workspace_id: string;
  run_id: string;
  thread_id: string;
  root_run_id: string;
  created_at: Generated<Date>;
}

export interface TracingTables {
  tracing_run_links: TracingRunLinksTable;
  tracing_projects: TracingProjectsTable;
  tracing_runs: TracingRunsTable;
}
