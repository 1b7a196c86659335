// /v1/deepagents/agents/{agent_id}/revisions: the agent's commits, and the agent as it was at one.
import { createRoute, z } from '@hono/zod-openapi';
import type { AppDeps } from '../../http/deps.js';
import { apiKeySecurity, errorResponses, jsonResponse, uuidParam } from '../../http/openapi.js';
import { newRouter } from '../../http/router.js';
import { AgentSchema, presentAgent } from './schemas.js';
import { shownTo } from './viewer.js';

const BASE = '/v1/deepagents/agents/{agent_id}/revisions';
const tags = ['Agents'];

const RevisionSchema = z
  .object({
    id: z.string().openapi({ description: 'Commit id (40 hex digits); the `revision` the agent had after it.' }),
    parent: z.string().nullable().openapi({ description: 'The previous commit; `null` for the create commit.' }),
    number: z.number().int().openapi({ description: '1 for the create commit, then one more per update.' }),
    created_at: z.iso.datetime(),
    message: z.string(),
    changed_paths: z.array(z.string()).openapi({ description: 'Paths added, changed or removed by this commit.' }),
  })
  .openapi('AgentRevision');

const RevisionList = z
  .object({ items: z.array(RevisionSchema), next_cursor: z.string().nullable() })
  .openapi('ListAgentRevisionsResponse');

const AgentAtRevision = AgentSchema.extend({ message: z.string(), parent: z.string().nullable() }).openapi('AgentAtRevision');

const list = createRoute({
  method: 'get',
  path: BASE,
  tags,
  summary: 'List an agent’s revisions',
  description: 'Newest first. The same commits `git log` shows on a clone.',
  security: apiKeySecurity,
  request: {
    params: z.object({ agent_id: uuidParam('agent_id', 'Agent id.') }),
    query: z.object({
      page_size: z.coerce.number().int().min(1).max(100).default(20),
      cursor: z.string().optional().openapi({ description: '`next_cursor` of the previous page.' }),
    }),
  },
  responses: { 200: jsonResponse(RevisionList, 'One page of revisions.'), ...errorResponses('deepagents', [404, 422]) },
});

const get = createRoute({
  method: 'get',
  path: `${BASE}/{revision}`,
  tags,
  summary: 'Get an agent at a revision',
  description: 'The agent as it was after that commit, `files` included. `revision` may be abbreviated to 7 or more hex digits, in either case.',
  security: apiKeySecurity,
  request: {
    params: z.object({
      agent_id: uuidParam('agent_id', 'Agent id.'),
      revision: z.string().openapi({ param: { name: 'revision', in: 'path' }, description: 'Commit id.' }),
    }),
  },
  responses: { 200: jsonResponse(AgentAtRevision, 'The agent at that revision.'), ...errorResponses('deepagents', [404, 422]) },
});

/** Routes of agent revisions. */
export function revisionRoutes({ services }: AppDeps) {
  return newRouter()
    .openapi(list, async (c) => {
      const q = c.req.valid('query');
      const caller = c.get('caller');
      const page = await services.agents.revisions(caller, c.req.valid('param').agent_id, { pageSize: q.page_size, cursor: q.cursor });
      return c.json(
        await shownTo(services, caller, {
          items: page.items.map((r) => ({
            id: r.id,
            parent: r.parent,
            number: r.number,
            created_at: r.createdAt.toISOString(),
            message: r.message,
            changed_paths: r.changedPaths,
          })),
          next_cursor: page.nextCursor,
        }),
        200,
      );
    })
    .openapi(get, async (c) => {
      const { agent_id, revision } = c.req.valid('param');
      const caller = c.get('caller');
      const agent = await services.agents.atRevision(caller, agent_id, revision);
      return c.json(await shownTo(services, caller, { ...presentAgent(agent, true), message: agent.message, parent: agent.parent }, [agent.definition]), 200);
    });
}
