-- Runs cancelled while they executed keep their worker's lease until that worker has stopped them
-- (src/core/runs/lifecycle.ts, `stopping`); starts and claims look for such a run on the thread.
-- Only runs holding a lease are indexed: running ones, and those being stopped.
CREATE INDEX runs_holding_lease ON runs (thread_id) WHERE lease_owner IS NOT NULL;
