// /v1/api-keys: a workspace's API keys for its admins (the Console's Settings page); the same
// service as `hangar keys`. A key is shown once, in the answer that creates it; lists never hold it.
import { createRoute, z } from '@hono/zod-openapi';
import type { ApiKeyRecord } from '../../core/workspaces/service.js';
import type { AppDeps } from '../../http/deps.js';
import { apiKeySecurity, errorResponses, jsonBody, jsonResponse, uuidParam } from '../../http/openapi.js';
import { newRouter } from '../../http/router.js';

const BASE = '/v1/api-keys';
const tags = ['API keys'];

const ApiKeySchema = z
  .object({
    id: z.uuid(),
    role: z.enum(['admin', 'member', 'viewer']),
    prefix: z.string().openapi({ description: 'The first characters of the key, to recognise it by (never the key).' }),
    principal: z.string().openapi({ description: 'Who the key acts for (user memories and OAuth tokens are per principal).' }),
    description: z.string().nullable(),
    created_at: z.iso.datetime(),
    revoked_at: z.iso.datetime().nullable(),
  })
  .openapi('ApiKey');

const CreateBody = z
  .object({
    role: z.enum(['admin', 'member', 'viewer']),
    principal: z.string().trim().min(1, 'must not be blank').max(200).optional().openapi({ description: 'Default: the key itself (its id).' }),
    description: z.string().trim().max(200).optional(),
  })
  .strict()
  .openapi('CreateApiKeyRequest');

function present(k: ApiKeyRecord): z.infer<typeof ApiKeySchema> {
  return {
    id: k.id,
    role: k.role,
    prefix: k.prefix,
    principal: k.principal,
    description: k.description,
    created_at: k.createdAt.toISOString(),
    revoked_at: k.revokedAt?.toISOString() ?? null,
  };
}

const list = createRoute({
  method: 'get',
  path: BASE,
  tags,
  summary: 'List the workspace’s API keys',
  description: 'Admins only. Revoked keys are listed with `revoked_at`. Never the keys themselves.',
  security: apiKeySecurity,
  responses: { 200: jsonResponse(z.array(ApiKeySchema), 'The keys, oldest first.'), ...errorResponses('hangar', []) },
});
const create = createRoute({
  method: 'post',
  path: BASE,
  tags,
  summary: 'Create an API key',
  description: 'Admins only. The answer holds the key (`key`) — the only time it is shown; only its hash is stored.',
  security: apiKeySecurity,
  request: { body: jsonBody(CreateBody) },
  responses: {
    201: jsonResponse(ApiKeySchema.extend({ key: z.string().openapi({ description: 'The key. Shown once.' }) }).openapi('CreatedApiKey'), 'Created.'),
    ...errorResponses('hangar', [413, 415, 422]),
  },
});
const revoke = createRoute({
  method: 'delete',
  path: `${BASE}/{key_id}`,
  tags,
  summary: 'Revoke an API key',
  description: 'Admins only. Requests with the key are refused from now on, and Console sessions signed in with it end. Revoking twice is harmless.',
  security: apiKeySecurity,
  request: { params: z.object({ key_id: uuidParam('key_id', 'API key id.') }) },
  responses: { 200: jsonResponse(ApiKeySchema, 'The revoked key.'), ...errorResponses('hangar', [404, 422]) },
});

/** Routes of API key management. */
export function apiKeyRoutes({ services }: AppDeps) {
  return newRouter()
    .openapi(list, async (c) => c.json((await services.workspaces.listWorkspaceKeys(c.get('caller'))).map(present), 200))
    .openapi(create, async (c) => {
      const { key, record } = await services.workspaces.createWorkspaceKey(c.get('caller'), c.req.valid('json'));
      c.header('cache-control', 'no-store');
      return c.json({ ...present(record), key }, 201);
    })
    .openapi(revoke, async (c) => c.json(present(await services.workspaces.revokeWorkspaceKey(c.get('caller'), c.req.valid('param').key_id)), 200));
}
