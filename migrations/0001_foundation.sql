-- Workspaces, API keys and tool servers: the ground every other table builds on.

CREATE TABLE workspaces (
  id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name           text NOT NULL UNIQUE,
  preview_access boolean NOT NULL DEFAULT true,
  is_default     boolean NOT NULL DEFAULT false,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX workspaces_one_default ON workspaces (is_default) WHERE is_default;

-- Keys are stored only as SHA-256 hashes: they are 256-bit random strings (or an operator's
-- bootstrap key), so a fast hash is enough and keeps authentication off the request's hot path.
CREATE TABLE api_keys (
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  role         text NOT NULL CHECK (role IN ('admin', 'member', 'viewer')),
  key_hash     bytea NOT NULL UNIQUE,
  prefix       text NOT NULL,
  principal    text NOT NULL,
  description  text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  revoked_at   timestamptz
);
CREATE INDEX api_keys_workspace ON api_keys (workspace_id);

CREATE TABLE mcp_servers (
  id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id       uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  name               text NOT NULL,
  url                text NOT NULL,
  headers_encrypted  text NOT NULL,
  auth_type          text NOT NULL DEFAULT 'headers' CHECK (auth_type IN ('headers', 'oauth')),
  oauth_provider_id  uuid,
  vendor_id          text,
  external_system_id text,
  created_at         timestamptz NOT NULL DEFAULT now(),
  updated_at         timestamptz NOT NULL DEFAULT now(),
  UNIQUE (workspace_id, url)
);
