-- Which trace belongs to which agent run: the root run id of each run's trace, recorded when the
-- trace starts. No foreign keys: traces and runs have their own retention.
CREATE TABLE tracing_run_links (
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  run_id       uuid NOT NULL,
  thread_id    uuid NOT NULL,
  root_run_id  uuid NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, run_id)
);
CREATE INDEX tracing_run_links_created ON tracing_run_links (created_at);
