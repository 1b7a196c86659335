// /v1/deepagents/schedules: agent runs on a cron schedule; /v1/deepagents/webhooks: the signing secret
// of run webhooks; and the webhook delivery log of a run.
import { createRoute, z } from '@hono/zod-openapi';
import { invalidField } from '../../core/errors.js';
import type { ScheduleInput } from '../../core/schedules/service.js';
import type { AppDeps } from '../../http/deps.js';
import { apiKeySecurity, errorResponses, jsonBody, jsonResponse, uuidParam } from '../../http/openapi.js';
import { newRouter } from '../../http/router.js';
import {
  CreateScheduleRequest,
  ListSchedulesQuery,
  ListSchedulesResponse,
  presentDelivery,
  presentSchedule,
  presentTick,
  ScheduleSchema,
  ScheduleTicksResponse,
  UpdateScheduleRequest,
  WebhookDeliverySchema,
  WebhookSecretSchema,
} from './schemas.js';

const BASE = '/v1/deepagents/schedules';
const tags = ['Schedules'];
const params = z.object({ schedule_id: uuidParam('schedule_id', 'Schedule id.') });

const create = createRoute({
  method: 'post',
  path: BASE,
  tags,
  summary: 'Create a schedule',
  description:
    'Starts a run of the agent at every tick of `schedule` in `timezone`, each on a fresh thread (`thread: "new"`) or on one thread. ' +
    'Messages go in `input.messages` (or top-level `messages`). Ticks missed while no server ran: one catch-up run, then on schedule (`HANGAR_SCHEDULE_MISSED_TICKS`).',
  security: apiKeySecurity,
  request: { body: jsonBody(CreateScheduleRequest) },
  responses: { 201: jsonResponse(ScheduleSchema, 'Created.'), ...errorResponses('deepagents', [400, 404, 413, 415, 422]) },
});

const list = createRoute({
  method: 'get',
  path: BASE,
  tags,
  summary: 'List schedules',
  description: 'Newest first, filtered by agent, thread or `enabled`. `{items, next_cursor}`.',
  security: apiKeySecurity,
  request: { query: ListSchedulesQuery },
  responses: { 200: jsonResponse(ListSchedulesResponse, 'A page of schedules.'), ...errorResponses('deepagents', [422]) },
});

const get = createRoute({
  method: 'get',
  path: `${BASE}/{schedule_id}`,
  tags,
  summary: 'Get a schedule',
  security: apiKeySecurity,
  request: { params },
  responses: { 200: jsonResponse(ScheduleSchema, 'The schedule.'), ...errorResponses('deepagents', [404, 422]) },
});

const update = createRoute({
  method: 'patch',
  path: `${BASE}/{schedule_id}`,
  tags,
  summary: 'Change a schedule',
  description:
    'Only the fields sent change. A new expression, zone or end time, or `enabled`, recomputes `next_run_at` from now. `enabled: false` stops it firing. ' +
    'With `If-Match: "<updated_at>"` (the schedule’s `updated_at` as read) the change is made only if the schedule has not changed since (else 412, `schedule_changed`, and nothing is written).',
  security: apiKeySecurity,
  request: {
    params,
    headers: z.object({
      'if-match': z.string().optional().openapi({ description: 'The `updated_at` the change was computed from (optionally quoted as an entity tag); `*` matches any.' }),
    }),
    body: jsonBody(UpdateScheduleRequest),
  },
  responses: { 200: jsonResponse(ScheduleSchema, 'The changed schedule.'), ...errorResponses('deepagents', [400, 404, 412, 413, 415, 422]) },
});

const remove = createRoute({
  method: 'delete',
  path: `${BASE}/{schedule_id}`,
  tags,
  summary: 'Delete a schedule',
  description: 'It fires no more; the threads and runs it started stay. An unknown id is a 404.',
  security: apiKeySecurity,
  request: { params },
  responses: { 204: { description: 'Deleted.' }, ...errorResponses('deepagents', [404, 422]) },
});

const ticks = createRoute({
  method: 'get',
  path: `${BASE}/{schedule_id}/runs`,
  tags,
  summary: 'List the runs a schedule started',
  description: 'One entry per tick, newest first: the run it started, or why it started none (`skipped`, `failed`).',
  security: apiKeySecurity,
  request: {
    params,
    query: z.object({
      page_size: z.coerce.number().int().min(1).max(100).default(20),
      cursor: z.string().regex(/^\d{1,9}$/, 'must be a next_cursor value').optional(),
    }),
  },
  responses: { 200: jsonResponse(ScheduleTicksResponse, 'Ticks and their runs.'), ...errorResponses('deepagents', [404, 422]) },
});

