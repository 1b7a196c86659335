-- Per-user dynamic client registration (RFC 7591) for OAuth-backed tool servers: a tool server with
-- `oauth_mode = 'per_user_dynamic_client'` names no shared provider; each principal that asks gets an
-- OAuth provider of its own, registered at the server's authorization server and tied to the server
-- (deleting the server deletes those providers, and with them their sessions and tokens).
ALTER TABLE mcp_servers ADD COLUMN oauth_mode text NOT NULL DEFAULT 'legacy_shared_provider'
  CHECK (oauth_mode IN ('legacy_shared_provider', 'per_user_dynamic_client'));

ALTER TABLE oauth_providers ADD COLUMN is_dynamic_client boolean NOT NULL DEFAULT false;
ALTER TABLE oauth_providers ADD COLUMN dynamic_mcp_server_id uuid REFERENCES mcp_servers (id) ON DELETE CASCADE;
ALTER TABLE oauth_providers ADD COLUMN dynamic_principal text;
ALTER TABLE oauth_providers ADD CONSTRAINT oauth_providers_dynamic_owner
  CHECK ((dynamic_mcp_server_id IS NULL) = (dynamic_principal IS NULL));
-- One registered client per (tool server, principal): the lookup of a run, and what keeps two
-- concurrent registrations of one principal from both being kept.
CREATE UNIQUE INDEX oauth_providers_dynamic ON oauth_providers (dynamic_mcp_server_id, dynamic_principal) WHERE dynamic_mcp_server_id IS NOT NULL;
