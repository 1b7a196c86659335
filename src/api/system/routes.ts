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
    tracing: z.boolean().openapi({ description: 'Whether agent runs are traced (`HANGAR_TRACING`): when `false`, runs have no trace to read.' }),
  })
  .openapi('Info');

const info = createRoute({
  method: 'get',
  path: '/info',
  tags,
  summary: 'Server facts',
  responses: { 200: jsonResponse(InfoSchema, 'Version and storage mode.') },
});

const ReadySchema = z
  .object({
    ready: z.boolean(),
    database: z.enum(['ok', 'unreachable']),
    pending_migrations: z.array(z.string()).openapi({ description: 'Migrations of this build not yet applied to the database.' }),
  })
  .openapi('Ready');

const ready = createRoute({
  method: 'get',
  path: '/ready',
  tags,
  summary: 'Readiness',
  description: 'Ready to serve: the database answers and every migration of this build is applied. For load balancers and Kubernetes readiness probes (`/ok` is liveness).',
  responses: {
    200: jsonResponse(ReadySchema, 'Ready.'),
    503: jsonResponse(ReadySchema, 'Not ready; the body says why.'),
  },
});

const metrics = createRoute({
  method: 'get',
  path: '/metrics',
  tags,
  summary: 'Prometheus metrics',
  description:
    'Prometheus text format: HTTP requests by route and status with latency histograms, runs by status, the run queue (depth, oldest wait, wait histogram), run durations, event-log write lag, notification-bus reconnects, deployments by status, trace exporter drops, and Node.js process metrics. Database-backed figures are cluster-wide; the rest are this process\'s.',
  responses: { 200: { description: 'The metrics.', content: { 'text/plain': { schema: z.string() } } } },
});

/** Liveness, readiness, metrics and information routes. */
export function systemRoutes({ info: facts, readiness, metrics: registry }: AppDeps) {
  return newRouter()
    .openapi(ok, (c) => c.json({ ok: true as const }, 200))
    .openapi(ready, async (c) => {
      const state = readiness ? await readiness() : { ready: true, database: 'ok' as const, pending_migrations: [] };
      return c.json(state, state.ready ? 200 : 503);
    })
    .openapi(metrics, async (c) => {
      const body = registry ? await registry.render() : '';
      return c.text(body, 200, { 'content-type': registry?.registry.contentType ?? 'text/plain; version=0.0.4; charset=utf-8' });
    })
    .openapi(info, (c) => c.json({ name: 'hangar' as const, ...facts }, 200));
}
