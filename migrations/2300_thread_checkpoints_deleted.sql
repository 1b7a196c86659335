-- A thread's LangGraph checkpoints go with the thread, in the statement that deletes it. They were
-- deleted by a second statement afterwards: in between, the thread was already gone (a 404) while its
-- state was still there, so a thread made again with the same id at once read the old state; and a
-- process that stopped in between left them behind for good.
-- LangGraph's tables are made by its saver when the runtime first opens them (src/runtime/storage.ts),
-- after this migration on a new database: until they exist there is nothing to delete.
CREATE FUNCTION hangar_delete_thread_checkpoints() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  ids text[];
BEGIN
  IF to_regclass('langgraph.checkpoints') IS NULL THEN
    RETURN NULL;
  END IF;
  -- An array, not a join: each table is looked up by its primary key's first column whatever the
  -- planner would guess of the transition table.
  ids := ARRAY(SELECT id::text FROM gone);
  DELETE FROM langgraph.checkpoint_writes WHERE thread_id = ANY (ids);
  DELETE FROM langgraph.checkpoint_blobs WHERE thread_id = ANY (ids);
  DELETE FROM langgraph.checkpoints WHERE thread_id = ANY (ids);
  RETURN NULL;
END
$$;

CREATE TRIGGER threads_deleted_checkpoints
  AFTER DELETE ON threads
  REFERENCING OLD TABLE AS gone
  FOR EACH STATEMENT EXECUTE FUNCTION hangar_delete_thread_checkpoints();
