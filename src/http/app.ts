// createApp: the whole HTTP surface built from injected dependencies. It never reads the environment
// and never listens; src/server.ts does both.
import { randomUUID } from 'node:crypto';
import { OpenAPIHono } from '@hono/zod-openapi';
import { bodyLimit } from 'hono/body-limit';
import { matchedRoutes, type routePath } from 'hono/route';
import { agentRoutes } from '../api/agents/routes.js';
import { gitRoutes } from '../api/agents/git.js';
import { agentCloneRoutes } from '../api/agents/clone.js';
import { agentHealthRoutes } from '../api/agents/health.js';
import { consoleRoutes } from '../api/console/routes.js';
import { apiKeyRoutes } from '../api/api-keys/routes.js';
import { authSessionRoutes } from '../api/auth-sessions/routes.js';
import { integrationRoutes } from '../api/integrations/routes.js';
import { appProxyRoutes } from '../api/deployments/app-proxy.js';
import { deploymentRoutes } from '../api/deployments/routes.js';
import { mcpServerRoutes } from '../api/mcp-servers/routes.js';
import { mcpServerToolRoutes } from '../api/mcp-servers/tools.js';
import { modelConfigRoutes } from '../api/model-configs/routes.js';
import { oauthProviderRoutes } from '../api/oauth-providers/routes.js';
import { langsmithRoutes } from '../api/langsmith/routes.js';
import { runTraceRoutes } from '../api/tracing/run-trace.js';
import { tracingRoutes } from '../api/tracing/routes.js';
import { systemRoutes } from '../api/system/routes.js';
import { threadRoutes } from '../api/threads/routes.js';
import { threadListRoutes } from '../api/threads/list.js';
import { runRoutes } from '../api/threads/runs.js';
import { scheduleRoutes } from '../api/schedules/routes.js';
import { cronRoutes } from '../api/schedules/crons.js';
import { langGraphRoutes } from '../api/langgraph/index.js';
import { usageRoutes } from '../api/usage/routes.js';
import { HangarError } from '../core/errors.js';
import type { Context } from 'hono';
import { AbuseLimits } from './abuse.js';
import { apiKeyAuth } from './auth.js';
import { corsFor } from './cors.js';
import type { AppDeps } from './deps.js';
import { mountConsole, wantsConsolePage } from './console.js';
import { mountDocs } from './docs.js';
import { inputRules } from './input-rules.js';
import type { AppEnv } from './env.js';
import { renderError } from './errors.js';
import { apiKeySecurity, documentConfig } from './openapi.js';
import { assignOperationIds } from './operation-ids.js';
import { needsApiKey, surfaceOf } from './surface.js';

