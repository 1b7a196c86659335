// POST /v1/deepagents/agents/{agent_id}/clone: a new agent with the same tree (the hosted SDK's clone).
import { createRoute, z } from '@hono/zod-openapi';
import type { AppDeps } from '../../http/deps.js';
import { apiKeySecurity, errorResponses, jsonResponse, uuidParam } from '../../http/openapi.js';
import { newRouter } from '../../http/router.js';
import { AgentSchema, presentAgent } from './schemas.js';

const clone = createRoute({
  method: 'post',
  path: '/v1/deepagents/agents/{agent_id}/clone',
  tags: ['Agents'],
  summary: 'Clone an agent',
  description: 'Creates a new agent whose first revision has the same files as the agent’s head (instructions, tools.json, skills, subagents). `name` renames the copy; it keeps the name otherwise.',
  security: apiKeySecurity,
  request: {
    params: z.object({ agent_id: uuidParam('agent_id', 'The agent to copy.') }),
    body: { required: false, content: { 'application/json': { schema: z.object({ name: z.string().trim().min(1).max(200).optional() }).openapi('CloneAgentRequest') } } },
  },
  responses: { 201: jsonResponse(AgentSchema, 'The new agent.'), ...errorResponses('deepagents', [400, 404, 413, 415, 422]) },
});

/** The clone route. */
export function agentCloneRoutes({ services }: AppDeps) {
  return newRouter().openapi(clone, async (c) => {
    const agent = await services.agents.clone(c.get('caller'), c.req.valid('param').agent_id, c.req.valid('json')?.name);
    return c.json(presentAgent(agent, false), 201);
  });
}
