// /v1/deepagents/threads/{thread_id}/runs: start a streamed run, join a run's stream, list and get runs.
import { createRoute, z } from '@hono/zod-openapi';
import type { AppDeps } from '../../http/deps.js';
import { apiKeySecurity, errorResponses, jsonBody, jsonResponse, uuidParam } from '../../http/openapi.js';
import { newRouter } from '../../http/router.js';
import { sseResponse, StreamSlots } from '../../http/sse.js';
import { RUN_STATUSES } from '../../core/runs/status.js';
import { startRun } from '../langgraph/run-request.js';
import { presentRun, RunSchema, StreamRunRequest } from './schemas.js';
import { STREAM_MODES, type StoredEvent } from '../../runtime/events/types.js';
import { invalid } from '../../core/errors.js';

const invalidQuery = (loc: (string | number)[], msg: string) => invalid([{ loc: ['query', ...loc], msg, type: 'value_error' }]);

const BASE = '/v1/deepagents/threads/{thread_id}/runs';
const tags = ['Runs'];
const threadParam = uuidParam('thread_id', 'Thread id.');
const params = z.object({ thread_id: threadParam });
const runParams = z.object({ thread_id: threadParam, run_id: uuidParam('run_id', 'Run id.') });

const sse = {
  description: [
    'Server-sent events: `event: <name>`, `data: <json>`, `id: <n>` (increasing per run) per event.',
    'First `metadata` `{run_id, attempt, status, queue_position}` at once: `status: "running"` when a worker took the run at its start, `"pending"` while it waits for one (`queue_position`: runs waiting before it; a run its worker put back in the queue, or handed back, because its process was stopping sends another `metadata` saying `"pending"`); then, per requested mode, `values` (full state with `messages`, `files`, `tools`),',
    '`updates` (keyed by node or middleware; `null` when a node changed nothing) and `messages` (`[chunk, metadata]`).',
    'With `stream_subgraphs`, subagent events are named `<mode>|<namespace>`. A failed run sends `error` `{error, message}`.',
    '`: heartbeat` comments keep an idle stream open. `Content-Location` names the run; `Location` is where to join its stream again (with `Last-Event-ID`), relative to the API base `/v1/deepagents`, as the LangGraph SDK expects.',
  ].join(' '),
  content: { 'text/event-stream': { schema: z.string() } },
  headers: {
    'Content-Location': { description: 'Path of the run: `/v1/deepagents/threads/{thread_id}/runs/{run_id}`.', schema: { type: 'string' as const } },
    Location: { description: 'Where to join the stream again, relative to the API base `/v1/deepagents` (as the LangGraph server sends it): `/threads/{thread_id}/runs/{run_id}/stream`.', schema: { type: 'string' as const } },
  },
};

const stream = createRoute({
  method: 'post',
  path: `${BASE}/stream`,
  tags,
  summary: 'Start a run and stream its events',
  description:
    'Runs the thread’s agent at its latest revision on the given messages. One active run per thread: a second is a 409 (`thread_busy`) unless `multitask_strategy` says otherwise. ' +
    'A thread whose agent was deleted answers 502 (`agent_deleted`). Closing the stream does not stop the run (unless `on_disconnect: "cancel"`); its events stay in the run’s log. ' +
    'When a tool needs approval (tools.json `interrupt_config`, or a write under `/memories/`), `__interrupt__` appears in `updates` and `values`, the stream ends, the run is `success` and the thread `interrupted`. ' +
    'Resume with `command: {resume: {decisions: [...]}}`: a wrong number of decisions, a decision type not allowed or an `edit` naming a tool the agent lacks is a 422, a thread with nothing pending a 409 (`thread_not_interrupted`), a thread with an active run a 409 (`thread_busy`); the thread stays interrupted.',
  security: apiKeySecurity,
  request: { params, body: jsonBody(StreamRunRequest) },
  responses: { 200: sse, ...errorResponses('deepagents', [400, 404, 409, 413, 415, 422, 502, 503]) },
});

