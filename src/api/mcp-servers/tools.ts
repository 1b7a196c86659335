// What the hosted SDK offers beside registration: list the tools a registered server exposes (with a
// ready-to-paste tools.json entry for each), and the OAuth-provider attach endpoint of the reference.
import { createRoute, z } from '@hono/zod-openapi';
import { canInvoke, requireWrite } from '../../core/caller.js';
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
  summary: 'Get or register the caller’s OAuth provider of a tool server',
  description:
    'The `provider_id` to start an authorization session (`POST /v1/deepagents/auth-sessions`) with for this tool server. ' +
    'With `oauth_mode: "legacy_shared_provider"`: the provider `oauth_provider_id` names. ' +
    'With `per_user_dynamic_client`: the caller’s own provider; on the first call Hangar discovers the server’s authorization server (RFC 9728 protected-resource metadata, then RFC 8414 or OpenID Connect metadata) and registers a client there (RFC 7591) with its OAuth callback as redirect URI; later calls by the same principal answer the same provider, and each principal gets its own (needs write permission: admin or member). ' +
    'A server without OAuth is a 409 (`mcp_server_not_oauth`); one that publishes no metadata or no registration endpoint a 409 (`mcp_server_oauth_unsupported`); a failed discovery, an address the outbound policy refuses, or a registration the authorization server refuses a 502 (`oauth_registration_failed`), and nothing is stored. ' +
    'The optional body’s `ls_user_id` is ignored (the caller is the key’s principal).',
  security: apiKeySecurity,
  request: {
    params,
    body: { required: false, content: { 'application/json': { schema: z.object({ ls_user_id: z.string().optional() }).openapi('RegisterMcpOAuthProviderRequest') } } },
  },
  responses: {
    200: jsonResponse(z.object({ oauth_provider_id: z.string() }).openapi('RegisterMcpOAuthProviderResponse'), 'The provider to authorize with.'),
    ...errorResponses('deepagents', [400, 404, 409, 415, 422, 502]),
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
      if (server.authType === 'oauth' && server.oauthMode === 'per_user_dynamic_client') {
        // Registering stores a provider for the caller: a key that may not write cannot.
        requireWrite(caller);
        const own = await services.oauth.dynamicProvider(caller.workspaceId, caller.principal, server);
        return c.json({ oauth_provider_id: own.providerId }, 200);
      }
      if (server.authType !== 'oauth' || !server.oauthProviderId) {
        throw new HangarError(
          'mcp_server_not_oauth',
          `tool server ${server.id} is not OAuth-backed; set auth_type "oauth" with an oauth_provider_id, or oauth_mode "per_user_dynamic_client"`,
        );
      }
      const provider = await services.oauthProviders.byId(caller.workspaceId, server.oauthProviderId);
      return c.json({ oauth_provider_id: provider.providerId }, 200);
    });
}
