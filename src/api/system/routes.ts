// Service endpoints without an API key: liveness, server facts, the OpenAPI document and its reader.
import { createRoute, z } from '@hono/zod-openapi';
import type { AppDeps } from '../../http/deps.js';
import { jsonResponse } from '../../http/openapi.js';
import { newRouter } from '../../http/router.js';

const tags = ['Service'];

const ok = createRoute({
  method: 'get',
  path: '/ok',
  tags,
  summary: 'Liveness',
  responses: { 200: jsonResponse(z.object({ ok: z.literal(true) }).openapi('Ok'), 'The server is up.') },
});

const InfoSchema = z
  .object({
    name: z.literal('hangar'),
    version: z.string().openapi({ example: '0.1.0' }),
    storage: z.enum(['embedded', 'external']).openapi({ description: '`embedded`: PostgreSQL started by Hangar in its data directory. `external`: `DATABASE_URL`.' }),
    role: z.enum(['all', 'api', 'worker']).openapi({ description: 'What this process runs.' }),
  })
  .openapi('Info');

const info = createRoute({
  method: 'get',
  path: '/info',
  tags,
  summary: 'Server facts',
  responses: { 200: jsonResponse(InfoSchema, 'Version and storage mode.') },
});

/** Liveness and information routes. */
export function systemRoutes({ info: facts }: AppDeps) {
  return newRouter()
    .openapi(ok, (c) => c.json({ ok: true as const }, 200))
    .openapi(info, (c) => c.json({ name: 'hangar' as const, ...facts }, 200));
}