const join = createRoute({
  method: 'get',
  path: `${BASE}/{run_id}/stream`,
  tags,
  summary: 'Join the stream of a run',
  description: 'Replays the run’s events after `Last-Event-ID` (from the start without it), then follows live events until the run ends.',
  security: apiKeySecurity,
  request: {
    params: runParams,
    headers: z.object({
      'last-event-id': z.string().regex(/^(\d+|-1)$/, 'must be an event id').optional().openapi({ description: 'Last event id received (`-1` or none: from the start).' }),
    }),
    query: z.object({
      stream_mode: z.union([z.string(), z.array(z.string())]).optional().openapi({ description: 'LangGraph: only the events of these modes (of those the run streams), plus `metadata`, `error` and `end`. Default: every mode the run streams.' }),
      cancel_on_disconnect: z.string().optional().openapi({ description: 'LangGraph: `1`/`true` cancels the run when this client goes away.' }),
    }),
  },
  responses: { 200: sse, ...errorResponses('deepagents', [404, 422, 503]) },
});

const cancel = createRoute({
  method: 'post',
  path: `${BASE}/{run_id}/cancel`,
  tags,
  summary: 'Cancel a run',
  description:
    'Stops a pending or running run wherever it executes: the run ends `interrupted` and the thread is `idle` again (or stays `busy` when another run is queued). ' +
    'Events emitted before the cancel stay in the run’s log. A run that already ended is answered 200 as it is, untouched (a rollback of it deletes nothing), as the LangGraph server answers such a cancel with success. ' +
    '`action=rollback` (LangGraph) also deletes the run and what it wrote into the thread’s state, as if it never started.',
  security: apiKeySecurity,
  request: {
    params: runParams,
    query: z.object({
      action: z.enum(['interrupt', 'rollback']).optional().openapi({ description: 'LangGraph: `interrupt` (default) or `rollback`.' }),
      wait: z.string().optional().openapi({ description: 'LangGraph: `1`/`true` answers once the worker executing the run has stopped it (at most 10 s; a rollback always waits). Without it the run is recorded stopped when this answers, and the thread’s next run starts once the worker has stopped.' }),
    }),
  },
  responses: { 200: jsonResponse(RunSchema, 'The cancelled run (or the run as it ended, when it had already ended).'), ...errorResponses('deepagents', [404, 422]) },
});

const list = createRoute({
  method: 'get',
  path: BASE,
  tags,
  summary: 'List the runs of a thread',
  description: 'Newest first.',
  security: apiKeySecurity,
  request: {
    params,
    query: z.object({
      limit: z.coerce.number().int().min(1).max(1000).default(10).openapi({ description: 'Default 10.' }),
      offset: z.coerce.number().int().min(0).default(0),
      status: z.enum(RUN_STATUSES).optional(),
    }),
  },
  responses: { 200: jsonResponse(z.array(RunSchema), 'Runs, newest first.'), ...errorResponses('deepagents', [404, 422]) },
});

const get = createRoute({
  method: 'get',
  path: `${BASE}/{run_id}`,
  tags,
  summary: 'Get a run',
  security: apiKeySecurity,
  request: { params: runParams },
  responses: { 200: jsonResponse(RunSchema, 'The run.'), ...errorResponses('deepagents', [404, 422]) },
});

