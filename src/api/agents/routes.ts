// /v1/deepagents/agents: agents as versioned file trees; every create and update is a git commit.
import { createRoute, z } from '@hono/zod-openapi';
import type { AppDeps } from '../../http/deps.js';
import { apiKeySecurity, errorResponses, jsonBody, jsonResponse, uuidParam } from '../../http/openapi.js';
import { newRouter } from '../../http/router.js';
import { isTimeZone } from '../../runtime/agent/clock.js';
import {
  AgentSchema,
  CreateAgentRequest,
  IncludeFilesQuery,
  includesFiles,
  ListAgentsQuery,
  ListAgentsResponse,
  presentAgent,
  presentSummary,
  UpdateAgentRequest,
} from './schemas.js';
import { revisionRoutes } from './revisions.js';
import { shownTo } from './viewer.js';

const BASE = '/v1/deepagents/agents';
const tags = ['Agents'];
const params = z.object({ agent_id: uuidParam('agent_id', 'Agent id.') });
/** The hosted contract's header that stamps the user's zone on the agent. */
const userTimezone = z
  .string()
  .refine(isTimeZone, 'must be an IANA time zone name (e.g. Europe/Paris)')
  .optional()
  .openapi({ description: 'The user’s IANA time zone, stamped into `runtime.user_timezone` (over what the body’s `runtime` says).', example: 'America/Los_Angeles' });
const withZone = <T extends object>(body: T, zone: string | undefined): T => (zone === undefined ? body : { ...body, user_timezone: zone });

const create = createRoute({
  method: 'post',
  path: BASE,
  tags,
  summary: 'Create an agent',
  description:
    'Writes the agent’s file tree (`agent.json`, `AGENTS.md`, `tools.json`, `skills/`, `subagents/`, plus any `files`) as the first commit of its repository. All or nothing: a 4xx writes nothing. Every tool server URL must be registered in the workspace; a model id without a colon must name a saved model configuration.',
  security: apiKeySecurity,
  request: { query: IncludeFilesQuery, headers: z.object({ 'x-user-timezone': userTimezone }), body: jsonBody(CreateAgentRequest) },
  responses: { 201: jsonResponse(AgentSchema, 'Created; `revision` is the first commit.'), ...errorResponses('deepagents', [400, 413, 415, 422]) },
});

const list = createRoute({
  method: 'get',
  path: BASE,
  tags,
  summary: 'List agents',
  description: '`{items, next_cursor}`; deleted agents are not listed.',
  security: apiKeySecurity,
  request: { query: ListAgentsQuery },
  responses: { 200: jsonResponse(ListAgentsResponse, 'One page of agents.'), ...errorResponses('deepagents', [422]) },
});

const get = createRoute({
  method: 'get',
  path: `${BASE}/{agent_id}`,
  tags,
  summary: 'Get an agent',
  description: 'The agent at its head revision. A viewer key reads every field and file with tool server credentials redacted (`?api_key=[redacted]`), as in all the agent reads.',
  security: apiKeySecurity,
  request: { params, query: IncludeFilesQuery },
  responses: { 200: jsonResponse(AgentSchema, 'The agent.'), ...errorResponses('deepagents', [404, 422]) },
});

const update = createRoute({
  method: 'patch',
  path: `${BASE}/{agent_id}`,
  tags,
  summary: 'Update an agent',
  description:
    'Always makes a new commit (new `revision`). A given field replaces its value wholesale (`tools`, `skills`, `subagents`, `extras`, and every nested object); omitted fields keep their values. Concurrent updates are applied one after the other: none is lost and the history stays a single line. With `If-Match: "<revision>"` the update is made only if that revision is still the head (else 412, `agent_revision_mismatch`, and nothing is written): a client that computed its change from what it read cannot overwrite a change it has not seen. A tool server URL the agent did not name before must be registered; one it already names is not checked again, so an agent whose tool server was deleted can still be updated.',
  security: apiKeySecurity,
  request: {
    params,
    query: IncludeFilesQuery,
    headers: z.object({
      'if-match': z.string().optional().openapi({ description: 'The revision (commit id, optionally quoted as an entity tag) the update was computed from; `*` matches any.' }),
      'x-user-timezone': userTimezone,
    }),
    body: jsonBody(UpdateAgentRequest),
  },
  responses: { 200: jsonResponse(AgentSchema, 'Updated.'), ...errorResponses('deepagents', [400, 404, 412, 413, 415, 422]) },
});

const remove = createRoute({
  method: 'delete',
  path: `${BASE}/{agent_id}`,
  tags,
  summary: 'Delete an agent',
  description: 'Idempotent (204 again when repeated). The agent’s threads are not deleted; new runs on them answer 502.',
  security: apiKeySecurity,
  request: { params },
  responses: { 204: { description: 'Deleted.' }, ...errorResponses('deepagents', [422]) },
});

/** Routes of agents and their revisions. */
export function agentRoutes(deps: AppDeps) {
  const { services } = deps;
  const router = newRouter()
    .openapi(create, async (c) => {
      const agent = await services.agents.create(c.get('caller'), withZone(c.req.valid('json'), c.req.valid('header')['x-user-timezone']));
      return c.json(presentAgent(agent, includesFiles(c.req.valid('query'))), 201);
    })
    .openapi(list, async (c) => {
      const q = c.req.valid('query');
      const caller = c.get('caller');
      const page = await services.agents.list(caller, { pageSize: q.page_size, cursor: q.cursor, name: q.name, sortBy: q.sort_by, sortOrder: q.sort_order });
      return c.json(await shownTo(services, caller, { items: page.items.map(presentSummary), next_cursor: page.nextCursor }), 200);
    })
    .openapi(get, async (c) => {
      const caller = c.get('caller');
      const agent = await services.agents.get(caller, c.req.valid('param').agent_id);
      return c.json(await shownTo(services, caller, presentAgent(agent, includesFiles(c.req.valid('query'))), [agent.definition]), 200);
    })
    .openapi(update, async (c) => {
      const headers = c.req.valid('header');
      const { message, ...body } = c.req.valid('json');
      const agent = await services.agents.update(c.get('caller'), c.req.valid('param').agent_id, withZone(body, headers['x-user-timezone']), { ifMatch: headers['if-match'], message });
      return c.json(presentAgent(agent, includesFiles(c.req.valid('query'))), 200);
    })
    .openapi(remove, async (c) => {
      await services.agents.delete(c.get('caller'), c.req.valid('param').agent_id);
      return c.body(null, 204);
    });
  router.route('/', revisionRoutes(deps));
  return router;
}
