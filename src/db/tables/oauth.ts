// Row types of the OAuth tables (migrations/0500_oauth.sql).
import type { Generated } from 'kysely';

/** How a client authenticates at the token endpoint (RFC 8414 names). */
export type TokenEndpointAuthMethod = 'none' | 'client_secret_basic' | 'client_secret_post';

export interface OAuthProvidersTable {
  id: Generated<string>;
  workspace_id: string;
  provider_id: string;
  name: string;
  client_id: string;
  client_secret_encrypted: string | null;
  auth_url: string;
  token_url: string;
  uses_pkce: Generated<boolean>;
  code_challenge_method: string | null;
  provider_type: string | null;
  mcp_server_url: string | null;
  scopes: Generated<string[]>;
  token_endpoint_auth_method: Generated<TokenEndpointAuthMethod>;
  /** Registered by Hangar (RFC 7591) for one principal of a tool server (migrations/2100_oauth_dynamic_clients.sql). */
  is_dynamic_client: Generated<boolean>;
  dynamic_mcp_server_id: string | null;
  dynamic_principal: string | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface OAuthSessionsTable {
  id: Generated<string>;
  workspace_id: string;
  provider_ref: string;
  principal: string;
  state_hash: Buffer;
  code_verifier_encrypted: string | null;
  redirect_uri: string;
  scopes: Generated<string[]>;
  status: Generated<'PENDING' | 'EXCHANGING' | 'COMPLETED' | 'FAILED'>;
  /** The agent the resulting tokens are scoped to (migrations/1900_oauth_agent_tokens.sql); null: the default token. */
  agent_id: string | null;
  error: string | null;
  created_at: Generated<Date>;
  expires_at: Date;
  completed_at: Date | null;
}

export interface OAuthTokensTable {
  workspace_id: string;
  provider_ref: string;
  principal: string;
  /** The agent these tokens are scoped to; null: the principal's default token for the provider. */
  agent_id: string | null;
  tokens_encrypted: string;
  expires_at: Date | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface OAuthTables {
  oauth_providers: OAuthProvidersTable;
  oauth_sessions: OAuthSessionsTable;
  oauth_tokens: OAuthTokensTable;
}
