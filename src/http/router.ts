// A router for one resource: zod-validated routes whose failures become catalogued validation errors.
import { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from './env.js';
import { fromZodError } from './errors.js';

/** A new router; mount it with `app.route('/', router)`. */
export function newRouter(): OpenAPIHono<AppEnv> {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) throw fromZodError(result.error, result.target);
    },
  });
}
