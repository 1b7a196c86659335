// Stateless runs (LangGraph's `runs.stream / wait / create` with no thread): POST /runs/stream,
// /runs/wait and /runs. Each makes a new thread for its run, with the same checks, roles and tracing
// as a run on a thread; with `on_completion: "delete"` (the default) that thread is temporary: deleted
// once the run has ended, by the request that followed it, else by the temporary thread sweeper.
import { randomUUID } from 'node:crypto';
import { createRoute, z } from '@hono/zod-openapi';
import type { Caller } from '../../core/caller.js';
import { invalid, type FieldIssue } from '../../core/errors.js';
import type { Services } from '../../core/services.js';
import type { Run } from '../../core/threads/service.js';
import type { AppDeps } from '../../http/deps.js';
import { apiKeySecurity, errorResponses, jsonBody, jsonResponse } from '../../http/openapi.js';
import { newRouter } from '../../http/router.js';
import { sseResponse, StreamSlots } from '../../http/sse.js';
import type { StoredEvent } from '../../runtime/events/types.js';
import { presentRun, RunSchema } from '../threads/schemas.js';
import { RunRequest, startRunInput, type RunRequestBody } from './run-request.js';
import { resultOf, RunResult } from './runs.js';

const tags = ['Runs'];

const StatelessRunRequest = RunRequest.extend({
  on_completion: z.enum(['delete', 'keep']).optional().openapi({
    description: '`delete` (default): the run’s thread is deleted once the run has ended. `keep`: it stays, an ordinary thread (its id is in the run and in `Content-Location`).',
  }),
}).openapi('StatelessRunRequest', { description: 'As a run on a thread, without what needs one: no `command`, `checkpoint`, `checkpoint_id` or `input: null` (422); `if_not_exists` and `multitask_strategy` do not apply.' });
type StatelessBody = z.infer<typeof StatelessRunRequest>;

const what =
  'Runs the agent on a new thread made for this run (LangGraph’s stateless run: `client.runs.…(null, assistantId, …)`), with the same body, checks and roles as a run on a thread. ' +
  'With `on_completion: "delete"` (the default) the thread is deleted once the run has ended: when this request has seen the end, else (a client gone, a process stopped) by a sweeper within a minute or so of `HANGAR_TEMPORARY_THREAD_GRACE_SECONDS`. Until then it is an ordinary thread, named by `Content-Location`.';
const headers = {
  'Content-Location': { description: 'Path of the run: `/v1/deepagents/threads/{thread_id}/runs/{run_id}`.', schema: { type: 'string' as const } },
};

const stream = createRoute({
  method: 'post',
  path: '/v1/deepagents/runs/stream',
  operationId: 'streamStatelessRun',
  tags,
  summary: 'Start a run without a thread and stream its events',
  description: `${what} Events as on \`POST /threads/{thread_id}/runs/stream\`.`,
  security: apiKeySecurity,
  request: { body: jsonBody(StatelessRunRequest) },
  responses: { 200: { description: 'Server-sent events, as on `POST /threads/{thread_id}/runs/stream`.', content: { 'text/event-stream': { schema: z.string() } }, headers }, ...errorResponses('deepagents', [400, 404, 413, 415, 422, 502, 503]) },
});

const wait = createRoute({
  method: 'post',
  path: '/v1/deepagents/runs/wait',
  operationId: 'waitStatelessRun',
  tags,
  summary: 'Start a run without a thread and wait for its result',
  description: `${what} Answers once the run has ended, with its thread’s state values (as \`POST /threads/{thread_id}/runs/wait\`).`,
  security: apiKeySecurity,
  request: { body: jsonBody(StatelessRunRequest) },
  responses: { 200: jsonResponse(RunResult, 'The result.'), ...errorResponses('deepagents', [400, 404, 413, 415, 422, 502, 503]) },
});

const create = createRoute({
  method: 'post',
  path: '/v1/deepagents/runs',
  operationId: 'createStatelessRun',
  tags,
  summary: 'Start a run without a thread, in the background',
  description: `${what} Answers at once with the run (\`pending\`); nobody follows it here, so a temporary thread is deleted by the sweeper after the run ends (follow or join it on its thread meanwhile).`,
  security: apiKeySecurity,
  request: { body: jsonBody(StatelessRunRequest) },
  responses: { 200: jsonResponse(RunSchema, 'The run, accepted.'), ...errorResponses('deepagents', [400, 404, 413, 415, 422, 502]) },
});

