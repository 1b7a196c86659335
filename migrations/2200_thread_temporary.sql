-- Threads made for a stateless run (LangGraph's `POST /runs/stream`, `/runs/wait`, `/runs` without a
-- thread, `on_completion: "delete"`, the default): deleted once their run has ended, by the request
-- that followed the run, else by the temporary thread sweeper (a background run, a client gone, a
-- process that crashed), which looks for ended ones by `updated_at`.
ALTER TABLE threads ADD COLUMN temporary boolean NOT NULL DEFAULT false;
CREATE INDEX threads_temporary ON threads (updated_at) WHERE temporary;
