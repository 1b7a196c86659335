-- LangGraph clients create a thread before they name its assistant (useStream does): such a thread
-- has no agent until its first run binds one. The hosted form still names the agent at creation.
ALTER TABLE threads ALTER COLUMN agent_id DROP NOT NULL;
