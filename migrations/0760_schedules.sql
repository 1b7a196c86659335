-- Issue 16: schedules (cron prompts) and run webhooks.

-- A schedule starts a run of its agent at every tick of a cron expression in a time zone.
CREATE TABLE schedules (
  id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id       uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  -- No foreign key: a deleted agent's schedule stays readable (it is disabled at its next tick).
  agent_id           uuid NOT NULL,
  schedule           text NOT NULL,
  timezone           text NOT NULL DEFAULT 'UTC',
  -- The run body each tick sends: {messages, stream_mode?, user_timezone?}.
  input              jsonb NOT NULL,
  -- NULL: a fresh thread per run; otherwise every run goes to this thread.
  thread_id          uuid,
  multitask_strategy text NOT NULL DEFAULT 'reject',
  enabled            boolean NOT NULL DEFAULT true,
  end_time           timestamptz,
  metadata           jsonb NOT NULL DEFAULT '{}',
  webhook            text,
  -- The principal of the key that created the schedule: its runs act for it.
  principal          text NOT NULL,
  -- When the next tick is due; NULL once the schedule has ended (end_time passed).
  next_run_at        timestamptz,
  created_at         timestamptz NOT NULL DEFAULT now(),
  updated_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX schedules_workspace ON schedules (workspace_id, created_at DESC);
-- The scheduler's question: which enabled schedules are due.
CREATE INDEX schedules_due ON schedules (next_run_at) WHERE enabled AND next_run_at IS NOT NULL;

-- One row per tick a schedule fired (or skipped): the unique key makes a tick fire at most once.
CREATE TABLE schedule_ticks (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  schedule_id uuid NOT NULL REFERENCES schedules (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL,
  tick_at     timestamptz NOT NULL,
  -- claimed: taken by a scheduler, run not started yet; started: run_id set; skipped: the thread was
  -- busy (multitask_strategy reject); failed: the run could not start (error says why).
  state       text NOT NULL DEFAULT 'claimed' CHECK (state IN ('claimed', 'started', 'skipped', 'failed')),
  catch_up    boolean NOT NULL DEFAULT false,
  run_id      uuid,
  thread_id   uuid,
  error       jsonb,
  created_at  timestamptz NOT NULL DEFAULT now(),
  UNIQUE (schedule_id, tick_at)
);
CREATE INDEX schedule_ticks_schedule ON schedule_ticks (schedule_id, tick_at DESC);
CREATE INDEX schedule_ticks_claimed ON schedule_ticks (created_at) WHERE state = 'claimed';

-- The signing secret of each workspace's webhooks (encrypted like every other secret).
CREATE TABLE webhook_secrets (
  workspace_id uuid PRIMARY KEY REFERENCES workspaces (id) ON DELETE CASCADE,
  secret       text NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now()
);

-- The outbox of run webhooks: one row per run and URL, delivered once the run has ended.
CREATE TABLE webhook_deliveries (
  id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id    uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  run_id          uuid NOT NULL,
  thread_id       uuid NOT NULL,
  url             text NOT NULL,
  schedule_id     uuid,
  -- pending: waiting for the run to end or for the next attempt; delivered; failed (attempts used up).
  state           text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
  -- [{attempt, at, status_code, error, duration_ms}]
  attempts        jsonb NOT NULL DEFAULT '[]',
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_deliveries_run ON webhook_deliveries (run_id);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';
