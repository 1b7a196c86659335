// Rendering errors: the one place where a domain error becomes an HTTP response, per surface.
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { ZodError } from 'zod';
import { type FieldIssue, HangarError, invalid } from '../core/errors.js';
import type { Logger } from '../logging.js';
import { surfaceOf } from './surface.js';
import { isConnectionLost } from '../db/reconnect.js';

/** Turn anything thrown by a handler into a catalogued HangarError (unknown errors become `internal_error`). */
export function toHangarError(error: unknown): HangarError {
  if (error instanceof HangarError) return error;
  if (error instanceof HTTPException) {
    if (error.status === 413) return new HangarError('payload_too_large', 'the request body is larger than the configured limit');
    if (error.status === 415) return new HangarError('unsupported_media_type', 'send the body as application/json');
    if (error.status === 400) return new HangarError('invalid_json', 'the request body is not valid JSON');
    if (error.status === 404) return new HangarError('route_not_found', 'no such route');
  }
  // The database went away under the request (reads were already sent again a few times).
  if (isConnectionLost(error)) return new HangarError('database_unavailable', 'the server could not reach its database; retry shortly', { cause: error });
  return new HangarError('internal_error', 'an unexpected error occurred', { cause: error });
}

/** Render an error as the response the request's surface expects. */
export function renderError(c: Context, error: unknown, logger: Logger): Response {
  const e = toHangarError(error);
  const requestId = c.get('requestId') as string | undefined;
  if (e.code === 'internal_error') {
    logger.error({ err: e.cause, request_id: requestId, path: c.req.path }, 'unhandled error');
  } else if (e.status >= 500) {
    logger.warn({ code: e.code, request_id: requestId, path: c.req.path, ...(e.code === 'database_unavailable' ? { err: e.cause } : {}) }, e.message);
  }
  const status = e.status as ContentfulStatusCode;
  const surface = surfaceOf(c.req.path);

  if (surface === 'controlplane') {
    if (e.code === 'validation_failed' && e.issues) return c.json({ detail: e.issues }, status);
    return c.json({ detail: e.message }, status);
  }
  if (e.code === 'unauthorized' || e.code === 'forbidden' || e.code === 'preview_access_required') {
    // The auth layer's own shape; `detail` is an addition that says why.
    return c.json({ error: e.status === 401 ? 'Unauthorized' : 'Forbidden', detail: e.message }, status);
  }
  return c.json(
    {
      type: e.type,
      code: e.code,
      detail: e.message,
      status: e.status,
      ...(e.issues ? { errors: e.issues } : {}),
      ...(e.code === 'internal_error' && requestId ? { request_id: requestId } : {}),
    },
    status,
  );
}

const LOCATION: Record<string, string> = { json: 'body', param: 'path', query: 'query', header: 'header', form: 'body' };

/** A zod failure of one request part (`json`, `param`, `query`, `header`) as a validation error. */
export function fromZodError(error: ZodError, target: string): HangarError {
  const where = LOCATION[target] ?? target;
  return invalid(error.issues.map((issue): FieldIssue => fieldIssue(where, issue)));
}

function fieldIssue(where: string, issue: ZodError['issues'][number]): FieldIssue {
  const loc = [where, ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))];
  if (issue.code === 'invalid_type' && /received undefined/.test(issue.message)) {
    return { loc, msg: 'field required', type: 'missing' };
  }
  if (issue.code === 'unrecognized_keys') {
    return { loc, msg: `unknown field${issue.keys.length > 1 ? 's' : ''}: ${issue.keys.join(', ')}`, type: 'extra_forbidden' };
  }
  return { loc, msg: issue.message, type: issue.code };
}
