// GET /v1/deepagents/threads/{thread_id}/runs/{run_id}/trace: the trace of an agent run.
import { createRoute, z } from '@hono/zod-openapi';
import type { AppDeps } from '../../http/deps.js';
import { apiKeySecurity, errorResponses, jsonResponse, uuidParam } from '../../http/openapi.js';
import { newRouter } from '../../http/router.js';
import { presentTree, TraceRunTreeSchema } from './schemas.js';

const getTrace = createRoute({
  method: 'get',
  path: '/v1/deepagents/threads/{thread_id}/runs/{run_id}/trace',
  tags: ['Tracing'],
  summary: 'Get the trace of a run',
  description:
    'The run tree recorded while the run executed: the root run, each model call (messages, model name, provider, ' +
    'token usage), each tool call (arguments and result) and each subagent, nested in `child_runs`. Secrets are ' +
    'redacted. The tree is stored just after the run\'s stream ends; a read that comes first waits for it. ' +
    '`trace_not_found` when tracing was off for the run or it has not started.',
  security: apiKeySecurity,
  request: { params: z.object({ thread_id: uuidParam('thread_id', 'Thread id.'), run_id: uuidParam('run_id', 'Run id.') }) },
  responses: { 200: jsonResponse(TraceRunTreeSchema, 'The trace.'), ...errorResponses('deepagents', [404, 422]) },
});

/** The run-trace route of the agent runtime surface. */
export function runTraceRoutes({ services }: AppDeps) {
  return newRouter().openapi(getTrace, async (c) => {
    const caller = c.get('caller');
    const { thread_id, run_id } = c.req.valid('param');
    const run = await services.threads.run(caller, thread_id, run_id); // 404 for another workspace's or an unknown run
    return c.json(presentTree(await services.tracing.traceOfAgentRun(caller, thread_id, run_id, run.endedAt)), 200);
  });
}
