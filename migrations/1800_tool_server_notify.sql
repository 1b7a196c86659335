-- Every change of a tool server's URL or headers is announced on the channel `hangar_tool_servers`
-- (payload: the workspace id). NOTIFY is transactional: other processes hear of the change once it is
-- committed, whoever wrote it (the API, a cascade from a deleted workspace, an operator's SQL). Trace
-- redaction caches each workspace's header values and drops them on this notification
-- (src/core/tracing/service.ts), instead of reading a digest of the records before every trace write.
CREATE FUNCTION hangar_notify_tool_servers() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    PERFORM pg_notify('hangar_tool_servers', OLD.workspace_id::text);
  ELSE
    PERFORM pg_notify('hangar_tool_servers', NEW.workspace_id::text);
    IF TG_OP = 'UPDATE' AND OLD.workspace_id IS DISTINCT FROM NEW.workspace_id THEN
      PERFORM pg_notify('hangar_tool_servers', OLD.workspace_id::text);
    END IF;
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER mcp_servers_notify
  AFTER INSERT OR DELETE OR UPDATE OF url, headers_encrypted, workspace_id ON mcp_servers
  FOR EACH ROW EXECUTE FUNCTION hangar_notify_tool_servers();
