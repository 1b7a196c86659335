-- The trace store: tracing projects and runs in the LangSmith run-tree model.

CREATE TABLE tracing_projects (
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  name         text NOT NULL,
  description  text,
  is_default   boolean NOT NULL DEFAULT false,
  created_at   timestamptz NOT NULL DEFAULT now(),
  UNIQUE (workspace_id, name)
);
CREATE UNIQUE INDEX tracing_projects_one_default ON tracing_projects (workspace_id) WHERE is_default;

-- Run ids come from clients (the SDK makes them), so the key includes the workspace: a run id sent
-- by one workspace can never touch another workspace's run.
CREATE TABLE tracing_runs (
  workspace_id      uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  id                uuid NOT NULL,
  project_id        uuid NOT NULL REFERENCES tracing_projects (id) ON DELETE CASCADE,
  trace_id          uuid NOT NULL,
  parent_run_id     uuid,
  dotted_order      text NOT NULL,
  name              text NOT NULL,
  run_type          text NOT NULL,
  inputs            jsonb,
  outputs           jsonb,
  error             text,
  start_time        timestamptz NOT NULL,
  end_time          timestamptz,
  prompt_tokens     integer,
  completion_tokens integer,
  total_tokens      integer,
  tags              text[] NOT NULL DEFAULT '{}',
  extra             jsonb NOT NULL DEFAULT '{}',
  events            jsonb,
  status            text GENERATED ALWAYS AS (
                      CASE WHEN error IS NOT NULL THEN 'error' WHEN end_time IS NOT NULL THEN 'success' ELSE 'pending' END
                    ) STORED,
  latency_ms        double precision GENERATED ALWAYS AS (extract(epoch FROM end_time - start_time) * 1000) STORED,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, id)
);
-- Root runs of a project, newest first (the runs list and its cursor).
CREATE INDEX tracing_runs_roots ON tracing_runs (project_id, start_time DESC, id DESC) WHERE parent_run_id IS NULL;
-- A whole trace at once (run detail, token totals of a trace).
CREATE INDEX tracing_runs_trace ON tracing_runs (workspace_id, trace_id, dotted_order);
-- The retention sweeper.
CREATE INDEX tracing_runs_created ON tracing_runs (created_at);