/** Build the HTTP app. */
export function createApp(deps: AppDeps): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>();
  const { logger } = deps;

  // Outermost, so that its header is the last word. An error answered before the body was read (401, 404, 413 to a large upload) closes the
  // connection: the unread body would otherwise be taken for the next request, or the socket be cut
  // under a client that believes it is still alive.
  app.use(async (c, next) => {
    const raw = c.req.raw;
    await next();
    if (c.res.status >= 400 && raw.body !== null && !raw.bodyUsed && c.req.raw === raw) closeAfter(c);
  });
  app.use(async (c, next) => {
    const requestId = randomUUID();
    c.set('requestId', requestId);
    const started = performance.now();
    await next();
    c.header('x-request-id', requestId);
    if (deps.metrics) {
      const labels = { method: c.req.method, route: routeLabel(c), status: String(c.res.status) };
      deps.metrics.httpRequests.inc(labels);
      deps.metrics.httpDuration.observe(labels, (performance.now() - started) / 1000);
    }
    // The path only: query strings can carry OAuth codes and other one-time secrets.
    logger.debug({ request_id: requestId, method: c.req.method, path: c.req.path, status: c.res.status, ms: Math.round(performance.now() - started) }, 'request');
  });
  const cors = corsFor(deps.corsOrigins);
  if (cors) app.use(cors);
  app.use(
    bodyLimit({
      maxSize: deps.bodyLimitBytes,
      onError: () => {
        throw new HangarError('payload_too_large', `the request body is larger than ${deps.bodyLimitBytes} bytes`);
      },
    }),
  );
  app.use(apiKeyAuth(deps.services.workspaces, deps.limits ? new AbuseLimits(deps.limits) : undefined, deps.services.consoleSessions));
  app.use(inputRules());

  app.route('/', systemRoutes(deps));
  app.route('/', mcpServerRoutes(deps));
  app.route('/', mcpServerToolRoutes(deps));
  app.route('/', agentRoutes(deps));
  app.route('/', agentCloneRoutes(deps));
  app.route('/', agentHealthRoutes(deps));
  app.route('/', threadRoutes(deps));
  app.route('/', threadListRoutes(deps));
  app.route('/', runRoutes(deps));
  app.route('/', scheduleRoutes(deps));
  app.route('/', cronRoutes(deps));
  app.route('/', langGraphRoutes(deps));
  app.route('/', usageRoutes(deps));
  app.route('/', gitRoutes(deps));
  app.route('/', modelConfigRoutes(deps));
  app.route('/', oauthProviderRoutes(deps));
  app.route('/', authSessionRoutes(deps));
  app.route('/', integrationRoutes(deps));
  app.route('/', deploymentRoutes(deps));
  app.route('/', appProxyRoutes(deps));
  app.route('/', tracingRoutes(deps));
  app.route('/', runTraceRoutes(deps));
  app.route('/', langsmithRoutes(deps));
  app.route('/', consoleRoutes(deps));
  app.route('/', apiKeyRoutes(deps));

  app.openAPIRegistry.registerComponent('securitySchemes', 'ApiKeyAuth', {
    type: 'apiKey',
    in: 'header',
    name: 'X-Api-Key',
    description: 'A Hangar API key (`hangar keys create`).',
  });
  const document = openApiDocument(app, deps.info.version);
  app.get('/openapi.json', (c) => c.json(document));
  mountDocs(app);
  const consolePage = mountConsole(app, deps.consoleDir);

  app.notFound((c) => {
    if (wantsConsolePage(c)) return consolePage(c, 404);
    // A path that exists with other methods is a 405 that says which (RFC 9110 §15.5.6). A route of
    // this very method that calls c.notFound() (a file that is not there) stays a 404.
    const allowed = allowedMethods(app, c.req.path);
    if (allowed.length > 0 && !allowed.includes(c.req.method)) {
      c.header('Allow', allowed.join(', '));
      throw new HangarError('method_not_allowed', `${c.req.method} is not allowed on ${c.req.path}; it answers ${allowed.join(', ')}`);
    }
    throw new HangarError('route_not_found', 'no such route; the API reference is at /docs');
  });
  app.onError((error, c) => renderError(c, error, logger));
  return app;
}

/** The route pattern that answered (bounded label values: never the raw path), or `unmatched`. */
function routeLabel(c: Parameters<typeof routePath>[0]): string {
  const routes = matchedRoutes(c);
  const handler = routes.findLast((r) => r.method !== 'ALL') ?? routes.at(-1);
  const path = handler?.path ?? '';
  return path === '' || path === '*' || path === '/*' ? 'unmatched' : path;
}

function closeAfter(c: Context): void {
  try {
    c.res.headers.set('connection', 'close');
  } catch {
    // Immutable headers (a fetched response passed through): copy them.
    const headers = new Headers(c.res.headers);
    headers.set('connection', 'close');
    c.res = new Response(c.res.body, { status: c.res.status, headers });
  }
}

/** The OpenAPI document of the app (also served at /openapi.json). */
export function openApiDocument(app: OpenAPIHono<AppEnv>, version: string) {
  const document = app.getOpenAPI31Document(documentConfig(version));
  const paths = (document.paths ?? {}) as Record<string, Record<string, { operationId?: string; summary?: string; security?: unknown[] }>>;
  assignOperationIds(paths);
  // Every operation says how it is authenticated: an API key, or (service endpoints) nothing.
  for (const [path, item] of Object.entries(paths)) {
    for (const op of Object.values(item)) op.security ??= needsApiKey(surfaceOf(path)) ? apiKeySecurity : [];
  }
  return document;
}

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/**
 * The methods some route answers on `path`, asking the app's own router (so path patterns match
 * exactly as for dispatch). Middleware and catch-all routes (`ALL`) do not count: a path they alone
 * match does not exist. HEAD goes with GET, as Hono answers HEAD with the GET route.
 */
function allowedMethods(app: OpenAPIHono<AppEnv>, path: string): string[] {
  const allowed: string[] = [];
  for (const method of METHODS) {
    const [matched] = app.router.match(method, path) as unknown as [[[unknown, { method: string }], unknown][]];
    if (!matched.some(([[, route]]) => route.method !== 'ALL')) continue;
    allowed.push(method);
    if (method === 'GET') allowed.push('HEAD');
  }
  return allowed;
}