/** Start `body`'s run on a new thread (temporary unless `on_completion: "keep"`); nothing is left behind when it is refused. */
async function startStateless(services: Services, caller: Caller, body: StatelessBody): Promise<Run> {
  const issues: FieldIssue[] = [];
  const issue = (loc: string, msg: string) => issues.push({ loc: ['body', loc], msg, type: 'value_error' });
  if (body.command) issue('command', 'a run without a thread has no interrupt to resume; resume on its thread: POST /threads/{thread_id}/runs/stream');
  if (body.checkpoint || body.checkpoint_id) issue(body.checkpoint ? 'checkpoint' : 'checkpoint_id', 'a run without a thread starts on a new thread, which has no checkpoints; fork a thread with POST /threads/{thread_id}/runs/stream');
  if (body.input === null) issue('input', 'null continues a thread’s checkpoint, and a run without a thread starts on a new one: send input.messages');
  if (issues.length > 0) throw invalid(issues);
  if (body.webhook) services.webhooks.check(body.webhook);
  const { on_completion, if_not_exists: _ifNotExists, multitask_strategy: _strategy, ...rest } = body;
  const threadId = randomUUID();
  // Checked and resolved before the thread exists: a refused run makes none.
  const input = await startRunInput(services, caller, threadId, rest as RunRequestBody);
  await services.threads.create(caller, { thread_id: threadId, agent_id: input.agent_id, temporary: on_completion !== 'keep' });
  try {
    return await services.runs.start(caller, threadId, { ...input, ...(body.webhook ? { webhook: { url: body.webhook } } : {}) });
  } catch (error) {
    await services.threads.delete(caller, threadId).catch(() => {});
    throw error;
  }
}

/** `events`, then the run's temporary thread deleted once they are over (the run has ended). */
async function* thenDelete(events: AsyncIterable<StoredEvent>, services: Services, caller: Caller, run: Run): AsyncGenerator<StoredEvent> {
  let ended = false;
  try {
    yield* events;
    ended = true;
  } finally {
    // Only when the stream saw the end; a client gone leaves it to the sweeper (the run may go on).
    if (ended) await services.threads.deleteTemporary(caller, run.threadId).catch(() => {});
  }
}

/** Routes of stateless runs. */
export function statelessRunRoutes({ services, heartbeatMs, streams = new StreamSlots(Number.MAX_SAFE_INTEGER) }: AppDeps) {
  const location = (run: Run) => ({ 'content-location': `/v1/deepagents/threads/${run.threadId}/runs/${run.id}` });
  return newRouter()
    .openapi(stream, async (c) => {
      const body = c.req.valid('json');
      const caller = c.get('caller');
      // A slot first: a stream refused for capacity must not leave a run behind.
      const release = streams.acquire();
      let run: Run;
      try {
        run = await startStateless(services, caller, body);
      } catch (error) {
        release();
        throw error;
      }
      return sseResponse({
        events: (signal) => thenDelete(services.runs.events(run.id, 0, signal, run), services, caller, run),
        heartbeatMs,
        onClose: release,
        headers: { ...location(run), location: `/threads/${run.threadId}/runs/${run.id}/stream` },
        ...(body.on_disconnect === 'cancel' ? { onClientGone: () => void services.runs.cancel(caller, run.threadId, run.id).catch(() => {}) } : {}),
      }) as never;
    })
    .openapi(wait, async (c) => {
      const caller = c.get('caller');
      const run = await startStateless(services, caller, c.req.valid('json'));
      const result = await resultOf(services, caller, run.threadId, run.id, c.req.raw.signal, run);
      await services.threads.deleteTemporary(caller, run.threadId);
      return c.json(result, 200, location(run));
    })
    .openapi(create, async (c) => {
      const run = await startStateless(services, c.get('caller'), c.req.valid('json'));
      return c.json(presentRun(run), 200, location(run));
    });
}
