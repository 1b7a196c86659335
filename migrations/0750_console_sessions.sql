-- Console sign-in sessions: a browser's HttpOnly cookie stands for one API key. Only the SHA-256
-- hash of the cookie's token is stored; revoking the key ends its sessions (the join below the
-- authenticate query requires an unrevoked key), and deleting the key row deletes them.
CREATE TABLE console_sessions (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  token_hash  bytea NOT NULL UNIQUE,
  key_id      uuid NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz NOT NULL
);
CREATE INDEX console_sessions_expires_at ON console_sessions (expires_at);
