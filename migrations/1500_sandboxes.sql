-- Sandboxes (issue 15): where agents with a sandbox backend run commands. One row per live sandbox;
-- the sandbox service owns every status write (running → stopped → removed, the row deleted).
-- `scope_key` is `thread:<thread id>` or `agent:<agent id>`: one sandbox per thread or per agent.
-- A thread's sandbox row goes with its thread (the files go at the next sweep, as an orphan).
-- `slot` is unique among live sandboxes: the local driver runs sandbox commands as user base + slot.

CREATE SEQUENCE sandbox_slots;

CREATE TABLE sandboxes (
  id                         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id               uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  agent_id                   uuid NOT NULL,
  thread_id                  uuid REFERENCES threads (id) ON DELETE CASCADE,
  scope                      text NOT NULL,
  scope_key                  text NOT NULL UNIQUE,
  driver                     text NOT NULL,
  slot                       integer NOT NULL UNIQUE,
  status                     text NOT NULL DEFAULT 'running',
  idle_ttl_seconds           integer NOT NULL,
  delete_after_stop_seconds  integer NOT NULL,
  disk_bytes                 bigint,
  commands                   integer NOT NULL DEFAULT 0,
  created_at                 timestamptz NOT NULL DEFAULT now(),
  last_used_at               timestamptz NOT NULL DEFAULT now(),
  stopped_at                 timestamptz
);
CREATE INDEX sandboxes_status ON sandboxes (status, last_used_at);
