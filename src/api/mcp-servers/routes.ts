// /v1/deepagents/mcp-servers: register tool servers and their credential headers.
import { createRoute, z } from '@hono/zod-openapi';
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
  description: 'Idempotent: deleting a server that does not exist (or is already deleted) is a 204 too. Agents that name its URL keep their tools, which fail at run time until a server with that URL is registered again.',
  security: apiKeySecurity,
  request: { params },
  responses: { 204: { description: 'Deleted, or there was nothing to delete.' }, ...errorResponses('deepagents', [422]) },
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
    .openapi(remove, async (c) => {
      await services.mcpServers.delete(c.get('caller'), c.req.valid('param').mcp_server_id);
      return c.body(null, 204);
    });
}
