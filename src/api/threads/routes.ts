// /v1/deepagents/threads: create, find, read state and history, delete.
import { createRoute, z } from '@hono/zod-openapi';
import type { AppDeps } from '../../http/deps.js';
import { apiKeySecurity, errorResponses, jsonBody, jsonResponse, uuidParam } from '../../http/openapi.js';
import { newRouter } from '../../http/router.js';
import type { ThreadSandbox } from '../../core/threads/sandbox.js';
import { threadCreateInput } from '../langgraph/threads.js';
import {
  CountThreadsRequest,
  CreateThreadRequest,
  presentState,
  presentThread,
  SearchThreadsRequest,
  ThreadSchema,
  ThreadStateSchema,
} from './schemas.js';

const BASE = '/v1/deepagents/threads';
const tags = ['Threads'];
const params = z.object({ thread_id: uuidParam('thread_id', 'Thread id.') });

const create = createRoute({
  method: 'post',
  path: BASE,
  tags,
  summary: 'Create a thread',
  description: 'A thread belongs to one agent. `options` are echoed in `metadata` as `is_test_run` and `skip_memory_write_protection`.',
  security: apiKeySecurity,
  request: { body: jsonBody(CreateThreadRequest) },
  responses: { 201: jsonResponse(ThreadSchema, 'Created.'), ...errorResponses('deepagents', [400, 404, 413, 415, 422]) },
});

const search = createRoute({
  method: 'post',
  path: `${BASE}/search`,
  tags,
  summary: 'Search threads',
  description: 'Threads of the workspace by agent, status and metadata (containment), newest first. The body is optional.',
  security: apiKeySecurity,
  request: { body: { required: false, content: { 'application/json': { schema: SearchThreadsRequest } } } },
  responses: { 200: jsonResponse(z.array(ThreadSchema), 'Matching threads.'), ...errorResponses('deepagents', [400, 415, 422]) },
});

const count = createRoute({
  method: 'post',
  path: `${BASE}/count`,
  tags,
  summary: 'Count threads',
  description: 'How many threads match the same filters as search. The body is optional.',
  security: apiKeySecurity,
  request: { body: { required: false, content: { 'application/json': { schema: CountThreadsRequest } } } },
  responses: { 200: jsonResponse(z.number().int(), 'The number of matching threads.'), ...errorResponses('deepagents', [400, 415, 422]) },
});

const get = createRoute({
  method: 'get',
  path: `${BASE}/{thread_id}`,
  tags,
  summary: 'Get a thread',
  description: 'Threads of a deleted agent stay readable. An `interrupted` thread lists what it waits for in `interrupts`.',
  security: apiKeySecurity,
  request: { params },
  responses: { 200: jsonResponse(ThreadSchema, 'The thread.'), ...errorResponses('deepagents', [404, 422]) },
});

const remove = createRoute({
  method: 'delete',
  path: `${BASE}/{thread_id}`,
  tags,
  summary: 'Delete a thread',
  description:
    'Deletes the thread, its runs, their event logs and its checkpoints. A thread that does not exist is a 404; a thread with an active run is a 409 (`thread_busy`).',
  security: apiKeySecurity,
  request: { params },
  responses: { 204: { description: 'Deleted.' }, ...errorResponses('deepagents', [404, 409, 422]) },
});

const state = createRoute({
  method: 'get',
  path: `${BASE}/{thread_id}/state`,
  tags,
  summary: 'Get the state of a thread',
  description: 'Values (`messages`, `files`, …), next nodes, pending interrupts and the checkpoint, from the latest checkpoint.',
  security: apiKeySecurity,
  request: { params },
  responses: { 200: jsonResponse(ThreadStateSchema, 'The current state.'), ...errorResponses('deepagents', [404, 422]) },
});

const history = createRoute({
  method: 'get',
  path: `${BASE}/{thread_id}/history`,
  tags,
  summary: 'Get the history of a thread',
  description: 'Past states (one per checkpoint), newest first.',
  security: apiKeySecurity,
  request: { params, query: z.object({ limit: z.coerce.number().int().min(1).max(1000).default(10).openapi({ description: 'Default 10.' }) }) },
  responses: { 200: jsonResponse(z.array(ThreadStateSchema), 'States, newest first.'), ...errorResponses('deepagents', [404, 422]) },
});

const resolveInterrupt = createRoute({
  method: 'post',
  path: `${BASE}/{thread_id}/resolve-interrupt`,
  tags: ['Runs'],
  summary: 'Resolve an interrupted thread',
  description:
    'Ends the thread’s pending approval without running the tools it asked about: each gets a result saying it was not run, and the thread is `idle` again. ' +
    'A thread with nothing pending is a 409 (`thread_not_interrupted`); a thread with an active run is a 409 (`thread_busy`).',
  security: apiKeySecurity,
  request: { params },
  responses: { 204: { description: 'Resolved.' }, ...errorResponses('deepagents', [404, 409, 422]) },
});

