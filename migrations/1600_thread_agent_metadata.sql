-- Threads bound to an agent carry `assistant_id` and `graph_id` in their metadata, as LangGraph
-- servers write them when a run is created on a thread (src/core/threads/bound.ts); this marks the
-- threads bound before that.
UPDATE threads
SET metadata = metadata || jsonb_build_object('assistant_id', agent_id::text, 'graph_id', agent_id::text)
WHERE agent_id IS NOT NULL AND NOT (metadata ? 'assistant_id');
