// Row types of the sandbox tables (migrations/1500_sandboxes.sql, 2000_sandbox_commands.sql).
import type { ColumnType, Generated } from 'kysely';

export interface SandboxesTable {
  id: Generated<string>;
  workspace_id: string;
  agent_id: string;
  thread_id: string | null;
  scope: 'thread' | 'agent';
  scope_key: string;
  driver: string;
  slot: number;
  status: Generated<'running' | 'stopped'>;
  idle_ttl_seconds: number;
  delete_after_stop_seconds: number;
  disk_bytes: ColumnType<string | null, number | null | undefined, number | null>;
  commands: Generated<number>;
  created_at: Generated<Date>;
  last_used_at: Generated<Date>;
  stopped_at: Date | null;
}

/** A running command's lease on its sandbox (see migrations/2000_sandbox_commands.sql). */
export interface SandboxCommandsTable {
  id: Generated<string>;
  sandbox_id: string;
  holder: string;
  started_at: Generated<Date>;
  expires_at: Date;
}

export interface SandboxTables {
  sandboxes: SandboxesTable;
  sandbox_commands: SandboxCommandsTable;
}
