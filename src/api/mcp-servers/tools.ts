// What the hosted SDK offers beside registration: list the tools a registered server exposes (with a
// ready-to-paste tools.json entry for each), and the OAuth-provider attach endpoint of the reference.
import { createRoute, z } from '@hono/zod-openapi';
import { canInvoke } from '../../core/caller.js';
import { HangarError } from '../../core/errors.js';
import type { AppDeps } from '../../http/deps.js';
import { apiKeySecurity, errorResponses, jsonResponse, uuidParam } from '../../http/openapi.js';
import { newRouter } from '../../http/router.js';

const BASE = '/v1/deepagents/mcp-servers/{mcp_server_id}';
const tags = ['Tool servers'];
const params = z.object({ mcp_server_id: uuidParam('mcp_server_id', 'Tool server id.') });
/** How long a listing waits for the server. */
const LIST_TIMEOUT_MS = 15_000;

const McpTool = z
  .object({
    name: z.string(),
    description: z.string(),
    input_schema: z.record(z.string(), z.unknown()).openapi({ description: 'The JSON schema of the tool’s arguments, as the server declares it.' }),
    tools_json_entry: z
      .object({ name: z.string(), mcp_server_url: z.string(), mcp_server_name: z.string() })
      .openapi({ description: 'Paste into `tools.json` `tools`.' }),
  })
  .openapi('McpTool');

const listTools = createRoute({
  method: 'get',
  path: `${BASE}/tools`,
  tags,
  summary: 'List the tools of a tool server',
  description:
    'Asks the server (with its stored headers, or the caller’s OAuth token for an OAuth-backed server) which tools it offers. Nothing is cached, so every call is fresh; `force_refresh=true` is accepted. Needs invoke permission (admin or member). The listing follows at most 100 pages and 1,000 tools and ends within 15 seconds; past that it is a 502.',
  security: apiKeySecurity,
  request: { params, query: z.object({ force_refresh: z.enum(['true', 'false', '1', '0']).optional().openapi({ description: 'Accepted; listings are never cached.' }) }) },
  responses: {
    200: jsonResponse(z.object({ tools: z.array(McpTool) }).openapi('McpToolList'), 'The tools.'),
    ...errorResponses('deepagents', [404, 409, 422, 502]),
  },
});

const attachProvider = createRoute({
  method: 'post',
  path: `${BASE}/oauth-provider`,
  tags,
  summary: 'Get the OAuth provider of a tool server',
  description:
    'For an OAuth-backed server (`auth_type: "oauth"` with `oauth_provider_id`): its provider’s `provider_id`, to start an authorization session with. Idempotent. Hangar does not register OAuth clients dynamically, so a server without a provider is a 409 (`mcp_server_not_oauth`). The optional body’s `ls_user_id` is ignored (the caller is the key’s principal).',
  security: apiKeySecurity,
  request: {
    params,
    body: { required: false, content: { 'application/json': { schema: z.object({ ls_user_id: z.string().optional() }).openapi('RegisterMcpOAuthProviderRequest') } } },
  },
  responses: {
    200: jsonResponse(z.object({ oauth_provider_id: z.string() }).openapi('RegisterMcpOAuthProviderResponse'), 'The provider to authorize with.'),
    ...errorResponses('deepagents', [400, 404, 409, 415, 422]),
  },
});

/** Routes of tool listing and OAuth-provider lookup. */
export function mcpServerToolRoutes({ services }: AppDeps) {
  return newRouter()
    .openapi(listTools, async (c) => {
      const caller = c.get('caller');
      if (!canInvoke(caller.role)) throw new HangarError('forbidden', `a ${caller.role} key cannot use a tool server’s credentials`);
      const server = await services.mcpServers.get(caller, c.req.valid('param').mcp_server_id);
      // The same headers as a tool call: the caller's token replaces a stored Authorization header of any case.
      const headers = await services.oauth.toolServerHeaders({ workspaceId: caller.workspaceId, principal: caller.principal, server });
      const tools = await services.mcpServers.listTools(server.url, headers, LIST_TIMEOUT_MS);
      return c.json(
        {
          tools: tools.map((t) => ({
            name: t.name,
            description: t.description,
            input_schema: t.inputSchema,
            tools_json_entry: { name: t.name, mcp_server_url: server.url, mcp_server_name: server.name },
          })),
        },
        200,
      );
    })
    .openapi(attachProvider, async (c) => {
      const caller = c.get('caller');
      const server = await services.mcpServers.get(caller, c.req.valid('param').mcp_server_id);
      if (server.authType !== 'oauth' || !server.oauthProviderId) {
        throw new HangarError('mcp_server_not_oauth', `tool server ${server.id} has no OAuth provider; register one and set auth_type "oauth" and oauth_provider_id`);
      }
      const provider = await services.oauthProviders.byId(caller.workspaceId, server.oauthProviderId);
      return c.json({ oauth_provider_id: provider.providerId }, 200);
    });
}