const deliveries = createRoute({
  method: 'get',
  path: '/v1/deepagents/threads/{thread_id}/runs/{run_id}/webhooks',
  tags: ['Webhooks'],
  summary: 'List the webhook deliveries of a run',
  description: 'Each URL the run notifies, with every attempt (status code or error, duration) and its state.',
  security: apiKeySecurity,
  request: { params: z.object({ thread_id: uuidParam('thread_id', 'Thread id.'), run_id: uuidParam('run_id', 'Run id.') }) },
  responses: { 200: jsonResponse(z.array(WebhookDeliverySchema), 'Deliveries, oldest first.'), ...errorResponses('deepagents', [404, 422]) },
});

const secret = createRoute({
  method: 'get',
  path: '/v1/deepagents/webhooks/secret',
  tags: ['Webhooks'],
  summary: 'Get the webhook signing secret',
  description:
    'The workspace’s Standard Webhooks secret (created on first use; admins only). Every delivery carries `webhook-id`, `webhook-timestamp` and ' +
    '`webhook-signature: v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`; reject timestamps older than a few minutes to stop replays.',
  security: apiKeySecurity,
  responses: { 200: jsonResponse(WebhookSecretSchema, 'The secret.'), ...errorResponses('deepagents', []) },
});

const rotate = createRoute({
  method: 'post',
  path: '/v1/deepagents/webhooks/secret/rotate',
  tags: ['Webhooks'],
  summary: 'Rotate the webhook signing secret',
  description: 'Deliveries from now on are signed with the new secret (admins only).',
  security: apiKeySecurity,
  responses: { 200: jsonResponse(WebhookSecretSchema, 'The new secret.'), ...errorResponses('deepagents', []) },
});

/** `input.messages` or top-level `messages` (both, and different: a 422 naming both). */
export function scheduleInput(body: { input?: ScheduleInput | undefined; messages?: ScheduleInput['messages'] | undefined }): ScheduleInput | undefined {
  if (body.input && body.messages && JSON.stringify(body.input.messages) !== JSON.stringify(body.messages)) {
    throw invalidField(['messages'], 'differs from input.messages; send one of messages and input.messages');
  }
  const messages = body.input?.messages ?? body.messages;
  return messages ? { messages } : undefined;
}

function page(query: { page_size: number; cursor?: string | undefined }) {
  return { limit: query.page_size, offset: Number(query.cursor ?? 0) };
}

function nextCursor(got: number, p: { limit: number; offset: number }): string | null {
  return got < p.limit ? null : String(p.offset + got);
}

/** Routes of schedules and webhooks. */
export function scheduleRoutes({ services }: AppDeps) {
  return newRouter()
    .openapi(create, async (c) => {
      const { input: _input, messages: _messages, ...body } = c.req.valid('json');
      const input = scheduleInput(c.req.valid('json'));
      if (!input) throw invalidField(['input', 'messages'], 'required: the messages each run is sent');
      return c.json(presentSchedule(await services.schedules.create(c.get('caller'), { ...body, input })), 201);
    })
    .openapi(list, async (c) => {
      const { page_size, cursor, ...filter } = c.req.valid('query');
      const p = page({ page_size, cursor });
      const items = await services.schedules.list(c.get('caller'), filter, p);
      return c.json({ items: items.map(presentSchedule), next_cursor: nextCursor(items.length, p) }, 200);
    })
    .openapi(get, async (c) => c.json(presentSchedule(await services.schedules.get(c.get('caller'), c.req.valid('param').schedule_id)), 200))
    .openapi(update, async (c) => {
      const { input: _input, messages: _messages, ...body } = c.req.valid('json');
      const input = scheduleInput(c.req.valid('json'));
      const changed = await services.schedules.update(c.get('caller'), c.req.valid('param').schedule_id, { ...body, ...(input ? { input } : {}) }, { ifMatch: c.req.valid('header')['if-match'] });
      return c.json(presentSchedule(changed), 200);
    })
    .openapi(remove, async (c) => {
      await services.schedules.delete(c.get('caller'), c.req.valid('param').schedule_id);
      return c.body(null, 204);
    })
    .openapi(ticks, async (c) => {
      const p = page(c.req.valid('query'));
      const items = await services.schedules.ticks(c.get('caller'), c.req.valid('param').schedule_id, p);
      return c.json({ items: items.map(presentTick), next_cursor: nextCursor(items.length, p) }, 200);
    })
    .openapi(deliveries, async (c) => {
      const { thread_id, run_id } = c.req.valid('param');
      return c.json((await services.webhooks.forRun(c.get('caller'), thread_id, run_id)).map(presentDelivery), 200);
    })
    .openapi(secret, async (c) => {
      const s = await services.webhooks.secret(c.get('caller'));
      return c.json({ secret: s.secret, created_at: s.createdAt.toISOString() }, 200);
    })
    .openapi(rotate, async (c) => {
      const s = await services.webhooks.rotate(c.get('caller'));
      return c.json({ secret: s.secret, created_at: s.createdAt.toISOString() }, 200);
    });
}
