-- Agents as git repositories. Objects are content-addressed and shared by every agent; an agent row
-- points at its head commit, and agent_revisions indexes the (linear) history for paging.

CREATE TABLE git_objects (
  oid   text PRIMARY KEY,                      -- 40 hex digits: SHA-1 of "<type> <size>\0<body>"
  type  text NOT NULL CHECK (type IN ('blob', 'tree', 'commit')),
  body  bytea NOT NULL
);

CREATE TABLE agents (
  id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id   uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  owner_id       uuid NOT NULL,                -- the API key that created the agent
  -- Copies of agent.json at the head commit, for listing, filtering and sorting without reading trees.
  name           text NOT NULL,
  description    text NOT NULL DEFAULT '',
  runtime        jsonb NOT NULL,
  extras         jsonb NOT NULL DEFAULT '{}',
  backend        jsonb,
  permissions    jsonb,
  head           text NOT NULL REFERENCES git_objects (oid),
  revision_count integer NOT NULL,
  created_at     timestamptz NOT NULL,
  updated_at     timestamptz NOT NULL,
  -- Deleted agents keep their row (threads still name them) but answer 404 everywhere.
  deleted_at     timestamptz
);
CREATE INDEX agents_workspace_updated ON agents (workspace_id, updated_at, id) WHERE deleted_at IS NULL;
CREATE INDEX agents_workspace_created ON agents (workspace_id, created_at, id) WHERE deleted_at IS NULL;

CREATE TABLE agent_revisions (
  agent_id      uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
  seq           integer NOT NULL,              -- 1 for the create commit, then +1 per update
  commit_oid    text NOT NULL REFERENCES git_objects (oid),
  parent_oid    text,
  message       text NOT NULL,
  changed_paths text[] NOT NULL,
  created_at    timestamptz NOT NULL,
  PRIMARY KEY (agent_id, seq),
  UNIQUE (agent_id, commit_oid)
);
