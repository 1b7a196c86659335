// LangGraph Agent Server `crons` on Hangar's base URL (`client.crons.*` of @langchain/langgraph-sdk):
// a translation at the edge onto the same schedules (one store, one scheduler).
import { createRoute, z } from '@hono/zod-openapi';
import { invalidField } from '../../core/errors.js';
import { MULTITASK_STRATEGIES } from '../../core/runs/service.js';
import type { Schedule, ScheduleMessage, ScheduleSortColumn } from '../../core/schedules/service.js';
import type { AppDeps } from '../../http/deps.js';
import { apiKeySecurity, errorResponses, jsonBody, jsonResponse, uuidParam } from '../../http/openapi.js';
import { newRouter } from '../../http/router.js';
import { WebhookUrl } from './schemas.js';

const tags = ['Schedules'];
const metadata = z.record(z.string(), z.unknown());

/** A message in any of the forms LangGraph clients send: `{role, content}` or `{type, content}`, content a string or text blocks. */
const LangGraphMessage = z
  .object({
    role: z.string().optional(),
    type: z.string().optional(),
    content: z.union([z.string(), z.array(z.object({ type: z.string(), text: z.string().optional() }).catchall(z.unknown()))]),
  })
  .catchall(z.unknown());

const ROLE_OF: Record<string, ScheduleMessage['role']> = { user: 'user', human: 'user', assistant: 'assistant', ai: 'assistant', system: 'system' };

const cronFields = {
  schedule: z.string().min(1).max(200).openapi({ description: '5-field cron expression, or 6 fields with seconds first.' }),
  timezone: z.string().min(1).max(100).nullable().optional(),
  end_time: z.iso.datetime({ offset: true }).nullable().optional(),
  input: z.object({ messages: z.array(LangGraphMessage).min(1, 'must contain at least one message').max(100) }).catchall(z.unknown()).nullable().optional(),
  metadata: metadata.nullable().optional(),
  webhook: WebhookUrl.nullable().optional(),
  enabled: z.boolean().optional(),
  multitask_strategy: z.enum(MULTITASK_STRATEGIES).optional(),
  on_run_completed: z.enum(['keep', 'delete']).optional().openapi({ description: 'Only `keep`: Hangar keeps the threads of scheduled runs.' }),
  interrupt_before: z.union([z.literal('*'), z.array(z.string())]).optional(),
  interrupt_after: z.union([z.literal('*'), z.array(z.string())]).optional(),
  // Accepted for compatibility; a scheduled run has no stream, and its configuration is the agent's.
  config: z.record(z.string(), z.unknown()).nullable().optional(),
  context: z.unknown().optional(),
  stream_mode: z.unknown().optional(),
  stream_subgraphs: z.boolean().optional(),
  stream_resumable: z.boolean().optional(),
  durability: z.string().optional(),
  checkpoint_during: z.boolean().optional(),
};

const CreateCronRequest = z.object({ assistant_id: z.uuid({ message: 'must be an agent id (UUID)' }), ...cronFields }).openapi('CreateCronRequest');
const UpdateCronRequest = z.object({ ...cronFields, schedule: cronFields.schedule.optional() }).openapi('UpdateCronRequest');

