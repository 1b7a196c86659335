// Row types of the agent tables (migrations/0100_agents.sql, 0101_model_configs.sql).
import type { ColumnType, Generated, JSONColumnType } from 'kysely';

export interface GitObjectsTable {
  oid: string;
  type: 'blob' | 'tree' | 'commit';
  body: Buffer;
}

export interface AgentsTable {
  id: Generated<string>;
  workspace_id: string;
  owner_id: string;
  name: string;
  description: string;
  runtime: JSONColumnType<{ model: { model_id: string }; run_timeout_seconds?: number | undefined; user_timezone?: string | undefined }>;
  extras: JSONColumnType<Record<string, unknown>>;
  backend: JSONColumnType<Record<string, unknown> | null, string | null, string | null>;
  permissions: JSONColumnType<Record<string, unknown> | null, string | null, string | null>;
  head: string;
  revision_count: number;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

export interface AgentRevisionsTable {
  agent_id: string;
  seq: number;
  commit_oid: string;
  parent_oid: string | null;
  message: string;
  changed_paths: ColumnType<string[], string[], string[]>;
  created_at: Date;
}

export interface ModelConfigsTable {
  id: Generated<string>;
  workspace_id: string;
  name: string;
  model_id: string;
  parameters: JSONColumnType<Record<string, unknown>>;
  api_key_encrypted: string | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface AgentTables {
  git_objects: GitObjectsTable;
  agents: AgentsTable;
  agent_revisions: AgentRevisionsTable;
  model_configs: ModelConfigsTable;
}
