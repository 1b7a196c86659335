// Read-only git smart HTTP for each agent: `git clone <base>/v1/deepagents/agents/<agent_id>.git`,
// authenticated with an API key as the basic-auth password. Protocol version 0, one branch `main`.
import { gunzipSync } from 'node:zlib';
import { type OpenAPIHono, z } from '@hono/zod-openapi';
import { HangarError } from '../../core/errors.js';
import type { AppDeps } from '../../http/deps.js';
import type { AppEnv } from '../../http/env.js';
import { newRouter } from '../../http/router.js';
import { GitProtocolError } from '../../repo/pack.js';
import { advertiseRefs, parseUploadRequest, type UploadRequest, uploadPackResponse } from '../../repo/upload-pack.js';

const REPO = '/v1/deepagents/agents/:repo{[0-9a-fA-F-]{36}\\.git}';

/** Routes of the git endpoint (plain routes: their bodies are git's, not JSON). */
export function gitRoutes({ services }: AppDeps) {
  const router = newRouter();
  router.get(`${REPO}/info/refs`, async (c) => {
    if (c.req.query('service') !== 'git-upload-pack') {
      throw new HangarError('route_not_found', 'only smart HTTP is served: ask for info/refs?service=git-upload-pack (the repository is read-only)');
    }
    const row = await services.agents.findRow(c.get('caller').workspaceId, agentIdOf(c.req.param('repo')));
    return new Response(advertiseRefs(row.head), { status: 200, headers: gitHeaders('application/x-git-upload-pack-advertisement') });
  });
  router.post(`${REPO}/git-upload-pack`, async (c) => {
    const row = await services.agents.findRow(c.get('caller').workspaceId, agentIdOf(c.req.param('repo')));
    let request: UploadRequest;
    try {
      let body = Buffer.from(await c.req.arrayBuffer());
      if (c.req.header('content-encoding') === 'gzip') body = gunzipSync(body, { maxOutputLength: 64 * 1024 * 1024 });
      request = parseUploadRequest(body);
    } catch (error) {
      // git prints a text/plain error body to its user, so the reason is readable where it matters.
      const reason = error instanceof GitProtocolError ? error.message : 'the body is not valid gzip';
      return c.text(`error: bad upload-pack request: ${reason}\n`, 400);
    }
    const history = await services.agents.revisionCommits(row.id);
    const known = new Set(history);
    const unknown = request.wants.find((w) => !known.has(w));
    if (unknown) throw new HangarError('revision_not_found', `the agent's history has no commit ${unknown}`);
    const response = await uploadPackResponse(request, () => services.gitObjects.reachable(history));
    return new Response(response, { status: 200, headers: gitHeaders('application/x-git-upload-pack-result') });
  });
  documentGit(router);
  return router;
}

function agentIdOf(repo: string): string {
  return repo.slice(0, -'.git'.length).toLowerCase();
}

function gitHeaders(contentType: string): Record<string, string> {
  return { 'content-type': contentType, 'cache-control': 'no-cache' };
}

function documentGit(router: OpenAPIHono<AppEnv>): void {
  const path = '/v1/deepagents/agents/{agent_id}.git';
  const request = { params: z.object({ agent_id: z.uuid().openapi({ param: { name: 'agent_id', in: 'path' } }) }) };
  router.openAPIRegistry.registerPath({
    method: 'get',
    path: `${path}/info/refs`,
    tags: ['Agents'],
    summary: 'Git: ref advertisement',
    description:
      'Read-only git smart HTTP (protocol v0): `git -c http.extraHeader="X-Api-Key: <API_KEY>" clone <host>/v1/deepagents/agents/<agent_id>.git`, so that no key lands in `.git/config`. These endpoints also accept the key as the HTTP Basic password, for credential helpers (any user name); no other endpoint does. One branch, `main`, at the agent’s `revision`; `git log` shows the same commits as the revisions endpoint. Query `service=git-upload-pack`.',
    security: [{ ApiKeyAuth: [] }],
    request,
    responses: { 200: { description: 'pkt-line ref advertisement (`application/x-git-upload-pack-advertisement`).' }, 401: { description: 'No or unknown key (with `WWW-Authenticate: Basic`).' }, 404: { description: 'No such agent in the workspace.' } },
  });
  router.openAPIRegistry.registerPath({
    method: 'post',
    path: `${path}/git-upload-pack`,
    tags: ['Agents'],
    summary: 'Git: upload-pack',
    description: 'Sends the pack of the whole history (no deltas) after the client’s `done`. Used by `git clone` and `git fetch`; not meant for direct calls.',
    security: [{ ApiKeyAuth: [] }],
    request,
    responses: {
      200: { description: 'NAK then the pack (`application/x-git-upload-pack-result`).' },
      400: { description: 'The body does not follow the upload-pack grammar.' },
      401: { description: 'No or unknown key (with `WWW-Authenticate: Basic`).' },
      404: { description: 'No such agent in the workspace.' },
    },
  });
}
