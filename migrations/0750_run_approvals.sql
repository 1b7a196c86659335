-- Issue 13: human approvals as records. A resume of a pending interrupt is recorded with the run it
-- started, keyed by (thread, interrupt): the key makes a second application of one approval
-- impossible in the database, and a client retrying a resume it already sent gets the run that
-- resume started instead of a second one.
CREATE TABLE run_approvals (
  thread_id    uuid NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
  -- The interrupt answered (LangGraph's interrupt id, or the checkpoint of the pause).
  interrupt_id text NOT NULL,
  run_id       uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  -- The resume as sent on the wire (decisions), to recognise a retry.
  resume       jsonb NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (thread_id, interrupt_id)
);
CREATE INDEX run_approvals_run ON run_approvals (run_id);
