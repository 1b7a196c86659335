// Row types of the deployment tables (migrations/0600_deployments.sql).
import type { ColumnType, Generated, JSONColumnType } from 'kysely';

type Json<T extends object> = JSONColumnType<T, string, string>;

export interface DeploymentsTable {
  id: Generated<string>;
  workspace_id: string;
  name: string;
  source: string;
  driver: string;
  source_config: Json<Record<string, unknown>>;
  secret_references: ColumnType<unknown[] | null, string | null, string | null>;
  deployment_type: Generated<string>;
  tag_value_ids: Generated<string[]>;
  status: Generated<string>;
  remote_reconciled: Generated<boolean>;
  image_version: string | null;
  latest_revision_id: string | null;
  active_revision_id: string | null;
  revision_count: Generated<number>;
  claimed_by: string | null;
  lease_expires_at: Date | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface DeploymentRevisionsTable {
  id: Generated<string>;
  deployment_id: string;
  workspace_id: string;
  seq: number;
  status: Generated<string>;
  source_revision_config: Json<Record<string, unknown>>;
  resource_spec: ColumnType<Record<string, unknown> | null, string | null, string | null>;
  secrets_encrypted: string;
  repo_commit_sha: string | null;
  image_version: string | null;
  failure_reason: string | null;
  runtime_url: string | null;
  attempts: Generated<number>;
  claimed_by: string | null;
  lease_expires_at: Date | null;
  build_log: Generated<string>;
  deploy_log: Generated<string>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface DeploymentUploadsTable {
  id: Generated<string>;
  workspace_id: string;
  content: Buffer | null;
  size_bytes: number | null;
  created_at: Generated<Date>;
  uploaded_at: Date | null;
}

export interface DeploymentTables {
  deployments: DeploymentsTable;
  deployment_revisions: DeploymentRevisionsTable;
  deployment_uploads: DeploymentUploadsTable;
}
