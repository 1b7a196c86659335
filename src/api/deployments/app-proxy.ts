// The stable URL of a locally running deployment: /v2/deployments/{id}/app/* forwards to the active
// revision's process, wherever it runs on this host, so the URL survives new revisions and restarts.
//
// The application is not trusted (docs/security.md) and its stable URL shares Hangar's origin with
// the Console, so nothing of Hangar's authentication reaches it (the API key, the Console's session
// cookie and CSRF header), it cannot set cookies on Hangar's origin, and a page it serves is
// rendered sandboxed (an opaque origin, no scripts): it cannot act as the signed-in user.
import { HangarError } from '../../core/errors.js';
import type { AppDeps } from '../../http/deps.js';
import { newRouter } from '../../http/router.js';

const HOP_BY_HOP = ['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'host', 'content-length'];
/** Hangar's own credentials: never forwarded to the application. */
const CREDENTIALS = ['x-api-key', 'cookie', 'x-csrf-token'];

/** The proxy route (authenticated with the workspace's API key like every /v2 route; the key is not forwarded). */
export function appProxyRoutes({ services }: AppDeps) {
  return newRouter().all('/v2/deployments/:deployment_id/app/*', async (c) => {
    const id = c.req.param('deployment_id');
    const target = await services.deployments.appUrl(c.get('caller'), id);
    const url = new URL(c.req.url);
    const rest = url.pathname.slice(`/v2/deployments/${id}/app`.length) || '/';
    const headers = new Headers(c.req.raw.headers);
    for (const h of [...HOP_BY_HOP, ...CREDENTIALS]) headers.delete(h);
    const hasBody = !['GET', 'HEAD'].includes(c.req.method);
    let upstream: Response;
    try {
      upstream = await fetch(`${target}${rest}${url.search}`, {
        method: c.req.method,
        headers,
        ...(hasBody ? { body: c.req.raw.body, duplex: 'half' } : {}),
        redirect: 'manual',
      } as RequestInit);
    } catch (error) {
      // Between a crash and its supervised restart the process does not answer.
      throw new HangarError('deployment_not_serving', `deployment ${id} is not answering right now (it may be restarting)`, { cause: error });
    }
    const out = new Headers(upstream.headers);
    out.delete('content-encoding');
    out.delete('content-length');
    out.delete('transfer-encoding');
    out.delete('set-cookie');
    out.set('content-security-policy', 'sandbox');
    out.set('x-content-type-options', 'nosniff');
    return new Response(upstream.body, { status: upstream.status, headers: out });
  });
}