const CronSchema = z
  .object({
    cron_id: z.uuid(),
    assistant_id: z.uuid(),
    thread_id: z.uuid().nullable(),
    on_run_completed: z.literal('keep'),
    end_time: z.iso.datetime().nullable(),
    schedule: z.string(),
    timezone: z.string(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
    payload: z.record(z.string(), z.unknown()),
    user_id: z.string().nullable(),
    next_run_date: z.iso.datetime().nullable(),
    metadata,
    enabled: z.boolean(),
  })
  .openapi('Cron');

const SearchCronsRequest = z
  .object({
    assistant_id: z.uuid({ message: 'must be an agent id (UUID)' }).optional(),
    thread_id: z.uuid({ message: 'must be a UUID' }).optional(),
    enabled: z.boolean().optional(),
    metadata: metadata.optional(),
    limit: z.number().int().min(1).max(1000).default(10),
    offset: z.number().int().min(0).max(1_000_000).default(0),
    sort_by: z.enum(['cron_id', 'assistant_id', 'thread_id', 'next_run_date', 'end_time', 'created_at', 'updated_at']).optional(),
    sort_order: z.enum(['asc', 'desc']).optional(),
    select: z.array(z.string()).optional(),
  })
  .openapi('SearchCronsRequest');

/** The schedule column of each LangGraph `sort_by`. */
const SORT_COLUMNS: Record<NonNullable<z.infer<typeof SearchCronsRequest>['sort_by']>, ScheduleSortColumn> = {
  cron_id: 'id',
  assistant_id: 'agent_id',
  thread_id: 'thread_id',
  next_run_date: 'next_run_at',
  end_time: 'end_time',
  created_at: 'created_at',
  updated_at: 'updated_at',
};

const CountCronsRequest = z.object({
  assistant_id: z.uuid({ message: 'must be an agent id (UUID)' }).optional(),
  thread_id: z.uuid({ message: 'must be a UUID' }).optional(),
  metadata: metadata.optional(),
});

const cronParams = z.object({ cron_id: uuidParam('cron_id', 'Cron (schedule) id.') });

const create = createRoute({
  method: 'post',
  path: '/v1/deepagents/runs/crons',
  tags,
  summary: 'Create a cron (LangGraph)',
  description: 'LangGraph `crons.create`: a schedule whose runs each get a fresh thread.',
  security: apiKeySecurity,
  request: { body: jsonBody(CreateCronRequest) },
  responses: { 200: jsonResponse(CronSchema, 'The cron.'), ...errorResponses('deepagents', [400, 404, 413, 415, 422]) },
});

const createForThread = createRoute({
  method: 'post',
  path: '/v1/deepagents/threads/{thread_id}/runs/crons',
  tags,
  summary: 'Create a cron on a thread (LangGraph)',
  description: 'LangGraph `crons.createForThread`: every run goes to this thread.',
  security: apiKeySecurity,
  request: { params: z.object({ thread_id: uuidParam('thread_id', 'Thread id.') }), body: jsonBody(CreateCronRequest) },
  responses: { 200: jsonResponse(CronSchema, 'The cron.'), ...errorResponses('deepagents', [400, 404, 413, 415, 422]) },
});

const search = createRoute({
  method: 'post',
  path: '/v1/deepagents/runs/crons/search',
  tags,
  summary: 'Search crons (LangGraph)',
  security: apiKeySecurity,
  request: { body: { required: false, content: { 'application/json': { schema: SearchCronsRequest } } } },
  responses: { 200: jsonResponse(z.array(CronSchema), 'Matching crons.'), ...errorResponses('deepagents', [400, 415, 422]) },
});

const count = createRoute({
  method: 'post',
  path: '/v1/deepagents/runs/crons/count',
  tags,
  summary: 'Count crons (LangGraph)',
  security: apiKeySecurity,
  request: { body: { required: false, content: { 'application/json': { schema: CountCronsRequest } } } },
  responses: { 200: jsonResponse(z.number().int(), 'How many.'), ...errorResponses('deepagents', [400, 415, 422]) },
});

const update = createRoute({
  method: 'patch',
  path: '/v1/deepagents/runs/crons/{cron_id}',
  tags,
  summary: 'Change a cron (LangGraph)',
  security: apiKeySecurity,
  request: { params: cronParams, body: jsonBody(UpdateCronRequest) },
  responses: { 200: jsonResponse(CronSchema, 'The cron.'), ...errorResponses('deepagents', [400, 404, 413, 415, 422]) },
});

const remove = createRoute({
  method: 'delete',
  path: '/v1/deepagents/runs/crons/{cron_id}',
  tags,
  summary: 'Delete a cron (LangGraph)',
  security: apiKeySecurity,
  request: { params: cronParams },
  responses: { 204: { description: 'Deleted.' }, ...errorResponses('deepagents', [404, 422]) },
});

type CronBody = z.infer<typeof UpdateCronRequest>;

function translated(body: CronBody) {
  if (body.on_run_completed === 'delete') throw invalidField(['on_run_completed'], 'only "keep" is supported: Hangar keeps the threads of scheduled runs');
  for (const field of ['interrupt_before', 'interrupt_after'] as const) {
    const v = body[field];
    if (v !== undefined && (v === '*' || v.length > 0)) throw invalidField([field], 'not supported on scheduled runs (nobody waits on their stream to resume them)');
  }
  const messages = body.input?.messages.map((m, i): ScheduleMessage => {
    const role = ROLE_OF[(m.role ?? m.type ?? '').toLowerCase()];
    if (!role) throw invalidField(['input', 'messages', i, 'role'], 'must be user/human, assistant/ai or system');
    const content = typeof m.content === 'string' ? m.content : m.content.map((b) => b.text ?? '').join('');
    if (!content) throw invalidField(['input', 'messages', i, 'content'], 'must not be empty');
    return { role, content };
  });
  return {
    ...(body.schedule !== undefined ? { schedule: body.schedule } : {}),
    ...(body.timezone ? { timezone: body.timezone } : {}),
    ...(body.end_time !== undefined ? { end_time: body.end_time } : {}),
    ...(messages ? { input: { messages } } : {}),
    ...(body.metadata ? { metadata: body.metadata } : {}),
    ...(body.webhook !== undefined ? { webhook: body.webhook } : {}),
    ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
    ...(body.multitask_strategy ? { multitask_strategy: body.multitask_strategy } : {}),
  };
}

/** A schedule in LangGraph's cron shape. */
function presentCron(s: Schedule): z.infer<typeof CronSchema> {
  return {
    cron_id: s.id,
    assistant_id: s.agentId,
    thread_id: s.threadId,
    on_run_completed: 'keep',
    end_time: s.endTime?.toISOString() ?? null,
    schedule: s.schedule,
    timezone: s.timezone,
    created_at: s.createdAt.toISOString(),
    updated_at: s.updatedAt.toISOString(),
    payload: { input: s.input, multitask_strategy: s.multitaskStrategy, ...(s.webhook ? { webhook: s.webhook } : {}) },
    user_id: s.principal,
    next_run_date: s.nextRunAt?.toISOString() ?? null,
    metadata: s.metadata,
    enabled: s.enabled,
  };
}

/** Routes of LangGraph crons. */
export function cronRoutes({ services }: AppDeps) {
  const createCron = async (caller: Parameters<typeof services.schedules.create>[0], body: z.infer<typeof CreateCronRequest>, thread: string) => {
    const fields = translated(body);
    if (!fields.input) throw invalidField(['input', 'messages'], 'required: the messages each run is sent');
    return presentCron(await services.schedules.create(caller, { ...fields, schedule: body.schedule, input: fields.input, agent_id: body.assistant_id, thread }));
  };
  return newRouter()
    .openapi(create, async (c) => c.json(await createCron(c.get('caller'), c.req.valid('json'), 'new'), 200))
    .openapi(createForThread, async (c) => {
      const { thread_id } = c.req.valid('param');
      // The thread must exist in this workspace (a 404 otherwise); the service checks its agent.
      await services.threads.get(c.get('caller'), thread_id);
      return c.json(await createCron(c.get('caller'), c.req.valid('json'), thread_id), 200);
    })
    .openapi(search, async (c) => {
      const q = SearchCronsRequest.parse(c.req.valid('json') ?? {});
      const items = await services.schedules.list(
        c.get('caller'),
        { agent_id: q.assistant_id, thread_id: q.thread_id, enabled: q.enabled, metadata: q.metadata },
        { limit: q.limit, offset: q.offset, sortBy: SORT_COLUMNS[q.sort_by ?? 'created_at'], sortOrder: q.sort_order ?? 'desc' },
      );
      return c.json(items.map(presentCron), 200);
    })
    .openapi(count, async (c) => {
      const q = CountCronsRequest.parse(c.req.valid('json') ?? {});
      return c.json(await services.schedules.count(c.get('caller'), { agent_id: q.assistant_id, thread_id: q.thread_id, metadata: q.metadata }), 200);
    })
    .openapi(update, async (c) => {
      const changed = await services.schedules.update(c.get('caller'), c.req.valid('param').cron_id, translated(c.req.valid('json')));
      return c.json(presentCron(changed), 200);
    })
    .openapi(remove, async (c) => {
      await services.schedules.delete(c.get('caller'), c.req.valid('param').cron_id);
      return c.body(null, 204);
    });
}
