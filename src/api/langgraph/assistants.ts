// LangGraph's assistants over Hangar's agents: an agent is an assistant (its id is `assistant_id`
// and `graph_id`), read-only here; agents are made and changed through /agents.
import { createRoute, z } from '@hono/zod-openapi';
import type { Caller } from '../../core/caller.js';
import type { AgentSummary } from '../../core/agents/service.js';
import { HangarError, invalidField } from '../../core/errors.js';
import type { Services } from '../../core/services.js';
import type { AppDeps } from '../../http/deps.js';
import { apiKeySecurity, errorResponses, jsonBody, jsonResponse } from '../../http/openapi.js';
import { newRouter } from '../../http/router.js';
import { shownTo } from '../agents/viewer.js';

const BASE = '/v1/deepagents/assistants';
const tags = ['Assistants (LangGraph)'];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const AssistantSchema = z
  .object({
    assistant_id: z.uuid().openapi({ description: 'The agent id.' }),
    graph_id: z.string().openapi({ description: 'Also the agent id: every agent is its own graph.' }),
    name: z.string(),
    description: z.string().nullable(),
    version: z.number().int().openapi({ description: 'The number of the agent’s head revision (1 for a new agent).' }),
    config: z.object({ configurable: z.record(z.string(), z.unknown()) }),
    context: z.record(z.string(), z.unknown()),
    metadata: z.record(z.string(), z.unknown()).openapi({ description: '`revision` (the head commit) and `model_id`.' }),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('Assistant');

const SearchRequest = z
  .object({
    graph_id: z.string().optional().openapi({ description: 'Only this agent (graph id = agent id).' }),
    name: z.string().optional().openapi({ description: 'Only agents with exactly this name.' }),
    metadata: z
      .record(z.string(), z.unknown())
      .optional()
      .openapi({ description: 'Agents whose assistant metadata holds these keys and values: `revision` (the head commit) and `model_id`; any other key matches no agent.' }),
    limit: z.number().int().min(1).max(1000).default(10),
    offset: z.number().int().min(0).default(0),
    sort_by: z.enum(['assistant_id', 'graph_id', 'name', 'created_at', 'updated_at']).optional(),
    sort_order: z.enum(['asc', 'desc']).optional(),
    select: z.array(z.string()).optional().openapi({ description: 'Accepted; every field is returned.' }),
  })
  .openapi('SearchAssistantsRequest');

const CountRequest = SearchRequest.pick({ graph_id: true, name: true, metadata: true }).openapi('CountAssistantsRequest');
const idParam = z.object({ assistant_id: z.string().min(1).openapi({ param: { name: 'assistant_id', in: 'path' }, description: 'Agent id, or an agent name.' }) });

const search = createRoute({
  method: 'post',
  path: `${BASE}/search`,
  operationId: 'searchAssistants',
  tags,
  summary: 'Search assistants (agents)',
  description: 'LangGraph’s assistant search over the workspace’s agents. The body is optional.',
  security: apiKeySecurity,
  request: { body: { required: false, content: { 'application/json': { schema: SearchRequest } } } },
  responses: { 200: jsonResponse(z.array(AssistantSchema), 'Matching assistants.'), ...errorResponses('deepagents', [400, 415, 422]) },
});

const count = createRoute({
  method: 'post',
  path: `${BASE}/count`,
  operationId: 'countAssistants',
  tags,
  summary: 'Count assistants (agents)',
  security: apiKeySecurity,
  request: { body: { required: false, content: { 'application/json': { schema: CountRequest } } } },
  responses: { 200: jsonResponse(z.number().int(), 'How many match.'), ...errorResponses('deepagents', [400, 415, 422]) },
});

const get = createRoute({
  method: 'get',
  path: `${BASE}/{assistant_id}`,
  operationId: 'getAssistant',
  tags,
  summary: 'Get an assistant (agent)',
  security: apiKeySecurity,
  request: { params: idParam },
  responses: { 200: jsonResponse(AssistantSchema, 'The assistant.'), ...errorResponses('deepagents', [404, 422]) },
});

const graph = createRoute({
  method: 'get',
  path: `${BASE}/{assistant_id}/graph`,
  operationId: 'getAssistantGraph',
  tags,
  summary: 'Get the graph of an assistant',
  description: 'The agent’s LangGraph graph at its head revision, as `{nodes, edges}` (building it connects to its tool servers).',
  security: apiKeySecurity,
  request: { params: idParam, query: z.object({ xray: z.union([z.literal('true'), z.literal('false'), z.string().regex(/^\d+$/)]).optional() }) },
  responses: { 200: jsonResponse(z.record(z.string(), z.unknown()), 'Nodes and edges.'), ...errorResponses('deepagents', [404, 422, 502]) },
});

const schemas = createRoute({
  method: 'get',
  path: `${BASE}/{assistant_id}/schemas`,
  operationId: 'getAssistantSchemas',
  tags,
  summary: 'Get the schemas of an assistant',
  description: 'JSON schemas of the input, output and state of a deep agent (`messages`, `files`, `todos`), and its empty config and context.',
  security: apiKeySecurity,
  request: { params: idParam },
  responses: { 200: jsonResponse(z.record(z.string(), z.unknown()), 'The schemas.'), ...errorResponses('deepagents', [404, 422]) },
});

const SUBGRAPHS_ABOUT =
  'An agent’s graph has no subgraph nodes: its subagents run inside the `task` tool (their events stream under `tools:<task id>` namespaces with `stream_subgraphs`), so this is always `{}`, as a LangGraph server answers for the same graph.';
const recurseQuery = z.object({ recurse: z.enum(['true', 'false']).optional() });

const subgraphs = createRoute({
  method: 'get',
  path: `${BASE}/{assistant_id}/subgraphs`,
  operationId: 'getAssistantSubgraphs',
  tags,
  summary: 'Get the subgraphs of an assistant',
  description: SUBGRAPHS_ABOUT,
  security: apiKeySecurity,
  request: { params: idParam, query: recurseQuery },
  responses: { 200: jsonResponse(z.record(z.string(), z.unknown()), 'Subgraphs by namespace: none.'), ...errorResponses('deepagents', [404, 422]) },
});

const subgraphsAt = createRoute({
  method: 'get',
  path: `${BASE}/{assistant_id}/subgraphs/{namespace}`,
  operationId: 'getAssistantSubgraphsByNamespace',
  tags,
  summary: 'Get the subgraphs of an assistant at a namespace',
  description: SUBGRAPHS_ABOUT,
  security: apiKeySecurity,
  request: { params: idParam.extend({ namespace: z.string().min(1).openapi({ param: { name: 'namespace', in: 'path' }, description: 'A subgraph namespace, e.g. `parent|child`.' }) }), query: recurseQuery },
  responses: { 200: jsonResponse(z.record(z.string(), z.unknown()), 'Subgraphs by namespace: none.'), ...errorResponses('deepagents', [404, 422]) },
});

const createRefused = createRoute({
  method: 'post',
  path: BASE,
  operationId: 'createAssistant',
  tags,
  summary: 'Create an assistant (refused)',
  description: 'Assistants are agents: create one with `POST /v1/deepagents/agents`. This answers 405 (`method_not_allowed`).',
  security: apiKeySecurity,
  request: { body: jsonBody(z.record(z.string(), z.unknown())) },
  responses: { ...errorResponses('deepagents', [405]) },
});

/** The agent id an assistant reference names: an agent id, or the name of exactly one agent. */
export async function resolveAssistant(services: Services, caller: Caller, ref: string, at: string[]): Promise<string> {
  if (UUID.test(ref)) return (await services.agents.findRow(caller.workspaceId, ref)).id;
  const named = await services.agents.search(caller, { name: ref, limit: 2, offset: 0, sortBy: 'created_at', sortOrder: 'asc' });
  if (named.length === 1) return named[0]!.id;
  if (named.length > 1) throw invalidField(at, `more than one agent is named "${ref}"; use the agent id`);
  throw new HangarError('agent_not_found', `no agent with id or name "${ref}" in this workspace`);
}

/** The assistant form of an agent. */
export function presentAssistant(a: AgentSummary): z.infer<typeof AssistantSchema> {
  return {
    assistant_id: a.id,
    graph_id: a.id,
    name: a.name,
    description: a.description || null,
    version: a.revisionCount,
    config: { configurable: {} },
    context: {},
    metadata: { revision: a.revision, model_id: a.runtime.model.model_id },
    created_at: a.createdAt.toISOString(),
    updated_at: a.updatedAt.toISOString(),
  };
}

const MESSAGES = { type: 'array', items: { type: 'object', description: 'A message (`type`, `content`, `id`, …).' } };
const STATE_SCHEMA = {
  type: 'object',
  properties: {
    messages: MESSAGES,
    files: { type: 'object', additionalProperties: { type: 'object', properties: { content: { type: 'array', items: { type: 'string' } }, created_at: { type: 'string' }, modified_at: { type: 'string' } } } },
    todos: { type: 'array', items: { type: 'object', properties: { content: { type: 'string' }, status: { type: 'string', enum: ['pending', 'in_progress', 'completed'] } } } },
  },
};

/** Routes of assistants. */
export function assistantRoutes({ services }: AppDeps) {
  const sortColumn = (s: string | undefined) => (s === 'name' ? 'name' : s === 'updated_at' ? 'updated_at' : 'created_at');
  const filterOf = async (caller: Caller, body: { graph_id?: string | undefined; name?: string | undefined; metadata?: Record<string, unknown> | undefined }) => {
    // LangGraph's metadata filter is containment: an assistant matches when its metadata holds every
    // key with that value. An agent's assistant metadata is `{revision, model_id}`.
    const metadata = body.metadata ?? {};
    const text = (key: string) => (typeof metadata[key] === 'string' ? (metadata[key] as string) : undefined);
    const none = Object.entries(metadata).some(([key, value]) => !['revision', 'model_id'].includes(key) || typeof value !== 'string');
    return { name: body.name, ids: body.graph_id === undefined ? undefined : UUID.test(body.graph_id) ? [body.graph_id] : [], revision: text('revision'), modelId: text('model_id'), none };
  };
  return newRouter()
    .openapi(search, async (c) => {
      const caller = c.get('caller');
      const body = SearchRequest.parse(c.req.valid('json') ?? {});
      const agents = await services.agents.search(caller, {
        ...(await filterOf(caller, body)),
        limit: body.limit,
        offset: body.offset,
        sortBy: sortColumn(body.sort_by),
        sortOrder: body.sort_order ?? 'desc',
      });
      return c.json(await shownTo(services, caller, agents.map(presentAssistant)), 200);
    })
    .openapi(count, async (c) => {
      const caller = c.get('caller');
      return c.json(await services.agents.count(caller, await filterOf(caller, CountRequest.parse(c.req.valid('json') ?? {}))), 200);
    })
    .openapi(get, async (c) => {
      const caller = c.get('caller');
      const id = await resolveAssistant(services, caller, c.req.valid('param').assistant_id, ['assistant_id']);
      return c.json(await shownTo(services, caller, presentAssistant(await services.agents.get(caller, id))), 200);
    })
    .openapi(graph, async (c) => {
      const caller = c.get('caller');
      const id = await resolveAssistant(services, caller, c.req.valid('param').assistant_id, ['assistant_id']);
      const agent = await services.agents.findRow(caller.workspaceId, id);
      const xray = c.req.valid('query').xray;
      return c.json(await shownTo(services, caller, await services.threads.graphOf(caller, { agentId: agent.id, revision: agent.head }, xray !== undefined && xray !== 'false' && xray !== '0')), 200);
    })
    .openapi(schemas, async (c) => {
      const caller = c.get('caller');
      const id = await resolveAssistant(services, caller, c.req.valid('param').assistant_id, ['assistant_id']);
      return c.json(
        {
          graph_id: id,
          input_schema: { type: 'object', properties: { messages: MESSAGES } },
          output_schema: STATE_SCHEMA,
          state_schema: STATE_SCHEMA,
          config_schema: { type: 'object', properties: {} },
          context_schema: { type: 'object', properties: {} },
        },
        200,
      );
    })
    .openapi(subgraphs, async (c) => {
      await resolveAssistant(services, c.get('caller'), c.req.valid('param').assistant_id, ['assistant_id']);
      return c.json({}, 200);
    })
    .openapi(subgraphsAt, async (c) => {
      await resolveAssistant(services, c.get('caller'), c.req.valid('param').assistant_id, ['assistant_id']);
      return c.json({}, 200);
    })
    .openapi(createRefused, () => {
      throw new HangarError('method_not_allowed', 'assistants are agents: create one with POST /v1/deepagents/agents');
    });
}
