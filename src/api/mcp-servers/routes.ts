// /v1/deepagents/mcp-servers: register tool servers and their credential headers.
import { createRoute, z } from '@hono/zod-openapi';
import { canInvoke } from '../../core/caller.js';
import { HangarError } from '../../core/errors.js';
import { listServerTools } from '../../core/mcp-servers/tools.js';
import type { AppDeps } from '../../http/deps.js';
import { apiKeySecurity, errorResponses, jsonBody, jsonResponse, uuidParam } from '../../http/openapi.js';
import { newRouter } from '../../http/router.js';
import { CreateMcpServerRequest, McpServerSchema, presentMcpServer, UpdateMcpServerRequest } from './schemas.js';

const BASE = '/v1/deepagents/mcp-servers';
const tags = ['Tool servers'];
const params = z.object({ mcp_server_id: uuidParam('mcp_server_id', 'Tool server id.') });

const create = createRoute({
  method: 'post',
  path: BASE,
  tags,
  summary: 'Register a tool server',
  description: 'The URL is stored without trailing slashes and may be registered once per workspace.',
  security: apiKeySecurity,
  request: { body: jsonBody(CreateMcpServerRequest) },
  responses: { 201: jsonResponse(McpServerSchema, 'Registered.'), ...errorResponses('deepagents', [400, 409, 413, 415, 422]) },
});

const list = createRoute({
  method: 'get',
  path: BASE,
  tags,
  summary: 'List tool servers',
  description: 'A bare array, oldest first. Headers are omitted for callers without invoke permission.',
  security: apiKeySecurity,
  responses: { 200: jsonResponse(z.array(McpServerSchema), 'The workspace’s tool servers.'), ...errorResponses('deepagents', []) },
});

const get = createRoute({
  method: 'get',
  path: `${BASE}/{mcp_server_id}`,
  tags,
  summary: 'Get a tool server',
  security: apiKeySecurity,
  request: { params },
  responses: { 200: jsonResponse(McpServerSchema, 'The tool server.'), ...errorResponses('deepagents', [404, 422]) },
});

const update = createRoute({
  method: 'patch',
  path: `${BASE}/{mcp_server_id}`,
  tags,
  summary: 'Update a tool server',
  description: '`headers` replaces the entire stored array: send the full new set. Omitted fields keep their values.',
  security: apiKeySecurity,
  request: { params, body: jsonBody(UpdateMcpServerRequest) },
  responses: { 200: jsonResponse(McpServerSchema, 'Updated.'), ...errorResponses('deepagents', [400, 404, 409, 413, 415, 422]) },
});

const remove = createRoute({
  method: 'delete',
  path: `${BASE}/{mcp_server_id}`,
  tags,
  summary: 'Delete a tool server',
  description: 'Idempotent: deleting a server that is already gone also answers 204.',
  security: apiKeySecurity,
  request: { params },
  responses: { 204: { description: 'Deleted.' }, ...errorResponses('deepagents', [422]) },
});

const ListedToolSchema = z
  .object({
    name: z.string(),
    description: z.string(),
    input_schema: z.record(z.string(), z.unknown()).openapi({ description: 'JSON Schema of the arguments.' }),
  })
  .openapi('ListedTool');

const listTools = createRoute({
  method: 'get',
  path: `${BASE}/{mcp_server_id}/tools`,
  tags,
  summary: 'List the tools a tool server offers',
  description:
    'Hangar addition: connects to the server now (with its stored headers, and for `auth_type: "oauth"` the caller’s token) and lists its tools — a connection test and the source of the Console’s tool picker. 409 `oauth_authorization_required` carries the authorization URL when the caller has not connected the server’s provider yet.',
  security: apiKeySecurity,
  request: { params },
  responses: { 200: jsonResponse(z.object({ tools: z.array(ListedToolSchema) }).openapi('ListedTools'), 'The tools.'), ...errorResponses('deepagents', [404, 409, 422, 502]) },
});

/** Routes of tool servers. */
export function mcpServerRoutes({ services }: AppDeps) {
  return newRouter()
    .openapi(create, async (c) => {
      const caller = c.get('caller');
      return c.json(presentMcpServer(await services.mcpServers.create(caller, c.req.valid('json')), caller), 201);
    })
    .openapi(list, async (c) => {
      const caller = c.get('caller');
      return c.json((await services.mcpServers.list(caller)).map((s) => presentMcpServer(s, caller)), 200);
    })
    .openapi(get, async (c) => {
      const caller = c.get('caller');
      return c.json(presentMcpServer(await services.mcpServers.get(caller, c.req.valid('param').mcp_server_id), caller), 200);
    })
    .openapi(update, async (c) => {
      const caller = c.get('caller');
      const server = await services.mcpServers.update(caller, c.req.valid('param').mcp_server_id, c.req.valid('json'));
      return c.json(presentMcpServer(server, caller), 200);
    })
    .openapi(listTools, async (c) => {
      const caller = c.get('caller');
      if (!canInvoke(caller.role)) throw new HangarError('forbidden', `a ${caller.role} key cannot connect to tool servers`);
      const server = await services.mcpServers.get(caller, c.req.valid('param').mcp_server_id);
      const headers = await services.oauth.toolServerHeaders({ workspaceId: caller.workspaceId, principal: caller.principal, server });
      const tools = await listServerTools(server.url, headers);
      return c.json({ tools: tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema })) }, 200);
    })
    .openapi(remove, async (c) => {
      await services.mcpServers.delete(c.get('caller'), c.req.valid('param').mcp_server_id);
      return c.body(null, 204);
    });
}
