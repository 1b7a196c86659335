-- Code-host integrations of a workspace: a GitHub (or GitHub Enterprise) account or app installation,
-- or a directory of bare git repositories on the server. Credentials are sealed by the Cipher.

CREATE TABLE vcshost_integrations (
  id                    uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id          uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  kind                  text NOT NULL CHECK (kind IN ('github', 'git')),
  name                  text NOT NULL,
  base_url              text NOT NULL,
  auth_kind             text CHECK (auth_kind IN ('token', 'app')),
  credentials_encrypted text,
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX vcshost_integrations_workspace ON vcshost_integrations (workspace_id, created_at);
