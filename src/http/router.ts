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
      if (!result.success) {
        // A parameter sent more than once (`?limit=1&limit=2`) reaches zod as a list; where the
        // route wants one value, say so instead of zod's "expected number, received NaN".
        if (result.target === 'query') {
          const raw = c.req.queries();
          const repeated = result.error.issues
            .map((issue) => String(issue.path[0]))
            .find((name) => (raw[name]?.length ?? 0) > 1);
          if (repeated !== undefined) throw invalid([{ loc: ['query', repeated], msg: `was given ${raw[repeated]!.length} times; give it once`, type: 'value_error' }]);
        }
        throw fromZodError(result.error, result.target);
      }
    },
  });
}
