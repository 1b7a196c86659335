// Row types of the runtime tables (migrations/0200_runtime.sql).
import type { ColumnType, Generated } from 'kysely';

/** Status of a thread (its state machine is core/runs/status.ts). */
export type ThreadStatus = 'idle' | 'busy' | 'interrupted' | 'error';

/** Status of a run (its state machine is core/runs/status.ts). */
export type RunStatus = 'pending' | 'running' | 'success' | 'error' | 'interrupted' | 'timeout';

type Json = ColumnType<unknown, string, string>;

export interface ThreadsTable {
  id: Generated<string>;
  workspace_id: string;
  /** Null until the first run binds an agent (a thread created by a LangGraph client). */
  agent_id: string | null;
  status: Generated<ThreadStatus>;
  metadata: ColumnType<Record<string, unknown>, string | undefined, string>;
  principal: string;
  /** Made for a stateless run: deleted once its run has ended. */
  temporary: Generated<boolean>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface RunsTable {
  id: Generated<string>;
  workspace_id: string;
  thread_id: string;
  agent_id: string;
  revision: string;
  status: Generated<RunStatus>;
  input: Json;
  metadata: ColumnType<Record<string, unknown>, string | undefined, string>;
  principal: string;
  attempt: Generated<number>;
  lease_owner: string | null;
  lease_expires_at: Date | null;
  error: ColumnType<{ error: string; message: string; code?: string } | null, string | null | undefined, string | null>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
  started_at: Date | null;
  ended_at: Date | null;
}

export interface RunEventsTable {
  run_id: string;
  seq: number;
  event: string;
  data: string;
  created_at: Generated<Date>;
}

/** A human approval: the resume of one interrupt and the run it started (migrations/0750). */
export interface RunApprovalsTable {
  thread_id: string;
  interrupt_id: string;
  run_id: string;
  resume: Json;
  created_at: Generated<Date>;
}

export interface RuntimeTables {
  threads: ThreadsTable;
  runs: RunsTable;
  run_events: RunEventsTable;
  run_approvals: RunApprovalsTable;
}
