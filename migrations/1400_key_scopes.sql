-- Issue 14: least privilege for keys minted for deployed applications. A key with a `traces_project`
-- may only send traces (LangSmith-compatible ingestion) into that one tracing project.
ALTER TABLE api_keys ADD COLUMN traces_project text;
