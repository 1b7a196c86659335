-- Deployments (the control plane of /v2/deployments), their revisions, and uploaded source tarballs.
-- A revision is the unit the reconciler drives; `claimed_by` + `lease_expires_at` make exactly one
-- process work on it at a time, and an expired lease lets another process resume it.

CREATE TABLE deployments (
  id                     uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id           uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  name                   text NOT NULL,
  source                 text NOT NULL,
  driver                 text NOT NULL,
  source_config          jsonb NOT NULL,
  secret_references      jsonb,
  deployment_type        text NOT NULL DEFAULT 'dev',
  tag_value_ids          uuid[] NOT NULL DEFAULT '{}',
  status                 text NOT NULL DEFAULT 'UNUSED',
  remote_reconciled      boolean NOT NULL DEFAULT false,
  image_version          text,
  latest_revision_id     uuid,
  active_revision_id     uuid,
  revision_count         integer NOT NULL DEFAULT 0,
  -- The driver's teardown lease while AWAITING_DELETE.
  claimed_by             text,
  lease_expires_at       timestamptz,
  created_at             timestamptz NOT NULL DEFAULT now(),
  updated_at             timestamptz NOT NULL DEFAULT now(),
  UNIQUE (workspace_id, name)
);
CREATE INDEX deployments_workspace_created ON deployments (workspace_id, created_at DESC, id DESC);

CREATE TABLE deployment_revisions (
  id                     uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  deployment_id          uuid NOT NULL REFERENCES deployments (id) ON DELETE CASCADE,
  workspace_id           uuid NOT NULL,
  seq                    integer NOT NULL,
  status                 text NOT NULL DEFAULT 'CREATING',
  source_revision_config jsonb NOT NULL,
  resource_spec          jsonb,
  secrets_encrypted      text NOT NULL,
  repo_commit_sha        text,
  image_version          text,
  failure_reason         text,
  -- Where the running revision answers (local driver: a loopback URL), for the stable proxy URL.
  runtime_url            text,
  attempts               integer NOT NULL DEFAULT 0,
  claimed_by             text,
  lease_expires_at       timestamptz,
  build_log              text NOT NULL DEFAULT '',
  deploy_log             text NOT NULL DEFAULT '',
  created_at             timestamptz NOT NULL DEFAULT now(),
  updated_at             timestamptz NOT NULL DEFAULT now(),
  UNIQUE (deployment_id, seq)
);
CREATE INDEX deployment_revisions_deployment ON deployment_revisions (deployment_id, seq DESC);
CREATE INDEX deployment_revisions_pending ON deployment_revisions (status, lease_expires_at)
  WHERE status NOT IN ('DEPLOYED', 'CREATE_FAILED', 'BUILD_FAILED', 'DEPLOY_FAILED', 'SKIPPED', 'INTERRUPTED');

ALTER TABLE deployments ADD FOREIGN KEY (latest_revision_id) REFERENCES deployment_revisions (id) ON DELETE SET NULL;
ALTER TABLE deployments ADD FOREIGN KEY (active_revision_id) REFERENCES deployment_revisions (id) ON DELETE SET NULL;

-- Source tarballs uploaded for `internal_source` deployments; the bytes live in PostgreSQL so every
-- replica can build from them.
CREATE TABLE deployment_uploads (
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  content      bytea,
  size_bytes   integer,
  created_at   timestamptz NOT NULL DEFAULT now(),
  uploaded_at  timestamptz
);
