// GET /v1/deepagents/threads: the hosted SDK's thread list (one agent's threads, latest activity first).
import { createRoute, z } from '@hono/zod-openapi';
import { invalid } from '../../core/errors.js';
import type { AppDeps } from '../../http/deps.js';
import { apiKeySecurity, errorResponses, jsonResponse } from '../../http/openapi.js';
import { newRouter } from '../../http/router.js';
import { presentThread, ThreadSchema, ThreadStatus } from './schemas.js';

const flag = (description: string) => z.enum(['true', 'false', '1', '0']).optional().openapi({ description });
const isSet = (v: string | undefined) => v === 'true' || v === '1';

const ListThreadsQuery = z.object({
  agent_id: z.uuid({ message: 'must be a UUID' }).openapi({ description: 'The agent whose threads to list (required).' }),
  page_size: z.coerce.number().int().min(1).max(20).default(20).openapi({ description: 'Items per page: 1 to 20, default 20.' }),
  cursor: z.string().optional().openapi({ description: '`next_cursor` of the previous page.' }),
  status: ThreadStatus.optional(),
  pinned: flag('Hangar does not pin threads: `true` lists none, `false` changes nothing.'),
  test_run: flag('`true`: only test-run threads (created with `options.test_run`); by default only the others.'),
  needs_action: flag('`true`: only threads waiting for a person (`interrupted`). Not with `status`.'),
});

const list = createRoute({
  method: 'get',
  path: '/v1/deepagents/threads',
  tags: ['Threads'],
  summary: 'List an agent’s threads',
  description: '`{items, next_cursor}`: one page of the agent’s threads, the latest activity (a run starting or ending, a metadata change) first, each with its current `values`.',
  security: apiKeySecurity,
  request: { query: ListThreadsQuery },
  responses: {
    200: jsonResponse(z.object({ items: z.array(ThreadSchema), next_cursor: z.string().nullable() }).openapi('ListThreadsResponse'), 'One page of threads.'),
    ...errorResponses('deepagents', [422]),
  },
});

/** The thread list route. */
export function threadListRoutes({ services }: AppDeps) {
  return newRouter().openapi(list, async (c) => {
    const q = c.req.valid('query');
    if (isSet(q.needs_action) && q.status) throw invalid([{ loc: ['query', 'needs_action'], msg: 'cannot be combined with status', type: 'value_error' }]);
    const page = await services.threads.list(c.get('caller'), {
      agentId: q.agent_id,
      pageSize: q.page_size,
      cursor: q.cursor,
      status: q.status,
      testRun: isSet(q.test_run),
      needsAction: isSet(q.needs_action),
      pinned: q.pinned === undefined ? undefined : isSet(q.pinned),
    });
    return c.json({ items: page.threads.map(presentThread), next_cursor: page.nextCursor }, 200);
  });
}
