-- Threads, runs and each run's event log. LangGraph's own checkpoint and store tables live in the
-- `langgraph` schema, created by its libraries at start-up.

CREATE TABLE threads (
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  -- No foreign key: an agent's deletion leaves its threads queryable (SPEC lifecycle table).
  agent_id     uuid NOT NULL,
  status       text NOT NULL DEFAULT 'idle' CHECK (status IN ('idle', 'busy', 'interrupted', 'error')),
  metadata     jsonb NOT NULL DEFAULT '{}',
  -- The principal of the key that created the thread (per-principal memories).
  principal    text NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX threads_workspace_agent ON threads (workspace_id, agent_id, created_at DESC);
CREATE INDEX threads_metadata ON threads USING gin (metadata jsonb_path_ops);

CREATE TABLE runs (
  id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id     uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  thread_id        uuid NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
  agent_id         uuid NOT NULL,
  -- The agent's commit when the run was accepted: the tree the run sees.
  revision         text NOT NULL,
  status           text NOT NULL DEFAULT 'pending'
                   CHECK (status IN ('pending', 'running', 'success', 'error', 'interrupted', 'timeout')),
  -- The validated run request (messages, stream_mode, stream_subgraphs, user_timezone, …).
  input            jsonb NOT NULL,
  metadata         jsonb NOT NULL DEFAULT '{}',
  principal        text NOT NULL,
  attempt          integer NOT NULL DEFAULT 0,
  -- The worker holding the run and until when; a worker renews its lease while it runs.
  lease_owner      text,
  lease_expires_at timestamptz,
  error            jsonb,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  started_at       timestamptz,
  ended_at         timestamptz
);
CREATE INDEX runs_thread ON runs (thread_id, created_at DESC);
-- The queue: pending runs in arrival order.
CREATE INDEX runs_pending ON runs (created_at) WHERE status = 'pending';
CREATE INDEX runs_leased ON runs (lease_expires_at) WHERE status = 'running';
-- One active run per thread, enforced by the database so concurrent starts cannot both win.
CREATE UNIQUE INDEX runs_one_active_per_thread ON runs (thread_id) WHERE status IN ('pending', 'running');

-- Every event a run emitted, in order: what a client replays with Last-Event-ID.
CREATE TABLE run_events (
  run_id     uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  seq        bigint NOT NULL,
  event      text NOT NULL,
  data       jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (run_id, seq)
);
