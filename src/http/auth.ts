// Authentication: X-Api-Key → the caller (workspace, role, principal). One middleware for every surface.
import type { MiddlewareHandler } from 'hono';
import { HangarError } from '../core/errors.js';
import type { WorkspaceService } from '../core/workspaces/service.js';
import type { AppEnv } from './env.js';
import { needsApiKey, surfaceOf } from './surface.js';

/** Middleware that authenticates API-key surfaces and enforces preview access on the agent runtime. */
export function apiKeyAuth(workspaces: WorkspaceService): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const surface = surfaceOf(c.req.path);
    if (!needsApiKey(surface)) return next();
    const key = c.req.header('x-api-key') ?? basicAuthPassword(c.req.header('authorization'));
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

/** The password of an HTTP basic `Authorization` header (how `git` sends credentials). */
function basicAuthPassword(header: string | undefined): string | undefined {
  if (!header?.startsWith('Basic ')) return undefined;
  const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon >= 0 ? decoded.slice(colon + 1) || undefined : undefined;
}