/** Routes of runs. */
export function runRoutes({ services, heartbeatMs, streams = new StreamSlots(Number.MAX_SAFE_INTEGER) }: AppDeps) {
  // `Location`: where to join the stream again, relative to the LangGraph API base (as the LangGraph
  // server sends it): the LangGraph SDK rejoins there by itself, with Last-Event-ID, when a stream ends
  // before its run (a stopping server) or is cut off.
  const location = (threadId: string, runId: string) => ({
    'content-location': `/v1/deepagents/threads/${threadId}/runs/${runId}`,
    location: `/threads/${threadId}/runs/${runId}/stream`,
  });
  return newRouter()
    .openapi(stream, async (c) => {
      const { thread_id } = c.req.valid('param');
      const body = c.req.valid('json');
      const caller = c.get('caller');
      // A slot first: a stream refused for capacity must not leave a run behind.
      const release = streams.acquire();
      let run;
      try {
        // Either wire form (hosted or LangGraph) becomes the same run.
        run = await startRun(services, caller, thread_id, body);
      } catch (error) {
        release();
        throw error;
      }
      const runId = run.id;
      return sseResponse({
        events: (signal) => services.runs.events(runId, 0, signal, run),
        heartbeatMs,
        onClose: release,
        headers: location(thread_id, run.id),
        ...(body.on_disconnect === 'cancel'
          ? { onClientGone: () => void services.runs.cancel(caller, thread_id, run.id).catch(() => {}) }
          : {}),
      }) as never;
    })
    .openapi(join, async (c) => {
      const { thread_id, run_id } = c.req.valid('param');
      await services.threads.run(c.get('caller'), thread_id, run_id);
      const after = Math.max(0, Number(c.req.valid('header')['last-event-id'] ?? 0));
      const cancelOnDisconnect = truthy(c.req.valid('query').cancel_on_disconnect);
      const caller = c.get('caller');
      const modes = joinModes(c.req.valid('query').stream_mode);
      const release = streams.acquire();
      return sseResponse({
        events: (signal) => (modes ? onlyModes(services.runs.events(run_id, after, signal), modes) : services.runs.events(run_id, after, signal)),
        heartbeatMs,
        onClose: release,
        headers: location(thread_id, run_id),
        ...(cancelOnDisconnect ? { onClientGone: () => void services.runs.cancel(caller, thread_id, run_id).catch(() => {}) } : {}),
      }) as never;
    })
    .openapi(cancel, async (c) => {
      const { thread_id, run_id } = c.req.valid('param');
      return c.json(presentRun(await services.runs.cancel(c.get('caller'), thread_id, run_id, c.req.valid('query').action, truthy(c.req.valid('query').wait))), 200);
    })
    .openapi(list, async (c) => {
      const runs = await services.threads.runs(c.get('caller'), c.req.valid('param').thread_id, c.req.valid('query'));
      return c.json(runs.map(presentRun), 200);
    })
    .openapi(get, async (c) => {
      const { thread_id, run_id } = c.req.valid('param');
      return c.json(presentRun(await services.threads.run(c.get('caller'), thread_id, run_id)), 200);
    });
}

/** The event names of the stream modes a join asks for (undefined: all), or a 422 naming a bad mode. */
function joinModes(sent: string | string[] | undefined): Set<string> | undefined {
  if (sent === undefined) return undefined;
  const list = typeof sent === 'string' ? [sent] : sent;
  if (list.length === 0) return undefined;
  const names = new Set<string>();
  list.forEach((mode, i) => {
    if (!(STREAM_MODES as readonly string[]).includes(mode)) throw invalidQuery(typeof sent === 'string' ? ['stream_mode'] : ['stream_mode', i], `unknown stream mode "${mode}"; served: ${STREAM_MODES.join(', ')}`);
    names.add(mode === 'messages-tuple' ? 'messages' : mode);
  });
  return names;
}

/** The mode events of `events` whose mode is in `names` (subagents' `<mode>|<ns>` too), and every other event. */
async function* onlyModes(events: AsyncIterable<StoredEvent>, names: Set<string>): AsyncGenerator<StoredEvent> {
  const modeEvents = new Set<string>(STREAM_MODES.map((m) => (m === 'messages-tuple' ? 'messages' : m)));
  for await (const e of events) {
    const base = e.event.split('|')[0]!;
    if (!modeEvents.has(base) || names.has(base)) yield e;
  }
}

/** A LangGraph boolean query flag: `1` or `true`. */
function truthy(flag: string | undefined): boolean {
  return flag === '1' || flag === 'true';
}
