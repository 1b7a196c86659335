// Authentication: X-Api-Key → the caller (workspace, role, principal). One middleware for every surface.
import type { MiddlewareHandler } from 'hono';
import { HangarError } from '../core/errors.js';
import type { WorkspaceService } from '../core/workspaces/service.js';
import type { AbuseLimits } from './abuse.js';
import type { AppEnv } from './env.js';
import { needsApiKey, surfaceOf } from './surface.js';

// git sends credentials only as HTTP Basic, so the git endpoints (and only they) accept a key there.
const GIT_PATH = /^\/v1\/deepagents\/agents\/[0-9a-fA-F-]{36}\.git\/(info\/refs|git-upload-pack)$/;

/** Middleware that authenticates API-key surfaces and enforces preview access on the agent runtime. */
export function apiKeyAuth(workspaces: WorkspaceService, limits?: AbuseLimits): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const surface = surfaceOf(c.req.path);
    if (!needsApiKey(surface)) return next();
    const git = GIT_PATH.test(c.req.path);
    const key = c.req.header('x-api-key') ?? (git ? basicAuthPassword(c.req.header('authorization')) : undefined);
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

/** The password of an HTTP basic `Authorization` header (how `git` sends credentials). */
function basicAuthPassword(header: string | undefined): string | undefined {
  if (!header?.startsWith('Basic ')) return undefined;
  const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon >= 0 ? decoded.slice(colon + 1) || undefined : undefined;
}
