-- OAuth providers of a workspace, authorization flows in progress, and the tokens they produce
-- (one set per workspace, principal and provider). Every secret column is sealed by the Cipher.

CREATE TABLE oauth_providers (
  id                         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id               uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  provider_id                text NOT NULL,
  name                       text NOT NULL,
  client_id                  text NOT NULL,
  client_secret_encrypted    text,
  auth_url                   text NOT NULL,
  token_url                  text NOT NULL,
  uses_pkce                  boolean NOT NULL DEFAULT false,
  code_challenge_method      text,
  provider_type              text,
  mcp_server_url             text,
  -- Hangar extension: scopes requested when an authorization starts without any (a tool call's).
  scopes                     text[] NOT NULL DEFAULT '{}',
  token_endpoint_auth_method text NOT NULL DEFAULT 'client_secret_post'
    CHECK (token_endpoint_auth_method IN ('none', 'client_secret_basic', 'client_secret_post')),
  created_at                 timestamptz NOT NULL DEFAULT now(),
  updated_at                 timestamptz NOT NULL DEFAULT now(),
  UNIQUE (workspace_id, provider_id)
);

-- One browser round trip: the state is stored only as a SHA-256 hash (it is a bearer secret
-- until the callback arrives), the PKCE verifier sealed.
CREATE TABLE oauth_sessions (
  id                      uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id            uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  provider_ref            uuid NOT NULL REFERENCES oauth_providers (id) ON DELETE CASCADE,
  principal               text NOT NULL,
  state_hash              bytea NOT NULL UNIQUE,
  code_verifier_encrypted text,
  redirect_uri            text NOT NULL,
  scopes                  text[] NOT NULL DEFAULT '{}',
  status                  text NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'EXCHANGING', 'COMPLETED', 'FAILED')),
  error                   text,
  created_at              timestamptz NOT NULL DEFAULT now(),
  expires_at              timestamptz NOT NULL,
  completed_at            timestamptz
);
CREATE INDEX oauth_sessions_provider ON oauth_sessions (provider_ref);

CREATE TABLE oauth_tokens (
  workspace_id     uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  provider_ref     uuid NOT NULL REFERENCES oauth_providers (id) ON DELETE CASCADE,
  principal        text NOT NULL,
  tokens_encrypted text NOT NULL,
  expires_at       timestamptz,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, provider_ref, principal)
);
