// Cross-origin access for browsers: chat UIs served from another origin (a `useStream` app, say)
// call Hangar directly. Preflights are answered here, before authentication, because browsers never
// send `X-Api-Key` on an OPTIONS request. hono's own middleware does the protocol.
import type { MiddlewareHandler } from 'hono';
import { cors } from 'hono/cors';

/** Request headers a browser client may send: the API key, JSON, stream resumption, and the LangGraph SDK's. */
export const CORS_ALLOW_HEADERS = ['X-Api-Key', 'Authorization', 'Content-Type', 'Accept', 'Last-Event-ID', 'Cache-Control', 'Prefer', 'X-Request-Id', 'X-User-Timezone', 'If-Match'];

/** Response headers a browser client may read: where a run lives (the SDK reads it), pagination, the request id. */
export const CORS_EXPOSE_HEADERS = ['Content-Location', 'Location', 'X-Request-Id', 'X-Pagination-Next', 'X-Pagination-Total', 'Retry-After'];

/** The CORS middleware for `origins` (`*`: any), or undefined when none is allowed (the default). */
export function corsFor(origins: readonly string[] | undefined): MiddlewareHandler | undefined {
  if (!origins || origins.length === 0) return undefined;
  return cors({
    origin: origins.includes('*') ? '*' : [...origins],
    allowMethods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowHeaders: CORS_ALLOW_HEADERS,
    exposeHeaders: CORS_EXPOSE_HEADERS,
    maxAge: 600,
  });
}
