// Authentication: X-Api-Key (or the Console's session cookie) → the caller (workspace, role,
// principal). One middleware for every surface.
import type { MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';
import { csrfTokenOf, type ConsoleSessionService } from '../core/console/sessions.js';
import { HangarError } from '../core/errors.js';
import type { WorkspaceService } from '../core/workspaces/service.js';
import type { AppEnv } from './env.js';
import { needsApiKey, surfaceOf } from './surface.js';

/** Middleware that authenticates API-key surfaces and enforces preview access on the agent runtime. */
export function apiKeyAuth(workspaces: WorkspaceService, sessions?: ConsoleSessionService): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const surface = surfaceOf(c.req.path);
    if (!needsApiKey(surface)) return next();
    // Signing in to the Console presents the key in the body (and is the only way to get a cookie).
    if (c.req.path === CONSOLE_SESSION_PATH && c.req.method === 'POST') return next();
    const key = c.req.header('x-api-key') ?? basicAuthPassword(c.req.header('authorization'));
    const sessionToken = key ? undefined : getCookie(c, CONSOLE_SESSION_COOKIE);
    if (sessionToken && sessions) {
      const session = await sessions.authenticate(sessionToken);
      if (!session) throw new HangarError('unauthorized', 'the Console session has expired, was signed out, or its API key was revoked; sign in again');
      // CSRF: the cookie alone never authorizes a change. SameSite=Strict already keeps other
      // sites' requests cookie-less; the header, computable only from the HttpOnly token, also
      // stops same-site pages and any form post.
      if (!SAFE_METHODS.has(c.req.method) && c.req.header('x-csrf-token') !== csrfTokenOf(sessionToken)) {
        throw new HangarError('forbidden', 'a Console request that changes something must carry the session\'s X-CSRF-Token header');
      }
      if (surface === 'deepagents' && !session.caller.previewAccess) {
        throw new HangarError('preview_access_required', "this key's workspace does not have preview access to the agent runtime");
      }
      c.set('caller', session.caller);
      return next();
    }
    // git sends credentials only after a Basic challenge, so the git endpoint of agents asks for one.
    const challenge = () => {
      if (/\.git\/(info\/refs|git-upload-pack)$/.test(c.req.path)) c.header('WWW-Authenticate', 'Basic realm="Hangar", charset="UTF-8"');
    };
    if (!key) {
      challenge();
      throw new HangarError('unauthorized', 'send an API key in the X-Api-Key header');
    }
    const caller = await workspaces.authenticate(key);
    if (!caller) {
      challenge();
      throw new HangarError('unauthorized', 'the API key is unknown or revoked');
    }
    if (surface === 'deepagents' && !caller.previewAccess) {
      throw new HangarError('preview_access_required', "this key's workspace does not have preview access to the agent runtime");
    }
    c.set('caller', caller);
    return next();
  };
}

/** The Console's session cookie (HttpOnly, SameSite=Strict). */
export const CONSOLE_SESSION_COOKIE = 'hangar_session';
/** Sign-in (POST), the signed-in caller (GET) and sign-out (DELETE). */
export const CONSOLE_SESSION_PATH = '/v1/console/session';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The password of an HTTP basic `Authorization` header (how `git` sends credentials). */
function basicAuthPassword(header: string | undefined): string | undefined {
  if (!header?.startsWith('Basic ')) return undefined;
  const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon >= 0 ? decoded.slice(colon + 1) || undefined : undefined;
}