const SandboxSchema = z
  .object({
    thread_id: z.uuid(),
    status: z.enum(['none', 'running', 'stopped']).openapi({
      description:
        '`none`: no command has run yet (the sandbox is created on first use); `running`: in use; `stopped`: idle longer than `idle_ttl_seconds` (its files are kept until `delete_after_stop_seconds` later; the next command restarts it).',
    }),
    sandbox_id: z.uuid().nullable(),
    scope: z.enum(['thread', 'agent']).nullable().openapi({ description: '`agent`: the sandbox is shared by every thread of the agent.' }),
    driver: z.string().nullable(),
    created_at: z.iso.datetime().nullable(),
    last_used_at: z.iso.datetime().nullable(),
    stopped_at: z.iso.datetime().nullable(),
    disk_bytes: z.number().int().nullable().openapi({ description: 'Bytes its work directory uses, measured after a command (at most every 10 s). Null before the first measure, or when the last one ran beyond `HANGAR_SANDBOX_DU_TIMEOUT_MS` and was stopped (the log says so).' }),
    commands: z.number().int().openapi({ description: 'Commands run so far (the model’s and the file tools’).' }),
    idle_ttl_seconds: z.number().int().nullable(),
    delete_after_stop_seconds: z.number().int().nullable(),
  })
  .openapi('ThreadSandbox');

const sandboxGet = createRoute({
  method: 'get',
  path: `${BASE}/{thread_id}/sandbox`,
  tags,
  summary: 'Get the sandbox of a thread',
  description: 'The sandbox the thread’s commands run in (agents with a `sandbox` backend; see docs/sandboxes.md): status, when it was created and last used, disk use.',
  security: apiKeySecurity,
  request: { params },
  responses: { 200: jsonResponse(SandboxSchema, 'The sandbox.'), ...errorResponses('deepagents', [404, 422]) },
});

const sandboxReset = createRoute({
  method: 'delete',
  path: `${BASE}/{thread_id}/sandbox`,
  tags,
  summary: 'Reset the sandbox of a thread',
  description:
    'Removes the sandbox and its files (a command still running in it is killed); the next command starts a fresh one. For an agent-scoped sandbox this resets the sandbox every thread of the agent shares. Idempotent.',
  security: apiKeySecurity,
  request: { params },
  responses: { 204: { description: 'Reset.' }, ...errorResponses('deepagents', [403, 404, 422]) },
});

function presentSandbox(s: ThreadSandbox): z.infer<typeof SandboxSchema> {
  if (s.status === 'none') {
    return {
      thread_id: s.threadId,
      status: 'none',
      sandbox_id: null,
      scope: null,
      driver: null,
      created_at: null,
      last_used_at: null,
      stopped_at: null,
      disk_bytes: null,
      commands: 0,
      idle_ttl_seconds: null,
      delete_after_stop_seconds: null,
    };
  }
  return {
    thread_id: s.threadId,
    status: s.status,
    sandbox_id: s.id,
    scope: s.scope,
    driver: s.driver,
    created_at: s.createdAt.toISOString(),
    last_used_at: s.lastUsedAt.toISOString(),
    stopped_at: s.stoppedAt?.toISOString() ?? null,
    disk_bytes: s.diskBytes,
    commands: s.commands,
    idle_ttl_seconds: s.idleTtlSeconds,
    delete_after_stop_seconds: s.deleteAfterStopSeconds,
  };
}

/** Routes of threads. */
export function threadRoutes({ services }: AppDeps) {
  return newRouter()
    .openapi(create, async (c) => {
      const caller = c.get('caller');
      const body = await threadCreateInput(services, caller, c.req.valid('json'));
      return c.json(presentThread(await services.threads.create(caller, body)), 201);
    })
    .openapi(search, async (c) => {
      // An absent body skips validation; parsing `{}` applies the defaults.
      const { limit, offset, ids, sort_by, sort_order, values: _values, select: _select, ...filter } = SearchThreadsRequest.parse(c.req.valid('json') ?? {});
      const threads = await services.threads.searchWithState(c.get('caller'), filter, { limit, offset, ids, sortBy: sort_by, sortOrder: sort_order });
      return c.json(threads.map(presentThread), 200);
    })
    .openapi(count, async (c) => {
      const { values: _values, ...filter } = CountThreadsRequest.parse(c.req.valid('json') ?? {});
      return c.json(await services.threads.count(c.get('caller'), filter), 200);
    })
    .openapi(get, async (c) => c.json(presentThread(await services.threads.get(c.get('caller'), c.req.valid('param').thread_id)), 200))
    .openapi(remove, async (c) => {
      await services.threads.delete(c.get('caller'), c.req.valid('param').thread_id);
      return c.body(null, 204);
    })
    .openapi(resolveInterrupt, async (c) => {
      await services.runs.resolveInterrupt(c.get('caller'), c.req.valid('param').thread_id);
      return c.body(null, 204);
    })
    .openapi(state, async (c) => c.json(presentState(await services.threads.currentState(c.get('caller'), c.req.valid('param').thread_id)), 200))
    .openapi(sandboxGet, async (c) => c.json(presentSandbox(await services.sandboxes.get(c.get('caller'), c.req.valid('param').thread_id)), 200))
    .openapi(sandboxReset, async (c) => {
      await services.sandboxes.reset(c.get('caller'), c.req.valid('param').thread_id);
      return c.body(null, 204);
    })
    .openapi(history, async (c) => {
      const states = await services.threads.history(c.get('caller'), c.req.valid('param').thread_id, c.req.valid('query').limit);
      return c.json(states.map(presentState), 200);
    });
}
