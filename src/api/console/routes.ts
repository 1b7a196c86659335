// /v1/console/session: the Console's sign-in. An API key is exchanged for an HttpOnly,
// SameSite=Strict cookie; the key never reaches browser storage. The response carries the CSRF
// token that state-changing requests made with the cookie must send as `X-CSRF-Token`.
import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { csrfTokenOf } from '../../core/console/sessions.js';
import type { Caller } from '../../core/caller.js';
import type { ApiKeyRecord } from '../../core/workspaces/service.js';
import { HangarError } from '../../core/errors.js';
import { CONSOLE_SESSION_COOKIE, CONSOLE_SESSION_PATH } from '../../http/auth.js';
import type { AppDeps } from '../../http/deps.js';
import type { AppEnv } from '../../http/env.js';
import { apiKeySecurity, errorResponses, jsonBody, jsonResponse } from '../../http/openapi.js';
import { newRouter } from '../../http/router.js';

const tags = ['Console'];
/** Not HttpOnly, value `1`: tells the app a session cookie may exist. */
const CONSOLE_HINT_COOKIE = 'hangar_console';

const SessionSchema = z
  .object({
    role: z.enum(['admin', 'member', 'viewer']),
    principal: z.string(),
    workspace_id: z.uuid(),
    key_id: z.uuid().openapi({ description: 'The id of the signed-in API key (never the key).' }),
    key_prefix: z.string().openapi({ description: 'The first characters of the signed-in key, to recognise it by (never the key).' }),
    key_description: z.string().nullable().openapi({ description: 'The signed-in key’s description (`hangar keys create --description`), if it has one.' }),
    preview_access: z.boolean(),
    expires_at: z.iso.datetime().nullable().openapi({ description: 'When the Console session ends; `null` when the request used `X-Api-Key`.' }),
    csrf_token: z.string().nullable().openapi({ description: 'Send as `X-CSRF-Token` on every state-changing request made with the session cookie.' }),
  })
  .openapi('ConsoleSession');

const SignInBody = z.object({ api_key: z.string().min(1, 'must not be empty').max(500) }).strict().openapi('ConsoleSignInRequest');

function present(caller: Caller, key: ApiKeyRecord | undefined, expiresAt: Date | null, token: string | null): z.infer<typeof SessionSchema> {
  return {
    role: caller.role,
    principal: caller.principal,
    workspace_id: caller.workspaceId,
    key_id: caller.keyId,
    key_prefix: key?.prefix ?? '',
    key_description: key?.description ?? null,
    preview_access: caller.previewAccess,
    expires_at: expiresAt?.toISOString() ?? null,
    csrf_token: token ? csrfTokenOf(token) : null,
  };
}

function secure(c: Context<AppEnv>): boolean {
  return new URL(c.req.url).protocol === 'https:' || c.req.header('x-forwarded-proto') === 'https';
}

const signIn = createRoute({
  method: 'post',
  path: CONSOLE_SESSION_PATH,
  tags,
  summary: 'Sign in to the Console',
  description:
    'Exchanges an API key for a session cookie (`hangar_session`: HttpOnly, SameSite=Strict, 12 hours) and a readable `hangar_console=1` hint cookie that holds no secret. The session ends at sign-out, at expiry, or when the key is revoked. Requests made with the cookie that change something must send the returned `csrf_token` as `X-CSRF-Token`.',
  request: { body: jsonBody(SignInBody) },
  responses: { 200: jsonResponse(SessionSchema, 'Signed in; the cookie is set.'), ...errorResponses('hangar', [400, 415, 422]) },
});
const current = createRoute({
  method: 'get',
  path: CONSOLE_SESSION_PATH,
  tags,
  summary: 'The signed-in caller',
  description: 'Who the session cookie (or `X-Api-Key`) stands for, with its role.',
  security: apiKeySecurity,
  responses: { 200: jsonResponse(SessionSchema, 'The caller.'), ...errorResponses('hangar', []) },
});
const signOut = createRoute({
  method: 'delete',
  path: CONSOLE_SESSION_PATH,
  tags,
  summary: 'Sign out of the Console',
  description: 'Ends the session and clears its cookie.',
  security: apiKeySecurity,
  responses: { 204: { description: 'Signed out.' }, ...errorResponses('hangar', []) },
});

/** Console session routes. */
export function consoleRoutes({ services }: AppDeps) {
  return newRouter()
    .openapi(signIn, async (c) => {
      const session = await services.consoleSessions.signIn(c.req.valid('json').api_key);
      if (!session) throw new HangarError('unauthorized', 'the API key is unknown or revoked');
      setCookie(c, CONSOLE_SESSION_COOKIE, session.token, {
        httpOnly: true,
        sameSite: 'Strict',
        path: '/',
        secure: secure(c),
        expires: session.expiresAt,
      });
      // A readable hint with no secret in it: the app asks who is signed in only when it is set,
      // so a signed-out visit makes no request that fails.
      setCookie(c, CONSOLE_HINT_COOKIE, '1', { sameSite: 'Strict', path: '/', secure: secure(c), expires: session.expiresAt });
      c.header('cache-control', 'no-store');
      return c.json(present(session.caller, await services.workspaces.ownKey(session.caller), session.expiresAt, session.token), 200);
    })
    .openapi(current, async (c) => {
      const token = c.req.header('x-api-key') ? undefined : getCookie(c, CONSOLE_SESSION_COOKIE);
      const expiresAt = token ? ((await services.consoleSessions.authenticate(token))?.expiresAt ?? null) : null;
      c.header('cache-control', 'no-store');
      return c.json(present(c.var.caller, await services.workspaces.ownKey(c.var.caller), expiresAt, token ?? null), 200);
    })
    .openapi(signOut, async (c) => {
      const token = getCookie(c, CONSOLE_SESSION_COOKIE);
      if (token) await services.consoleSessions.signOut(token);
      deleteCookie(c, CONSOLE_SESSION_COOKIE, { path: '/', httpOnly: true, sameSite: 'Strict', secure: secure(c) });
      deleteCookie(c, CONSOLE_HINT_COOKIE, { path: '/', sameSite: 'Strict', secure: secure(c) });
      return c.body(null, 204);
    });
}
