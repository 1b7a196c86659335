-- A thread's LangGraph checkpoints go with the thread, in the statement that deletes it. They were
-- deleted by a second statement afterwards: in between, the thread was already gone (a 404) while its
-- state was still there, so a thread made again with the same id at once read the old state; and a
-- process that stopped in between left them behind for good.
-- LangGraph's tables are made by its saver when the runtime first opens them (src/runtime/storage.ts),
-- after this migration on a new database: until they exist there is nothing to delete.
CREATE FUNCTION hangar_delete_thread_checkpoints() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF to_regclass('langgraph.checkpoints') IS NULL THEN
    RETURN NULL;
  END IF;
  DELETE FROM langgraph.checkpoint_writes w USING gone g WHERE w.thread_id = g.id::text;
  DELETE FROM langgraph.checkpoint_blobs b USING gone g WHERE b.thread_id = g.id::text;
  DELETE FROM langgraph.checkpoints c USING gone g WHERE c.thread_id = g.id::text;
  RETURN NULL;
END
$$;

CREATE TRIGGER threads_deleted_checkpoints
  AFTER DELETE ON threads
  REFERENCING OLD TABLE AS gone
  FOR EACH STATEMENT EXECUTE FUNCTION hangar_delete_thread_checkpoints();
