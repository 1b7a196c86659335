// /v1/integrations/forge/vcshost: code-host integrations and the repositories they reach.
import { createRoute, z } from '@hono/zod-openapi';
import type { AppDeps } from '../../http/deps.js';
import { apiKeySecurity, errorResponses, jsonBody, jsonResponse, uuidParam } from '../../http/openapi.js';
import { newRouter } from '../../http/router.js';
import { pageQuery } from '../oauth-providers/page.js';
import { CreateIntegrationRequest, IntegrationPage, IntegrationSchema, presentIntegration, RepositorySchema } from './schemas.js';

const BASE = '/v1/integrations/forge/vcshost';
const tags = ['Code-host integrations'];
const params = z.object({ integration_id: uuidParam('integration_id', 'The integration id.') });

const create = createRoute({
  method: 'post',
  path: BASE,
  tags,
  summary: 'Create a code-host integration',
  description:
    '`github`: a token or GitHub App installation credentials, and the API base URL (GitHub Enterprise works). ' +
    '`git`: a directory of bare repositories on the server. Credentials are stored encrypted and never returned; they are checked when repositories are listed.',
  security: apiKeySecurity,
  request: { body: jsonBody(CreateIntegrationRequest) },
  responses: { 201: jsonResponse(IntegrationSchema, 'Created.'), ...errorResponses('controlplane', [400, 413, 415, 422]) },
});

const list = createRoute({
  method: 'get',
  path: BASE,
  tags,
  summary: 'List code-host integrations',
  security: apiKeySecurity,
  request: { query: pageQuery },
  responses: { 200: jsonResponse(IntegrationPage, 'One page, oldest first.'), ...errorResponses('controlplane', [422]) },
});

const get = createRoute({
  method: 'get',
  path: `${BASE}/{integration_id}`,
  tags,
  summary: 'Get a code-host integration',
  security: apiKeySecurity,
  request: { params },
  responses: { 200: jsonResponse(IntegrationSchema, 'The integration.'), ...errorResponses('controlplane', [404, 422]) },
});

const remove = createRoute({
  method: 'delete',
  path: `${BASE}/{integration_id}`,
  tags,
  summary: 'Delete a code-host integration',
  security: apiKeySecurity,
  request: { params },
  responses: { 204: { description: 'Deleted.' }, ...errorResponses('controlplane', [404, 422]) },
});

const repos = createRoute({
  method: 'get',
  path: `${BASE}/{integration_id}/repos`,
  tags,
  summary: 'List the repositories of an integration',
  description:
    'A JSON array of every repository the integration reaches (all pages of the code host). Distinct errors: 404 unknown integration; ' +
    '400 credentials rejected by the code host (bad, expired or revoked); 502 code host (or directory) unreachable or failing.',
  security: apiKeySecurity,
  request: { params },
  responses: { 200: jsonResponse(z.array(RepositorySchema), 'The repositories.'), ...errorResponses('controlplane', [400, 404, 422, 502]) },
});

/** Routes of code-host integrations. */
export function integrationRoutes({ services }: AppDeps) {
  return newRouter()
    .openapi(create, async (c) => c.json(presentIntegration(await services.integrations.create(c.get('caller'), c.req.valid('json'))), 201))
    .openapi(list, async (c) => {
      const page = await services.integrations.list(c.get('caller'), c.req.valid('query'));
      return c.json({ resources: page.integrations.map(presentIntegration), offset: page.offset }, 200);
    })
    .openapi(get, async (c) => c.json(presentIntegration(await services.integrations.get(c.get('caller'), c.req.valid('param').integration_id)), 200))
    .openapi(remove, async (c) => {
      await services.integrations.delete(c.get('caller'), c.req.valid('param').integration_id);
      return c.body(null, 204);
    })
    .openapi(repos, async (c) => c.json(await services.integrations.repositories(c.get('caller'), c.req.valid('param').integration_id), 200));
}
