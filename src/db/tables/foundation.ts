// Row types of the foundation tables (migrations/0001_foundation.sql).
import type { Generated } from 'kysely';

export interface WorkspacesTable {
  id: Generated<string>;
  name: string;
  preview_access: Generated<boolean>;
  is_default: Generated<boolean>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface ApiKeysTable {
  id: Generated<string>;
  workspace_id: string;
  role: 'admin' | 'member' | 'viewer';
  key_hash: Buffer;
  prefix: string;
  principal: string;
  description: string | null;
  created_at: Generated<Date>;
  revoked_at: Date | null;
  /** Set on keys of deployed applications: they may only send traces into this project (issue 14). */
  traces_project: Generated<string | null>;
}

export interface McpServersTable {
  id: Generated<string>;
  workspace_id: string;
  name: string;
  url: string;
  headers_encrypted: string;
  auth_type: Generated<'headers' | 'oauth'>;
  oauth_provider_id: string | null;
  /** migrations/2100_oauth_dynamic_clients.sql. */
  oauth_mode: Generated<'legacy_shared_provider' | 'per_user_dynamic_client'>;
  vendor_id: string | null;
  external_system_id: string | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface FoundationTables {
  workspaces: WorkspacesTable;
  api_keys: ApiKeysTable;
  mcp_servers: McpServersTable;
}
