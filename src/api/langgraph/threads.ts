// The thread operations LangGraph clients call beyond the hosted ones: history by POST, metadata
// update, copy, and state writes; and how a LangGraph `threads.create` body names its agent.
import { createRoute, z } from '@hono/zod-openapi';
import type { Caller } from '../../core/caller.js';
import { invalidField } from '../../core/errors.js';
import type { Services } from '../../core/services.js';
import type { CreateThreadInput } from '../../core/threads/service.js';
import type { AppDeps } from '../../http/deps.js';
import { apiKeySecurity, errorResponses, jsonBody, jsonResponse, uuidParam } from '../../http/openapi.js';
import { newRouter } from '../../http/router.js';
import { CreateThreadRequest, presentState, presentThread, ThreadSchema, ThreadStateSchema } from '../threads/schemas.js';
import { resolveAssistant } from './assistants.js';

const BASE = '/v1/deepagents/threads/{thread_id}';
const tags = ['Threads'];
const params = z.object({ thread_id: uuidParam('thread_id', 'Thread id.') });

/**
 * The create input of a thread request in either form. The agent is `agent_id`, else the one named
 * in `metadata.assistant_id` / `agent_id` / `graph_id` (by id or name), else none yet.
 */
export async function threadCreateInput(services: Services, caller: Caller, body: z.infer<typeof CreateThreadRequest>): Promise<CreateThreadInput> {
  if (body.supersteps !== undefined && body.supersteps !== null) throw invalidField(['supersteps'], 'creating a thread with supersteps is not supported; write state with POST /threads/{thread_id}/state');
  const { supersteps: _supersteps, ...input } = body;
  if (input.agent_id !== undefined) return input;
  for (const key of ['assistant_id', 'agent_id', 'graph_id']) {
    const ref = body.metadata?.[key];
    if (typeof ref === 'string' && ref !== '') return { ...input, agent_id: await resolveAssistant(services, caller, ref, ['metadata', key]) };
  }
  return input;
}

/** A checkpoint id (LangGraph's are UUID-like, but not always valid UUIDs). */
const CheckpointId = z.string().min(1).max(100);
/** A checkpoint filter's namespace must be the top level's: subagents run inside the `task` tool, and Hangar keeps no subgraph checkpoints. */
function topLevelOnly(checkpoint: { checkpoint_ns?: string | null | undefined } | null | undefined): void {
  if (checkpoint?.checkpoint_ns) throw invalidField(['checkpoint', 'checkpoint_ns'], 'Hangar keeps no checkpoints of subgraphs (subagents run inside the `task` tool); only "" is served');
}

/** LangGraph's `Checkpoint` as a filter: the top-level namespace only. */
const CheckpointFilter = z
  .object({
    checkpoint_id: CheckpointId.nullish(),
    checkpoint_ns: z.string().nullish().openapi({ description: 'Only `""` (the top level): Hangar keeps no checkpoints of subgraphs.' }),
    checkpoint_map: z.unknown().optional(),
    thread_id: z.string().optional(),
  })
  .openapi('CheckpointFilter');

const stateAt = createRoute({
  method: 'get',
  path: `${BASE}/state/{checkpoint_id}`,
  operationId: 'getThreadStateAtCheckpoint',
  tags,
  summary: 'Get the state of a thread at a checkpoint',
  description: 'The state at one checkpoint of the thread’s history (`threads.getState(threadId, checkpointId)`); a checkpoint the thread does not have is a 404 (`checkpoint_not_found`).',
  security: apiKeySecurity,
  request: { params: params.extend({ checkpoint_id: CheckpointId.openapi({ param: { name: 'checkpoint_id', in: 'path' }, description: 'A checkpoint id of the thread.' }) }) },
  responses: { 200: jsonResponse(ThreadStateSchema, 'The state at that checkpoint.'), ...errorResponses('deepagents', [404, 422]) },
});

const stateAtCheckpoint = createRoute({
  method: 'post',
  path: `${BASE}/state/checkpoint`,
  operationId: 'postThreadStateAtCheckpoint',
  tags,
  summary: 'Get the state of a thread at a checkpoint (LangGraph form)',
  description: 'As `GET …/state/{checkpoint_id}`, the checkpoint in the body (`threads.getState(threadId, {checkpoint_id})`); without a `checkpoint_id`, the current state.',
  security: apiKeySecurity,
  request: {
    params,
    body: jsonBody(z.object({ checkpoint: CheckpointFilter, subgraphs: z.boolean().optional(), select: z.array(z.string()).optional() }).openapi('ThreadStateAtCheckpointRequest')),
  },
  responses: { 200: jsonResponse(ThreadStateSchema, 'The state at that checkpoint.'), ...errorResponses('deepagents', [404, 415, 422]) },
});

