// Runs without a stream: start one in the background (the hosted reference's `POST …/runs` and
// LangGraph's `runs.create`), start one and wait for its result (`runs.wait`), wait for a started
// one (`runs.join`), and delete an ended one. Waiting follows the run's own event log.
import { createRoute, z } from '@hono/zod-openapi';
import type { Caller } from '../../core/caller.js';
import type { Services } from '../../core/services.js';
import type { Run } from '../../core/threads/service.js';
import type { AppDeps } from '../../http/deps.js';
import { apiKeySecurity, errorResponses, jsonBody, jsonResponse, uuidParam } from '../../http/openapi.js';
import { newRouter } from '../../http/router.js';
import { presentRun, RunSchema } from '../threads/schemas.js';
import { RunRequest, startRun } from './run-request.js';
import { HangarError } from '../../core/errors.js';

const BASE = '/v1/deepagents/threads/{thread_id}/runs';
const tags = ['Runs'];
const threadParam = uuidParam('thread_id', 'Thread id.');
const params = z.object({ thread_id: threadParam });
const runParams = z.object({ thread_id: threadParam, run_id: uuidParam('run_id', 'Run id.') });
const location = (threadId: string, runId: string) => ({ 'content-location': `/v1/deepagents/threads/${threadId}/runs/${runId}` });
export const RunResult = z
  .record(z.string(), z.unknown())
  .openapi('RunResult', { description: 'The thread’s state values when the run ended; `__interrupt__` when it paused (`[]` at a breakpoint of `interrupt_before` / `interrupt_after`); `__error__` `{error, message}` when it failed.' });

const create = createRoute({
  method: 'post',
  path: BASE,
  operationId: 'createThreadRun',
  tags,
  summary: 'Start a run in the background',
  description:
    'As `POST …/runs/stream` (same body, same checks), but answers at once with the run (`pending`). Follow it on `GET …/runs/{run_id}/stream`, read it on `GET …/runs/{run_id}`, or wait for it on `GET …/runs/{run_id}/join`.',
  security: apiKeySecurity,
  request: { params, body: jsonBody(RunRequest) },
  responses: { 200: jsonResponse(RunSchema, 'The run, accepted.'), ...errorResponses('deepagents', [400, 404, 409, 413, 415, 422, 502]) },
});

const wait = createRoute({
  method: 'post',
  path: `${BASE}/wait`,
  operationId: 'waitThreadRun',
  tags,
  summary: 'Start a run and wait for its result',
  description: 'As `POST …/runs/stream`, but answers once the run has ended, with the thread’s state values. A server that stops first answers 503 `server_stopping` (the run goes on: wait for it on `GET …/runs/{run_id}/join` of another replica).',
  security: apiKeySecurity,
  request: { params, body: jsonBody(RunRequest) },
  responses: { 200: jsonResponse(RunResult, 'The result.'), ...errorResponses('deepagents', [400, 404, 409, 413, 415, 422, 502, 503]) },
});

const join = createRoute({
  method: 'get',
  path: `${BASE}/{run_id}/join`,
  operationId: 'joinThreadRun',
  tags,
  summary: 'Wait for a run to end',
  description: 'Answers once the run has ended (at once if it has), with the thread’s state values. A server that stops first answers 503 `server_stopping` (the run goes on: join it again on another replica).',
  security: apiKeySecurity,
  request: { params: runParams, query: z.object({ cancel_on_disconnect: z.string().optional() }) },
  responses: { 200: jsonResponse(RunResult, 'The result.'), ...errorResponses('deepagents', [404, 422, 503]) },
});

const remove = createRoute({
  method: 'delete',
  path: `${BASE}/{run_id}`,
  operationId: 'deleteThreadRun',
  tags,
  summary: 'Delete a run',
  description: 'Deletes an ended run and its event log. A pending or running run is a 409 (`run_active`): cancel it first.',
  security: apiKeySecurity,
  request: { params: runParams },
  responses: { 204: { description: 'Deleted.' }, ...errorResponses('deepagents', [404, 409, 422]) },
});

/** Follow `runId`'s events to its end; then the result LangGraph's `wait` and `join` answer. */
export async function resultOf(services: Services, caller: Caller, threadId: string, runId: string, signal: AbortSignal, started?: Run): Promise<Record<string, unknown>> {
  let failure: unknown;
  for await (const event of services.runs.events(runId, 0, signal, started)) if (event.event === 'error') failure = event.data;
  if (failure) return { __error__: failure };
  // The events ended before the run did: this server is stopping (its streams end, RunEventHub.endStreams).
  const run = await services.threads.run(caller, threadId, runId);
  if (run.status === 'pending' || run.status === 'running') {
    throw new HangarError('server_stopping', `this server is stopping and run ${runId} has not ended (${run.status}); wait for it again on another replica with GET …/runs/${runId}/join`);
  }
  const state = await services.threads.currentState(caller, threadId);
  // Paused: for a human (its interrupts), or at a breakpoint (`interrupt_before`/`after`: none, as
  // LangGraph's `{__interrupt__: []}`). A task that failed or was cut off is no pause.
  const paused = state.interrupts.length > 0 || (state.next.length > 0 && state.tasks.every((t) => t.error === null));
  return paused ? { ...state.values, __interrupt__: state.interrupts } : state.values;
}

/** Routes of runs without a stream. */
export function langGraphRunRoutes({ services }: AppDeps) {
  return newRouter()
    .openapi(create, async (c) => {
      const caller = c.get('caller');
      const { thread_id } = c.req.valid('param');
      const run = await startRun(services, caller, thread_id, c.req.valid('json'));
      return c.json(presentRun(run), 200, location(thread_id, run.id));
    })
    .openapi(wait, async (c) => {
      const caller = c.get('caller');
      const { thread_id } = c.req.valid('param');
      const run = await startRun(services, caller, thread_id, c.req.valid('json'));
      return c.json(await resultOf(services, caller, thread_id, run.id, c.req.raw.signal, run), 200, location(thread_id, run.id));
    })
    .openapi(join, async (c) => {
      const caller = c.get('caller');
      const { thread_id, run_id } = c.req.valid('param');
      await services.threads.run(caller, thread_id, run_id);
      return c.json(await resultOf(services, caller, thread_id, run_id, c.req.raw.signal), 200);
    })
    .openapi(remove, async (c) => {
      const { thread_id, run_id } = c.req.valid('param');
      await services.threads.deleteRun(c.get('caller'), thread_id, run_id);
      return c.body(null, 204);
    });
}
