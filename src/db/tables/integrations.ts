// Row types of the code-host integration table (migrations/0501_vcshost_integrations.sql).
import type { Generated } from 'kysely';

export interface VcshostIntegrationsTable {
  id: Generated<string>;
  workspace_id: string;
  kind: 'github' | 'git';
  name: string;
  base_url: string;
  auth_kind: 'token' | 'app' | null;
  credentials_encrypted: string | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface IntegrationTables {
  vcshost_integrations: VcshostIntegrationsTable;
}
