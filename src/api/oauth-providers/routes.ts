// /v2/auth/providers: OAuth providers of the workspace (control-plane conventions).
import { createRoute, z } from '@hono/zod-openapi';
import type { AppDeps } from '../../http/deps.js';
import { apiKeySecurity, errorResponses, jsonBody, jsonResponse } from '../../http/openapi.js';
import { newRouter } from '../../http/router.js';
import { pageQuery } from './page.js';
import { CreateOAuthProviderRequest, OAuthProviderPage, OAuthProviderSchema, presentProvider, UpdateOAuthProviderRequest } from './schemas.js';

const BASE = '/v2/auth/providers';
const tags = ['OAuth providers'];
const params = z.object({
  provider_id: z.string().min(1).openapi({ param: { name: 'provider_id', in: 'path' }, description: 'The provider’s `provider_id`.' }),
});

const create = createRoute({
  method: 'post',
  path: BASE,
  tags,
  summary: 'Create an OAuth provider',
  description:
    'Answers 200 (the control plane’s convention for this route). `client_secret` is stored encrypted and never returned; ' +
    '`provider_id` is unique within the workspace (409).',
  security: apiKeySecurity,
  request: { body: jsonBody(CreateOAuthProviderRequest) },
  responses: { 200: jsonResponse(OAuthProviderSchema, 'Created.'), ...errorResponses('controlplane', [400, 409, 413, 415, 422]) },
});

const list = createRoute({
  method: 'get',
  path: BASE,
  tags,
  summary: 'List OAuth providers',
  description: 'Oldest first, `{resources, offset}`; pass `offset` back to get the next page.',
  security: apiKeySecurity,
  request: { query: pageQuery },
  responses: { 200: jsonResponse(OAuthProviderPage, 'One page of providers.'), ...errorResponses('controlplane', [422]) },
});

const get = createRoute({
  method: 'get',
  path: `${BASE}/{provider_id}`,
  tags,
  summary: 'Get an OAuth provider',
  security: apiKeySecurity,
  request: { params },
  responses: { 200: jsonResponse(OAuthProviderSchema, 'The provider.'), ...errorResponses('controlplane', [404]) },
});

const update = createRoute({
  method: 'patch',
  path: `${BASE}/{provider_id}`,
  tags,
  summary: 'Update an OAuth provider',
  description: 'Omitted fields keep their values; `client_secret: null` removes the secret. Tokens already issued are kept.',
  security: apiKeySecurity,
  request: { params, body: jsonBody(UpdateOAuthProviderRequest) },
  responses: { 200: jsonResponse(OAuthProviderSchema, 'Updated.'), ...errorResponses('controlplane', [400, 404, 409, 413, 415, 422]) },
});

const remove = createRoute({
  method: 'delete',
  path: `${BASE}/{provider_id}`,
  tags,
  summary: 'Delete an OAuth provider',
  description:
    'Also deletes every principal’s tokens and pending authorizations for it. A 409 while an OAuth-backed tool server uses it (its `detail` names that server); tool servers that send stored headers only lose their link to it.',
  security: apiKeySecurity,
  request: { params },
  responses: { 204: { description: 'Deleted.' }, ...errorResponses('controlplane', [404, 409]) },
});

/** Routes of OAuth providers. */
export function oauthProviderRoutes({ services }: AppDeps) {
  return newRouter()
    .openapi(create, async (c) => c.json(presentProvider(await services.oauthProviders.create(c.get('caller'), c.req.valid('json')), c.get('caller')), 200))
    .openapi(list, async (c) => {
      const page = await services.oauthProviders.list(c.get('caller'), c.req.valid('query'));
      return c.json({ resources: page.providers.map((p) => presentProvider(p, c.get('caller'))), offset: page.offset }, 200);
    })
    .openapi(get, async (c) => c.json(presentProvider(await services.oauthProviders.get(c.get('caller'), c.req.valid('param').provider_id), c.get('caller')), 200))
    .openapi(update, async (c) => {
      const provider = await services.oauthProviders.update(c.get('caller'), c.req.valid('param').provider_id, c.req.valid('json'));
      return c.json(presentProvider(provider, c.get('caller')), 200);
    })
    .openapi(remove, async (c) => {
      await services.oauthProviders.delete(c.get('caller'), c.req.valid('param').provider_id);
      return c.body(null, 204);
    });
}
