// Row types of schedules and webhooks (migrations/0760_schedules.sql).
import type { ColumnType, Generated } from 'kysely';

type JsonObject<T> = ColumnType<T, string, string>;

export interface SchedulesTable {
  id: Generated<string>;
  workspace_id: string;
  agent_id: string;
  schedule: string;
  timezone: Generated<string>;
  input: JsonObject<Record<string, unknown>>;
  thread_id: string | null;
  multitask_strategy: Generated<string>;
  enabled: Generated<boolean>;
  end_time: Date | null;
  metadata: ColumnType<Record<string, unknown>, string | undefined, string>;
  webhook: string | null;
  principal: string;
  next_run_at: Date | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface ScheduleTicksTable {
  id: Generated<string>;
  schedule_id: string;
  workspace_id: string;
  tick_at: Date;
  state: Generated<'claimed' | 'started' | 'skipped' | 'failed'>;
  catch_up: Generated<boolean>;
  run_id: string | null;
  thread_id: string | null;
  error: ColumnType<{ error: string; message: string } | null, string | null | undefined, string | null>;
  created_at: Generated<Date>;
}

export interface WebhookSecretsTable {
  workspace_id: string;
  secret: string;
  created_at: Generated<Date>;
}

/** One delivery attempt of a webhook. */
export interface WebhookAttempt {
  attempt: number;
  at: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

export interface WebhookDeliveriesTable {
  id: Generated<string>;
  workspace_id: string;
  run_id: string;
  thread_id: string;
  url: string;
  schedule_id: string | null;
  state: Generated<'pending' | 'delivered' | 'failed'>;
  attempts: ColumnType<WebhookAttempt[], string | undefined, string>;
  next_attempt_at: Generated<Date>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface ScheduleTables {
  schedules: SchedulesTable;
  schedule_ticks: ScheduleTicksTable;
  webhook_secrets: WebhookSecretsTable;
  webhook_deliveries: WebhookDeliveriesTable;
}
