-- Issue 5: queued runs (multitask_strategy "enqueue") and usage reports.
-- A thread may now hold several pending runs (queued behind its active one); at most one runs at a
-- time, still enforced by the database so two workers can never execute one thread at once.
DROP INDEX runs_one_active_per_thread;
CREATE UNIQUE INDEX runs_one_running_per_thread ON runs (thread_id) WHERE status = 'running';
CREATE INDEX runs_pending_thread ON runs (thread_id, created_at) WHERE status = 'pending';
-- GET /v1/deepagents/usage reads runs by workspace and time.
CREATE INDEX runs_workspace_created ON runs (workspace_id, created_at);
-- Run events are kept as the JSON text that goes on the wire: written and replayed without a jsonb
-- conversion either way (the log is only ever read whole, never queried inside).
ALTER TABLE run_events ALTER COLUMN data TYPE text USING data::text;
