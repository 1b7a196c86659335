// A router for one resource: zod-validated routes whose failures become catalogued validation errors.
// Path and query parameters also pass the text rules of input-rules.ts here, where their names are known.
import { OpenAPIHono } from '@hono/zod-openapi';
import { invalid } from '../core/errors.js';
import type { AppEnv } from './env.js';
import { fromZodError } from './errors.js';
import { paramProblem } from './input-rules.js';

/** A new router; mount it with `app.route('/', router)`. */
export function newRouter(): OpenAPIHono<AppEnv> {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result, c) => {
      // The raw values, before zod coerced or transformed them.
      if (result.target === 'param' || result.target === 'query') {
        const raw = result.target === 'param' ? c.req.param() : c.req.queries();
        const problem = paramProblem(raw, result.target === 'param' ? 'path' : 'query');
        if (problem) throw invalid([problem]);
      }
      if (!result.success) throw fromZodError(result.error, result.target);
    },
  });
}
