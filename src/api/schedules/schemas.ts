// Wire shapes of schedules and webhook deliveries.
import { z } from '@hono/zod-openapi';
import { MULTITASK_STRATEGIES } from '../../core/runs/service.js';
import type { Schedule, ScheduleTick } from '../../core/schedules/service.js';
import type { WebhookDelivery } from '../../core/webhooks/service.js';
import { presentRun, RunSchema } from '../threads/schemas.js';

const metadata = z.record(z.string(), z.unknown());

/** An http(s) URL that receives a POST when a run ends. */
export const WebhookUrl = z
  .url({ protocol: /^https?$/, message: 'must be an absolute http:// or https:// URL' })
  .max(2048)
  .openapi({ description: 'Receives a signed POST when each run ends (see the Webhooks tag).', example: 'https://example.com/hooks/hangar' });

const Message = z.object({
  role: z.enum(['user', 'assistant', 'system']).openapi({ description: '`user`, `assistant` or `system`.' }),
  content: z.string().min(1, 'must not be empty'),
});

export const ScheduleInputSchema = z
  .object({ messages: z.array(Message).min(1, 'must contain at least one message').max(100) })
  .openapi('ScheduleInput', { description: 'What each run is sent, as in a run body.' });

const common = {
  schedule: z.string().min(1).max(200).openapi({
    description: 'A 5-field cron expression (minute hour day-of-month month day-of-week), or 6 fields with seconds first.',
    example: '0 9 * * 1-5',
  }),
  timezone: z.string().min(1).max(100).optional().openapi({ description: 'IANA time zone the expression is read in; daylight-saving changes follow it. Default `UTC`.', example: 'Europe/Paris' }),
  input: ScheduleInputSchema.optional(),
  messages: z.array(Message).min(1, 'must contain at least one message').max(100).optional().openapi({ description: 'Shorthand for `input.messages`.' }),
  thread: z.string().optional().openapi({ description: '`new` (default): a fresh thread per run. A thread id: every run goes to that thread (of the same agent, or of none yet: the first run binds it).' }),
  multitask_strategy: z.enum(MULTITASK_STRATEGIES).optional().openapi({
    description: 'When a tick finds its thread busy: `reject` (default: the tick is skipped and recorded as `skipped`), `enqueue`, `interrupt` or `rollback`, as for a run.',
  }),
  enabled: z.boolean().optional().openapi({ description: 'Default true. A disabled schedule does not fire; enabling it again fires from the next tick on.' }),
  end_time: z.iso.datetime({ offset: true }).nullable().optional().openapi({ description: 'No tick fires after this instant.' }),
  metadata: metadata.optional(),
  webhook: WebhookUrl.nullable().optional(),
};

export const CreateScheduleRequest = z
  .object({ agent_id: z.uuid({ message: 'must be a UUID' }), ...common })
  .openapi('CreateScheduleRequest');

export const UpdateScheduleRequest = z
  .object({ ...common, schedule: common.schedule.optional() })
  .openapi('UpdateScheduleRequest');

const TickSchema = z
  .object({
    tick_at: z.iso.datetime().openapi({ description: 'The tick this entry is for.' }),
    state: z.enum(['claimed', 'started', 'skipped', 'failed']).openapi({
      description: '`started`: a run started (`run`); `skipped`: the thread was busy, or the tick was missed under the `skip` policy; `failed`: the run could not start (`error`); `claimed`: being started.',
    }),
    catch_up: z.boolean().openapi({ description: 'The tick was taken up later than `HANGAR_SCHEDULE_MISSED_AFTER_MS`: it fell due while no server was running, or its scheduler stopped after claiming it (another took it over after a minute). Its run, if one started, catches up; under the `skip` policy it is `skipped` (`missed_tick`) instead.' }),
    run_id: z.uuid().nullable(),
    thread_id: z.uuid().nullable(),
    run: z.union([RunSchema, z.null()]),
    error: z.object({ error: z.string(), message: z.string() }).nullable(),
  })
  .openapi('ScheduleTick');

