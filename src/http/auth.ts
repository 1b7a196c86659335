// Authentication: X-Api-Key (or the Console's session cookie) → the caller (workspace, role,
// principal). One middleware for every surface.
import type { MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';
import { csrfTokenOf, type ConsoleSessionService } from '../core/console/sessions.js';
import { HangarError } from '../core/errors.js';
import type { WorkspaceService } from '../core/workspaces/service.js';
import type { AbuseLimits } from './abuse.js';
import type { AppEnv } from './env.js';
import { needsApiKey, surfaceOf } from './surface.js';

// git sends credentials only as HTTP Basic, so the git endpoints (and only they) accept a key there.
const GIT_PATH = /^\/v1\/deepagents\/agents\/[^/]+\.git\/(info\/refs|git-upload-pack)$/;

/** Middleware that authenticates API-key surfaces and enforces preview access on the agent runtime. */
export function apiKeyAuth(workspaces: WorkspaceService, limits?: AbuseLimits, sessions?: ConsoleSessionService): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const surface = surfaceOf(c.req.path);
    if (!needsApiKey(surface)) return next();
    // Signing in to the Console presents the key in the body (and is the only way to get a cookie).
    // It is a key check like any other: refused while the address is throttled, and a refused key
    // (the route's only 401) counts as a failure.
    if (c.req.path === CONSOLE_SESSION_PATH && c.req.method === 'POST') {
      await limits?.assertNotThrottled(c);
      await next();
      if (c.res.status === 401) await limits?.recordFailure(c);
      return;
    }
    const git = GIT_PATH.test(c.req.path);
    const key = c.req.header('x-api-key') ?? (git ? basicAuthPassword(c.req.header('authorization')) : undefined);
    const sessionToken = key ? undefined : getCookie(c, CONSOLE_SESSION_COOKIE);
    if (sessionToken && sessions) {
      await limits?.assertNotThrottled(c);
      const session = await sessions.authenticate(sessionToken);
      if (!session) {
        await limits?.recordFailure(c);
        throw new HangarError('unauthorized', 'the Console session has expired, was signed out, or its API key was revoked; sign in again');
      }
      // CSRF: the cookie alone never authorizes a change. SameSite=Strict already keeps other
      // sites' requests cookie-less; the header, computable only from the HttpOnly token, also
      // stops same-site pages and any form post.
      if (!SAFE_METHODS.has(c.req.method) && c.req.header('x-csrf-token') !== csrfTokenOf(sessionToken)) {
        throw new HangarError('forbidden', 'a Console request that changes something must carry the session\'s X-CSRF-Token header');
      }
      if (surface === 'deepagents' && !session.caller.previewAccess) {
        throw new HangarError('preview_access_required', "this key's workspace does not have preview access to the agent runtime");
      }
      await limits?.chargeKey(c, session.caller.keyId);
      c.set('caller', session.caller);
      return next();
    }
    // git asks for credentials only after a Basic challenge.
    const challenge = () => {
      if (git) c.header('WWW-Authenticate', 'Basic realm="Hangar", charset="UTF-8"');
    };
    if (!key) {
      challenge();
      throw new HangarError('unauthorized', git ? 'send an API key in the X-Api-Key header or as the basic-auth password' : 'send an API key in the X-Api-Key header');
    }
    await limits?.assertNotThrottled(c);
    const caller = await workspaces.authenticate(key);
    if (!caller) {
      await limits?.recordFailure(c);
      challenge();
      throw new HangarError('unauthorized', 'the API key is unknown or revoked');
    }
    if (surface === 'deepagents' && !caller.previewAccess) {
      throw new HangarError('preview_access_required', "this key's workspace does not have preview access to the agent runtime");
    }
    // A deployed application's key only sends traces (LangSmith-compatible ingestion).
    if (caller.tracesProject !== undefined && !c.req.path.startsWith('/langsmith/')) {
      throw new HangarError('forbidden', `this key may only send traces to tracing project "${caller.tracesProject}"`);
    }
    await limits?.chargeKey(c, caller.keyId);
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
