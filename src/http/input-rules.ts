// Rules every request obeys before any route sees it: text that PostgreSQL (and people) can store,
// JSON no deeper than a limit, and a viewer refused before its body is even looked at.
import type { MiddlewareHandler } from 'hono';
import { canInvoke, canWrite } from '../core/caller.js';
import { type FieldIssue, HangarError, invalid } from '../core/errors.js';
import type { AppEnv } from './env.js';

/** Deepest JSON nesting accepted in a request body (objects and arrays both count). */
export const MAX_JSON_DEPTH = 64;

// A NUL cannot be stored in PostgreSQL text or jsonb; a lone UTF-16 surrogate is not Unicode at all.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why a string cannot be accepted, or undefined when it can. */
export function badText(value: string): string | undefined {
  if (value.includes('\u0000')) return 'must not contain NUL (\\u0000) characters';
  if (LONE_SURROGATE.test(value)) return 'must be valid Unicode (it contains a lone UTF-16 surrogate)';
  return undefined;
}

/**
 * The first problem of a parsed JSON value: too deep, or a key or string that {@link badText} refuses.
 * Iterative on purpose: the whole point is to stop deep input before anything recursive touches it.
 */
export function jsonProblem(root: unknown, where: (string | number)[], maxDepth = MAX_JSON_DEPTH): FieldIssue | undefined {
  const stack: { value: unknown; loc: (string | number)[]; depth: number }[] = [{ value: root, loc: where, depth: 0 }];
  while (stack.length > 0) {
    const { value, loc, depth } = stack.pop()!;
    if (typeof value === 'string') {
      const why = badText(value);
      if (why) return { loc, msg: why, type: 'string_invalid' };
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth >= maxDepth) return { loc, msg: `JSON is nested deeper than ${maxDepth} levels`, type: 'too_deep' };
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) stack.push({ value: value[i], loc: [...loc, i], depth: depth + 1 });
      continue;
    }
    for (const [key, item] of Object.entries(value)) {
      const why = badText(key);
      if (why) return { loc: [...loc, key], msg: `field name ${why}`, type: 'string_invalid' };
      stack.push({ value: item, loc: [...loc, key], depth: depth + 1 });
    }
  }
  return undefined;
}

/** The first bad value among request parameters (`path` or `query`), by name. */
export function paramProblem(values: Record<string, unknown>, where: 'path' | 'query'): FieldIssue | undefined {
  for (const [name, value] of Object.entries(values)) {
    const list = Array.isArray(value) ? value : [value];
    for (const item of list) {
      if (typeof item !== 'string') continue;
      const why = badText(item);
      if (why) return { loc: [where, name], msg: why, type: 'string_invalid' };
    }
    const whyName = badText(name);
    if (whyName) return { loc: [where, name], msg: `parameter name ${whyName}`, type: 'string_invalid' };
  }
  return undefined;
}

const JSON_TYPE = /^application\/([a-z0-9.+-]+\+)?json\s*(;|$)/i;

/**
 * Non-GET operations a viewer may call: they read (search, count, git fetch). Every other write
 * method from a viewer is refused here, before its body is validated, so a viewer learns "forbidden",
 * not what a valid body would have looked like. Services check the role again.
 */
const VIEWER_POSTS = [
  /^\/v1\/deepagents\/threads\/(search|count)$/,
  /^\/v1\/deepagents\/assistants\/(search|count)$/,
  /^\/v1\/deepagents\/threads\/[^/]+\/(history|state\/checkpoint)$/,
  // Memories: viewers read them (the store service refuses them only put and delete).
  /^\/v1\/deepagents\/store\/(items\/search|namespaces)$/,
  /^\/v1\/deepagents\/agents\/[0-9a-fA-F-]{36}\.git\/git-upload-pack$/,
];

/**
 * Routes only admins may call, whatever the method: refused here for other roles, before the JSON
 * rules and the route's validators run. The services check the role again.
 */
const ADMIN_ONLY: [RegExp, string][] = [
  [/^\/v1\/api-keys(\/|$)/, 'manage API keys'],
  [/^\/v1\/deepagents\/webhooks\/secret(\/rotate)?$/, 'read or rotate the webhook signing secret'],
];

/** Reads that need invoke permission (admin or member): they use a tool server's credentials. */
const INVOKE_READS: RegExp[] = [/^\/v1\/deepagents\/mcp-servers\/[^/]+\/tools$/];

/** Middleware (after authentication): authorization before validation, then the JSON body rules. */
export function inputRules(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const method = c.req.method;
    const caller = c.get('caller') as AppEnv['Variables']['caller'] | undefined;
    if (caller && caller.role !== 'admin') {
      const admin = ADMIN_ONLY.find(([p]) => p.test(c.req.path));
      if (admin) throw new HangarError('forbidden', `only admin keys may ${admin[1]}; this is a ${caller.role} key`);
      if (!canInvoke(caller.role) && INVOKE_READS.some((p) => p.test(c.req.path))) {
        throw new HangarError('forbidden', `a ${caller.role} key cannot use a tool server’s credentials`);
      }
    }
    if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') return next();
    if (caller && !canWrite(caller.role) && !VIEWER_POSTS.some((p) => p.test(c.req.path))) {
      throw new HangarError('forbidden', `a ${caller.role} key cannot change resources`);
    }
    // The deployment proxy forwards bodies untouched (they are the app's business, not Hangar's).
    if (/^\/v2\/deployments\/[^/]+\/app(\/|$)/.test(c.req.path)) return next();
    if (!JSON_TYPE.test(c.req.header('content-type') ?? '')) return next();
    // An empty body sent as JSON (clients that set the header on every request) is no body: the
    // route then sees a request without one (an optional body is absent; a required one lacks its fields).
    if ((await c.req.text()) === '') {
      c.req.raw.headers.delete('content-type');
      return next();
    }
    let body: unknown;
    try {
      body = await c.req.json();
    } catch (error) {
      if (error instanceof SyntaxError) return next(); // the route's validator answers 400 invalid_json
      throw error;
    }
    const problem = jsonProblem(body, ['body']);
    if (problem) throw invalid([problem]);
    return next();
  };
}
