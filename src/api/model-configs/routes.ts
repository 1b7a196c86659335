// /v1/deepagents/model-configs: saved model configurations that agents name in place of `<provider>:<model_id>`.
import { createRoute, z } from '@hono/zod-openapi';
import type { ModelConfig } from '../../core/model-configs/service.js';
import type { AppDeps } from '../../http/deps.js';
import { apiKeySecurity, errorResponses, jsonBody, jsonResponse, uuidParam } from '../../http/openapi.js';
import { newRouter } from '../../http/router.js';

const BASE = '/v1/deepagents/model-configs';
const tags = ['Model configurations'];
const params = z.object({ model_config_id: uuidParam('model_config_id', 'Model configuration id.') });

const Parameters = z
  .object({
    temperature: z.number().min(0).max(2).optional(),
    max_tokens: z.number().int().positive().optional(),
    base_url: z.url().optional().openapi({ description: 'Base URL of an OpenAI-compatible server.' }),
    delay_ms: z.number().int().min(0).max(60_000).optional().openapi({ description: 'Pause between streamed chunks; `scripted` provider only.' }),
  })
  .strict()
  .openapi('ModelParameters');

const ModelConfigSchema = z
  .object({
    id: z.uuid(),
    name: z.string().openapi({ description: 'What agents put in `runtime.model.model_id` (no colon).' }),
    model_id: z.string().openapi({ example: 'openai:gpt-5.4-mini' }),
    parameters: Parameters,
    has_api_key: z.boolean().openapi({ description: 'Whether a provider API key is stored. The key itself is never returned.' }),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('ModelConfig');

const CreateBody = z
  .object({
    name: z.string().trim().min(1, 'must not be blank').max(200),
    model_id: z.string().min(1).openapi({ description: '`<provider>:<model_id>`.' }),
    parameters: Parameters.optional(),
    api_key: z.string().min(1).optional().openapi({ description: 'Provider API key; stored encrypted, never returned.' }),
  })
  .openapi('CreateModelConfigRequest');

const UpdateBody = z
  .object({
    name: z.string().trim().min(1, 'must not be blank').max(200).optional(),
    model_id: z.string().min(1).optional(),
    parameters: Parameters.optional().openapi({ description: 'Replaces the stored parameters wholesale.' }),
    api_key: z.string().min(1).nullable().optional().openapi({ description: 'A new key, or `null` to remove the stored one.' }),
  })
  .openapi('UpdateModelConfigRequest');

function present(m: ModelConfig): z.infer<typeof ModelConfigSchema> {
  return {
    id: m.id,
    name: m.name,
    model_id: m.modelId,
    parameters: m.parameters,
    has_api_key: m.hasApiKey,
    created_at: m.createdAt.toISOString(),
    updated_at: m.updatedAt.toISOString(),
  };
}

const create = createRoute({
  method: 'post',
  path: BASE,
  tags,
  summary: 'Save a model configuration',
  description: 'Names are unique per workspace and contain no colon.',
  security: apiKeySecurity,
  request: { body: jsonBody(CreateBody) },
  responses: { 201: jsonResponse(ModelConfigSchema, 'Saved.'), ...errorResponses('deepagents', [400, 409, 413, 415, 422]) },
});
const list = createRoute({
  method: 'get',
  path: BASE,
  tags,
  summary: 'List model configurations',
  description: 'A bare array, by name.',
  security: apiKeySecurity,
  responses: { 200: jsonResponse(z.array(ModelConfigSchema), 'The workspace’s model configurations.'), ...errorResponses('deepagents', []) },
});
const get = createRoute({
  method: 'get',
  path: `${BASE}/{model_config_id}`,
  tags,
  summary: 'Get a model configuration',
  security: apiKeySecurity,
  request: { params },
  responses: { 200: jsonResponse(ModelConfigSchema, 'The model configuration.'), ...errorResponses('deepagents', [404, 422]) },
});
const update = createRoute({
  method: 'patch',
  path: `${BASE}/{model_config_id}`,
  tags,
  summary: 'Update a model configuration',
  description: 'Omitted fields keep their values. Agents that name it use the new values on their next run.',
  security: apiKeySecurity,
  request: { params, body: jsonBody(UpdateBody) },
  responses: { 200: jsonResponse(ModelConfigSchema, 'Updated.'), ...errorResponses('deepagents', [400, 404, 409, 413, 415, 422]) },
});
const remove = createRoute({
  method: 'delete',
  path: `${BASE}/{model_config_id}`,
  tags,
  summary: 'Delete a model configuration',
  description: 'Idempotent. Agents that name it fail to start runs until one of that name exists again.',
  security: apiKeySecurity,
  request: { params },
  responses: { 204: { description: 'Deleted.' }, ...errorResponses('deepagents', [422]) },
});

/** Routes of saved model configurations. */
export function modelConfigRoutes({ services }: AppDeps) {
  return newRouter()
    .openapi(create, async (c) => c.json(present(await services.modelConfigs.create(c.get('caller'), c.req.valid('json'))), 201))
    .openapi(list, async (c) => c.json((await services.modelConfigs.list(c.get('caller'))).map(present), 200))
    .openapi(get, async (c) => c.json(present(await services.modelConfigs.get(c.get('caller'), c.req.valid('param').model_config_id)), 200))
    .openapi(update, async (c) =>
      c.json(present(await services.modelConfigs.update(c.get('caller'), c.req.valid('param').model_config_id, c.req.valid('json'))), 200),
    )
    .openapi(remove, async (c) => {
      await services.modelConfigs.delete(c.get('caller'), c.req.valid('param').model_config_id);
      return c.body(null, 204);
    });
}
