-- A lease per running sandbox command, so that every process sees what runs in a sandbox, whichever
-- process runs it. The process that runs a command holds a row here from before its sandbox is made
-- ready until the command has ended, renewing `expires_at` while it runs (a process that dies stops
-- renewing: its rows count for nothing once expired, and the sweep deletes them).
--
-- - The sweepers (idle stop, expiry, the sandbox of a deleted agent, orphans) leave alone a sandbox
--   with a live lease: its removal waits until its commands have ended.
-- - A sandbox removed on purpose (`DELETE …/sandbox`, its workspace deleted) while commands run in it:
--   deleting its row announces the id on the channel `hangar_sandboxes`; each process stops its own
--   commands in that sandbox at once (and at its next renewal, should the notification be lost), and
--   the last one to end removes the sandbox's files or pod.
--
-- No foreign key to `sandboxes`: a lease outlives its sandbox's row for the moments its command takes
-- to stop, which is what says the files are still in use.

CREATE TABLE sandbox_commands (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  sandbox_id  uuid NOT NULL,
  -- Which process runs the command (for operators reading the table).
  holder      text NOT NULL,
  started_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz NOT NULL
);
CREATE INDEX sandbox_commands_sandbox ON sandbox_commands (sandbox_id, expires_at);

CREATE FUNCTION hangar_notify_sandbox_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM sandbox_commands WHERE sandbox_id = OLD.id) THEN
    PERFORM pg_notify('hangar_sandboxes', OLD.id::text);
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER sandboxes_removed_notify
  AFTER DELETE ON sandboxes
  FOR EACH ROW EXECUTE FUNCTION hangar_notify_sandbox_removed();