export const ScheduleSchema = z
  .object({
    id: z.uuid(),
    agent_id: z.uuid(),
    schedule: z.string(),
    timezone: z.string(),
    input: ScheduleInputSchema,
    thread: z.string().openapi({ description: '`new` or a thread id.' }),
    multitask_strategy: z.enum(MULTITASK_STRATEGIES),
    enabled: z.boolean(),
    end_time: z.iso.datetime().nullable(),
    metadata,
    webhook: z.string().nullable(),
    next_run_at: z.iso.datetime().nullable().openapi({ description: 'When the next tick fires; `null` when disabled or ended.' }),
    // The latest tick and its run (a plain union: describing a nullable registered schema would re-register it as nullable).
    last_run: z.union([TickSchema, z.null()]),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('Schedule');

export const ListSchedulesQuery = z.object({
  agent_id: z.uuid({ message: 'must be a UUID' }).optional(),
  thread_id: z.uuid({ message: 'must be a UUID' }).optional(),
  enabled: z.enum(['true', 'false']).transform((v) => v === 'true').optional(),
  page_size: z.coerce.number().int().min(1).max(100).default(20).openapi({ description: '1 to 100.' }),
  cursor: z.string().regex(/^\d{1,9}$/, 'must be a next_cursor value').optional().openapi({ description: '`next_cursor` of the previous page.' }),
});

export const ListSchedulesResponse = z
  .object({ items: z.array(ScheduleSchema), next_cursor: z.string().nullable() })
  .openapi('ListSchedulesResponse');

export const ScheduleTicksResponse = z.object({ items: z.array(TickSchema), next_cursor: z.string().nullable() }).openapi('ScheduleTicksResponse');

export const WebhookDeliverySchema = z
  .object({
    id: z.uuid(),
    run_id: z.uuid(),
    thread_id: z.uuid(),
    schedule_id: z.uuid().nullable(),
    url: z.string(),
    state: z.enum(['pending', 'delivered', 'failed']).openapi({ description: '`pending` until the run ends and while attempts remain.' }),
    attempts: z.array(
      z.object({
        attempt: z.number().int(),
        at: z.string(),
        status_code: z.number().int().nullable(),
        error: z.string().nullable(),
        duration_ms: z.number().int(),
      }),
    ),
    next_attempt_at: z.iso.datetime().nullable(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('WebhookDelivery');

export const WebhookSecretSchema = z
  .object({
    secret: z.string().openapi({ description: 'Standard Webhooks secret (`whsec_…`): verify `webhook-signature` with it.' }),
    created_at: z.iso.datetime(),
  })
  .openapi('WebhookSecret');

/** The wire form of a tick. */
export function presentTick(t: ScheduleTick): z.infer<typeof TickSchema> {
  return {
    tick_at: t.tickAt.toISOString(),
    state: t.state,
    catch_up: t.catchUp,
    run_id: t.runId,
    thread_id: t.threadId,
    run: t.run ? presentRun(t.run) : null,
    error: t.error,
  };
}

/** The wire form of a schedule. */
export function presentSchedule(s: Schedule): z.infer<typeof ScheduleSchema> {
  return {
    id: s.id,
    agent_id: s.agentId,
    schedule: s.schedule,
    timezone: s.timezone,
    input: s.input,
    thread: s.threadId ?? 'new',
    multitask_strategy: s.multitaskStrategy,
    enabled: s.enabled,
    end_time: s.endTime?.toISOString() ?? null,
    metadata: s.metadata,
    webhook: s.webhook,
    next_run_at: s.nextRunAt?.toISOString() ?? null,
    last_run: s.lastRun ? presentTick(s.lastRun) : null,
    created_at: s.createdAt.toISOString(),
    updated_at: s.updatedAt.toISOString(),
  };
}

/** The wire form of a delivery. */
export function presentDelivery(d: WebhookDelivery): z.infer<typeof WebhookDeliverySchema> {
  return {
    id: d.id,
    run_id: d.runId,
    thread_id: d.threadId,
    schedule_id: d.scheduleId,
    url: d.url,
    state: d.state,
    attempts: d.attempts,
    next_attempt_at: d.nextAttemptAt?.toISOString() ?? null,
    created_at: d.createdAt.toISOString(),
    updated_at: d.updatedAt.toISOString(),
  };
}
