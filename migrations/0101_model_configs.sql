-- Saved model configurations: a workspace-level name for a model id plus parameters and, optionally,
-- a provider API key (sealed like tool server headers). An agent model_id without a colon names one.

CREATE TABLE model_configs (
  id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id      uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  name              text NOT NULL,
  model_id          text NOT NULL,
  parameters        jsonb NOT NULL DEFAULT '{}',
  api_key_encrypted text,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  UNIQUE (workspace_id, name)
);
