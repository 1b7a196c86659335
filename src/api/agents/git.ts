// Read-only git smart HTTP for each agent: `git clone <base>/v1/deepagents/agents/<agent_id>.git`,
// authenticated with an API key as the basic-auth password. Protocol version 0, one branch `main`.
import { gunzipSync } from 'node:zlib';
import { type OpenAPIHono, z } from '@hono/zod-openapi';
import { HangarError } from '../../core/errors.js';
import type { AppDeps } from '../../http/deps.js';
import type { AppEnv } from '../../http/env.js';
import { newRouter } from '../../http/router.js';
import type { GitObject } from '../../repo/objects.js';
import { GitProtocolError } from '../../repo/pack.js';
import { viewerScrub } from './viewer.js';
import type { Caller } from '../../core/caller.js';
import type { Services } from '../../core/services.js';
import { advertiseRefs, parseUploadRequest, type UploadRequest, uploadPackResponse } from '../../repo/upload-pack.js';

// Any `<segment>.git`, so that a clone URL naming the agent by something other than its id gets a
// 404 that says so (git prints it), not a request for credentials.
const REPO = '/v1/deepagents/agents/:repo{[^/]+\\.git}';
const AGENT_ID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** Routes of the git endpoint (plain routes: their bodies are git's, not JSON). */
export function gitRoutes({ services }: AppDeps) {
  const router = newRouter();
  router.get(`${REPO}/info/refs`, async (c) => {
    if (c.req.query('service') !== 'git-upload-pack') {
      throw new HangarError('route_not_found', 'only smart HTTP is served: ask for info/refs?service=git-upload-pack (the repository is read-only)');
    }
    const repo = await openRepository(services, c.get('caller'), c.req.param('repo'));
    if ('refusal' in repo) return c.text(repo.refusal[0], repo.refusal[1]);
    return new Response(advertiseRefs(repo.row.head), { status: 200, headers: gitHeaders('application/x-git-upload-pack-advertisement') });
  });
  router.post(`${REPO}/git-upload-pack`, async (c) => {
    const repo = await openRepository(services, c.get('caller'), c.req.param('repo'));
    if ('refusal' in repo) return c.text(repo.refusal[0], repo.refusal[1]);
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
    const known = new Set(await repo.history());
    const unknown = request.wants.find((w) => !known.has(w));
    if (unknown) throw new HangarError('revision_not_found', `the agent's history has no commit ${unknown}`);
    const response = await uploadPackResponse(request, repo.objects);
    return new Response(response, { status: 200, headers: gitHeaders('application/x-git-upload-pack-result') });
  });
  documentGit(router);
  return router;
}

const CREDENTIAL_REFUSAL =
  'error: this agent\'s history holds a credential (a tool server URL\'s key or token, a tool server\'s header value, or a string shaped like a bearer token or an API key), and a viewer key may not read credentials; ' +
  'read the agent with GET /v1/deepagents/agents/<agent_id>?include_files=true (credentials redacted), or clone with a member or admin key\n';

/**
 * The agent a git request names, with its history and objects each read at most once per request
 * (a viewer's credential check and the pack share them); or the text answer that refuses the request.
 */
async function openRepository(services: Services, caller: Caller, repo: string) {
  const agentId = agentIdOf(repo);
  if (!AGENT_ID.test(agentId)) return { refusal: [notAnAgentId(agentId), 404] as const };
  const row = await services.agents.findRow(caller.workspaceId, agentId);
  let history: Promise<string[]> | undefined;
  let objects: Promise<GitObject[]> | undefined;
  const opened = {
    row,
    history: () => (history ??= services.agents.revisionCommits(row.id)),
    objects: () => (objects ??= opened.history().then((commits) => services.gitObjects.reachable(commits))),
  };
  if (await holdsCredentialFor(services, caller, opened.objects)) return { refusal: [CREDENTIAL_REFUSAL, 403] as const };
  return opened;
}

/**
 * Whether the agent's history holds something a viewer may not read (`viewerScrub` would change a
 * file or a commit message of it). Such a clone is refused to viewers rather than served rewritten:
 * a rewritten history would have other commit ids than the revisions the API names.
 */
async function holdsCredentialFor(services: Services, caller: Caller, objects: () => Promise<GitObject[]>): Promise<boolean> {
  const scrub = await viewerScrub(services, caller);
  if (!scrub) return false;
  return (await objects()).some((o) => {
    if (o.type === 'tree') return false;
    const text = o.body.toString('utf8');
    return scrub(text) !== text;
  });
}

/** The 404 of a clone URL that does not name an agent by its id (git prints it to its user). */
function notAnAgentId(segment: string): string {
  return `error: "${segment.slice(0, 100)}" is not an agent id: clone an agent by its id, <host>/v1/deepagents/agents/<agent_id>.git (\`hangar agents list\` shows the ids)\n`;
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
      'Read-only git smart HTTP (protocol v0): `git -c http.extraHeader="X-Api-Key: <API_KEY>" clone <host>/v1/deepagents/agents/<agent_id>.git`, so that no key lands in `.git/config`. These endpoints also accept the key as the HTTP Basic password, for credential helpers (any user name); no other endpoint does. One branch, `main`, at the agent’s `revision`; `git log` shows the same commits as the revisions endpoint. Query `service=git-upload-pack`. A viewer key is refused (403, `text/plain`) an agent whose history holds a credential (a tool server URL’s key or token, a tool server’s header value, a string shaped like a bearer token or an API key): a clone cannot be redacted without changing its commit ids; the API’s reads give viewers the redacted form.',
    security: [{ ApiKeyAuth: [] }],
    request,
    responses: {
      200: { description: 'pkt-line ref advertisement (`application/x-git-upload-pack-advertisement`).' },
      401: { description: 'No or unknown key (with `WWW-Authenticate: Basic`).' },
      403: { description: 'A viewer key, and the agent’s history holds a credential (`text/plain`).' },
      404: { description: 'No such agent in the workspace, or the path names the agent by something other than its id (then `text/plain`, which git prints).' },
    },
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
      403: { description: 'A viewer key, and the agent’s history holds a credential (`text/plain`).' },
      404: { description: 'No such agent in the workspace, or the path names the agent by something other than its id (then `text/plain`, which git prints).' },
    },
  });
}