const history = createRoute({
  method: 'post',
  path: `${BASE}/history`,
  operationId: 'searchThreadHistory',
  tags,
  summary: 'Get the history of a thread (LangGraph form)',
  description:
    'As `GET …/history`, with LangGraph’s filters in the body: `before` (a checkpoint id, or a config naming one in `configurable.checkpoint_id`: only older states), `checkpoint` (`{checkpoint_id}`: that state only) and `metadata` (states whose checkpoint metadata holds these keys and values). ' +
    'Hangar keeps no checkpoints of subgraphs: a `checkpoint_ns` other than `""` is a 422.',
  security: apiKeySecurity,
  request: {
    params,
    body: {
      required: false,
      content: {
        'application/json': {
          schema: z
            .object({
              limit: z.number().int().min(1).max(1000).default(10),
              before: z.union([CheckpointId, z.object({ configurable: z.object({ checkpoint_id: CheckpointId }).passthrough() }).passthrough()]).nullish(),
              checkpoint: CheckpointFilter.nullish(),
              metadata: z.record(z.string(), z.unknown()).nullish(),
              select: z.array(z.string()).optional(),
            })
            .openapi('ThreadHistoryRequest'),
        },
      },
    },
  },
  responses: { 200: jsonResponse(z.array(ThreadStateSchema), 'States, newest first.'), ...errorResponses('deepagents', [404, 422]) },
});

const update = createRoute({
  method: 'patch',
  path: BASE,
  operationId: 'updateThread',
  tags,
  summary: 'Update a thread’s metadata',
  description:
    'Merges `metadata` into the thread’s metadata (a key set to `null` is removed). The keys Hangar records — `is_test_run`, `skip_memory_write_protection` (the creation options), `tenant_id`, `ls_user_id`, `assistant_id`, `graph_id` — may be sent back unchanged; changing or removing one is a 422 naming it, and nothing is written.',
  security: apiKeySecurity,
  request: { params, body: jsonBody(z.object({ metadata: z.record(z.string(), z.unknown()).default({}), ttl: z.unknown().optional() }).openapi('UpdateThreadRequest')) },
  responses: { 200: jsonResponse(ThreadSchema, 'The thread.'), ...errorResponses('deepagents', [404, 415, 422]) },
});

const copy = createRoute({
  method: 'post',
  path: `${BASE}/copy`,
  operationId: 'copyThread',
  tags,
  summary: 'Copy a thread',
  description: 'A new thread with the same agent, metadata and state history (its runs are not copied).',
  security: apiKeySecurity,
  request: { params },
  responses: { 200: jsonResponse(ThreadSchema, 'The new thread.'), ...errorResponses('deepagents', [404, 422]) },
});

const updateState = createRoute({
  method: 'post',
  path: `${BASE}/state`,
  operationId: 'updateThreadState',
  tags,
  summary: 'Write a thread’s state',
  description:
    'Applies `values` (for example `files`) to the thread’s state through its agent’s graph, as if node `as_node` had returned them (reducers apply; a thread without an agent yet is a 409; a thread whose agent was deleted is a 502, `agent_deleted`). Writing at a past checkpoint is not supported.',
  security: apiKeySecurity,
  request: {
    params,
    body: jsonBody(
      z
        .object({
          values: z.record(z.string(), z.unknown()).openapi({ description: 'State keys to write, e.g. `files`.' }),
          as_node: z.string().optional(),
          checkpoint: z.unknown().optional(),
          checkpoint_id: z.string().optional(),
        })
        .openapi('UpdateThreadStateRequest'),
    ),
  },
  responses: {
    200: jsonResponse(z.object({ checkpoint: z.record(z.string(), z.unknown()).nullable() }).openapi('UpdateThreadStateResponse'), 'The new checkpoint.'),
    ...errorResponses('deepagents', [404, 409, 415, 422, 502]),
  },
});

/** Routes of LangGraph's thread operations. */
export function langGraphThreadRoutes({ services }: AppDeps) {
  return newRouter()
    .openapi(history, async (c) => {
      const body = c.req.valid('json') ?? { limit: 10 };
      topLevelOnly(body.checkpoint);
      const before = typeof body.before === 'string' ? body.before : body.before?.configurable.checkpoint_id;
      const filter = { before, checkpointId: body.checkpoint?.checkpoint_id ?? undefined, metadata: body.metadata ?? undefined };
      const states = await services.threads.history(c.get('caller'), c.req.valid('param').thread_id, body.limit ?? 10, filter);
      return c.json(states.map(presentState), 200);
    })
    .openapi(stateAt, async (c) => {
      const { thread_id, checkpoint_id } = c.req.valid('param');
      return c.json(presentState(await services.threads.stateAt(c.get('caller'), thread_id, checkpoint_id)), 200);
    })
    .openapi(stateAtCheckpoint, async (c) => {
      const threadId = c.req.valid('param').thread_id;
      const { checkpoint } = c.req.valid('json');
      topLevelOnly(checkpoint);
      const checkpointId = checkpoint.checkpoint_id;
      const state = checkpointId ? await services.threads.stateAt(c.get('caller'), threadId, checkpointId) : await services.threads.currentState(c.get('caller'), threadId);
      return c.json(presentState(state), 200);
    })
    .openapi(update, async (c) => {
      const thread = await services.threads.updateMetadata(c.get('caller'), c.req.valid('param').thread_id, c.req.valid('json').metadata);
      return c.json(presentThread(thread), 200);
    })
    .openapi(copy, async (c) => c.json(presentThread(await services.threads.copy(c.get('caller'), c.req.valid('param').thread_id)), 200))
    .openapi(updateState, async (c) => {
      const body = c.req.valid('json');
      if ((body.checkpoint ?? body.checkpoint_id) !== undefined) throw invalidField(['checkpoint'], 'writing at a past checkpoint is not supported; the latest state is updated');
      const state = await services.threads.updateState(c.get('caller'), c.req.valid('param').thread_id, body.values, body.as_node);
      return c.json({ checkpoint: state.checkpoint }, 200);
    });
}
