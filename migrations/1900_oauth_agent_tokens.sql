-- Tokens scoped to one agent: an authorization session started with `agent_id` stores its tokens for
-- (workspace, principal, provider, agent); runs of that agent use them before the principal's default
-- token (agent_id NULL). Hard deletes cascade; deleting an agent (a soft delete) removes its tokens and
-- sessions in the same statement group (src/core/agents/service.ts).
ALTER TABLE oauth_tokens ADD COLUMN agent_id uuid REFERENCES agents (id) ON DELETE CASCADE;
ALTER TABLE oauth_tokens DROP CONSTRAINT oauth_tokens_pkey;
-- PostgreSQL 14 has no NULLS NOT DISTINCT: one unique index per kind of token.
CREATE UNIQUE INDEX oauth_tokens_default ON oauth_tokens (workspace_id, provider_ref, principal) WHERE agent_id IS NULL;
CREATE UNIQUE INDEX oauth_tokens_agent ON oauth_tokens (workspace_id, provider_ref, principal, agent_id) WHERE agent_id IS NOT NULL;
CREATE INDEX oauth_tokens_agent_id ON oauth_tokens (agent_id) WHERE agent_id IS NOT NULL;

ALTER TABLE oauth_sessions ADD COLUMN agent_id uuid REFERENCES agents (id) ON DELETE CASCADE;
CREATE INDEX oauth_sessions_agent_id ON oauth_sessions (agent_id) WHERE agent_id IS NOT NULL;
