// GET /v1/deepagents/agents/{agent_id}/health: the hosted SDK's agent health check.
import { createRoute, z } from '@hono/zod-openapi';
import type { AppDeps } from '../../http/deps.js';
import { apiKeySecurity, errorResponses, jsonResponse, uuidParam } from '../../http/openapi.js';
import { newRouter } from '../../http/router.js';

const ServerHealthSchema = z
  .object({
    mcp_server_url: z.string(),
    mcp_server_id: z.uuid().nullable().openapi({ description: 'The registration at this URL; null when none is registered.' }),
    mcp_server_name: z.string().nullable(),
    ok: z.boolean(),
    error_code: z
      .enum(['auth_failed', 'unreachable', 'invalid_response'])
      .nullable()
      .openapi({ description: '`auth_failed`: the server refused the credentials, or your principal has not authorized an OAuth-backed server; `unreachable`: no answer (or no server registered at the URL); `invalid_response`: it answered, but not as an MCP server. Null when `ok`.' }),
    error: z.string().nullable().openapi({ description: 'What failed, in words; null when `ok`.' }),
  })
  .openapi('McpServerHealth');

const AgentHealthSchema = z
  .object({
    agent_id: z.uuid(),
    mcp_check: z.object({
      ok: z.boolean().openapi({ description: 'True only when every server is healthy (also when the agent names none).' }),
      servers: z.array(ServerHealthSchema).openapi({ description: 'One per tool server URL the agent or a subagent names, sorted by URL.' }),
    }),
  })
  .openapi('AgentHealth');

const health = createRoute({
  method: 'get',
  path: '/v1/deepagents/agents/{agent_id}/health',
  tags: ['Agents'],
  summary: 'Check an agent’s health',
  description:
    'Probes every tool server the agent’s `tools.json` and its subagents’ name, in parallel, with one MCP `initialize` and the credentials a run of yours would send (its stored headers, or your OAuth token). Each probe ends within 10 seconds. A failing server is `ok: false` in a 200 answer, never an error status. Needs invoke permission (admin or member), as listing a server’s tools does.',
  security: apiKeySecurity,
  request: { params: z.object({ agent_id: uuidParam('agent_id', 'Agent id.') }) },
  responses: { 200: jsonResponse(AgentHealthSchema, 'The health of the agent’s tool servers.'), ...errorResponses('deepagents', [404, 422]) },
});

/** The agent health route. */
export function agentHealthRoutes({ services }: AppDeps) {
  return newRouter().openapi(health, async (c) => {
    const result = await services.agentHealth.check(c.get('caller'), c.req.valid('param').agent_id);
    return c.json(
      {
        agent_id: result.agentId,
        mcp_check: {
          ok: result.ok,
          servers: result.servers.map((s) => ({
            mcp_server_url: s.url,
            mcp_server_id: s.mcpServerId,
            mcp_server_name: s.name,
            ok: s.ok,
            error_code: s.errorCode,
            error: s.error,
          })),
        },
      },
      200,
    );
  });
}
