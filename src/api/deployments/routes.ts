// /v2/deployments: the deployment control plane (SPEC "Deployments"; get, update, delete and
// revisions follow the deployment control-plane conventions, DESIGN.md §1).
import { createRoute, z } from '@hono/zod-openapi';
import { DEPLOYMENT_STATUS_MEANING, describeStatuses, isFinalRevisionStatus, REVISION_STATUS_MEANING, type RevisionStatus } from '../../core/deployments/status.js';
import type { StoredEvent } from '../../runtime/events/types.js';
import type { Caller } from '../../core/caller.js';
import { sseResponse } from '../../http/sse.js';
import type { AppDeps } from '../../http/deps.js';
import { apiKeySecurity, errorResponses, jsonBody, jsonResponse, uuidParam } from '../../http/openapi.js';
import { newRouter } from '../../http/router.js';
import {
  CreateDeploymentRequest,
  DeploymentListSchema,
  DeploymentSchema,
  ListDeploymentsQuery,
  LogsSchema,
  PageQuery,
  presentDeployment,
  presentRevision,
  RevisionListSchema,
  RevisionSchema,
  UpdateDeploymentRequest,
  UploadSchema,
} from './schemas.js';

const BASE = '/v2/deployments';
const tags = ['Deployments'];
const params = z.object({ deployment_id: uuidParam('deployment_id', 'Deployment id.') });
const revParams = params.extend({ revision_id: uuidParam('revision_id', 'Revision id.') });
const cp = (statuses: number[]) => errorResponses('controlplane', statuses);

const list = createRoute({
  method: 'get',
  path: BASE,
  tags,
  summary: 'List deployments',
  description: `Newest first. \`offset\` in the response is the offset of the next page; a page shorter than \`limit\` is the last.\n\nDeployment statuses:\n${describeStatuses(DEPLOYMENT_STATUS_MEANING)}`,
  security: apiKeySecurity,
  request: { query: ListDeploymentsQuery },
  responses: { 200: jsonResponse(DeploymentListSchema, 'A page of deployments.'), ...cp([422]) },
});

const create = createRoute({
  method: 'post',
  path: BASE,
  tags,
  summary: 'Create a deployment',
  description:
    'Records the deployment and its first revision (status `CREATING`), creates a tracing project of the same name, and hands the revision to the reconciler. ' +
    'Fields are validated according to `source`; each problem is reported with the field and the rule. A source that no configured driver serves is 422 on `source`.',
  security: apiKeySecurity,
  request: { body: jsonBody(CreateDeploymentRequest) },
  responses: { 201: jsonResponse(DeploymentSchema, 'Created.'), ...cp([400, 409, 413, 415, 422]) },
});

const get = createRoute({
  method: 'get',
  path: `${BASE}/{deployment_id}`,
  tags,
  summary: 'Get a deployment',
  security: apiKeySecurity,
  request: { params },
  responses: { 200: jsonResponse(DeploymentSchema, 'The deployment.'), ...cp([404, 422]) },
});

const update = createRoute({
  method: 'patch',
  path: `${BASE}/{deployment_id}`,
  tags,
  summary: 'Update a deployment',
  description:
    'A change to `source_revision_config`, `secrets` or `source_config.resource_spec` makes a new revision (older ones not yet deploying become `SKIPPED`); other `source_config` fields change in place. `name` and `source` are immutable (422).',
  security: apiKeySecurity,
  request: { params, body: jsonBody(UpdateDeploymentRequest) },
  responses: { 200: jsonResponse(DeploymentSchema, 'Updated.'), ...cp([400, 404, 409, 413, 415, 422]) },
});

const remove = createRoute({
  method: 'delete',
  path: `${BASE}/{deployment_id}`,
  tags,
  summary: 'Delete a deployment',
  description: 'The deployment shows `AWAITING_DELETE` while the driver stops and removes what runs, then it is gone (404). Revisions in progress become `INTERRUPTED`.',
  security: apiKeySecurity,
  request: { params },
  responses: { 204: { description: 'Deletion started.' }, ...cp([404, 422]) },
});

const revisions = createRoute({
  method: 'get',
  path: `${BASE}/{deployment_id}/revisions`,
  tags,
  summary: 'List revisions',
  description: `Newest first, paginated like the deployment list.\n\nRevision statuses:\n${describeStatuses(REVISION_STATUS_MEANING)}`,
  security: apiKeySecurity,
  request: { params, query: PageQuery },
  responses: { 200: jsonResponse(RevisionListSchema, 'A page of revisions.'), ...cp([404, 422]) },
});

const revision = createRoute({
  method: 'get',
  path: `${BASE}/{deployment_id}/revisions/{revision_id}`,
  tags,
  summary: 'Get a revision',
  security: apiKeySecurity,
  request: { params: revParams },
  responses: { 200: jsonResponse(RevisionSchema, 'The revision.'), ...cp([404, 422]) },
});

const redeploy = createRoute({
  method: 'post',
  path: `${BASE}/{deployment_id}/revisions/{revision_id}/redeploy`,
  tags,
  summary: 'Redeploy a revision',
  description: "Makes a new revision with the code (`source_revision_config`) and `resource_spec` of this one (the deployment's `source_config.resource_spec` becomes it too, so a later PATCH builds on it), and the deployment's secrets as they are now (a value rotated since is not brought back; a `vcshost` ref is fetched again), for example to roll back. A kubernetes deployment's revision goes through the server's Kubernetes policy as a PATCH would.",
  security: apiKeySecurity,
  request: { params: revParams },
  responses: { 201: jsonResponse(RevisionSchema, 'The new revision.'), ...cp([404, 409, 422]) },
});

const logRoute = (kind: 'build' | 'deploy') =>
  createRoute({
    method: 'get',
    path: `${BASE}/{deployment_id}/revisions/{revision_id}/${kind}-logs`,
    tags,
    summary: kind === 'build' ? 'Build logs of a revision' : 'Deploy logs of a revision',
    description:
      kind === 'build'
        ? 'Output of fetching the source and of the install and build commands, as plain text lines.'
        : 'Output of starting and health-checking the application (local driver: the application’s own output, including restarts).',
    security: apiKeySecurity,
    request: {
      params: revParams,
      query: z.object({
        follow: z.enum(['true', 'false']).optional().openapi({
          description:
            'With `true`, a `text/event-stream` instead: `event: log` `data: {"text": …}` with the log so far, then each new part as it is written ' +
            '(about every half second), and `event: end` `data: {"status": …}` once the revision is past this phase (build logs: built or failed; ' +
            'deploy logs: failed, skipped or no longer serving — a serving revision’s deploy log follows its application until the client leaves).',
        }),
      }),
    },
    responses: {
      200: { description: 'The log so far: one line per output line, each starting with its ISO 8601 timestamp; colour codes removed.', content: { ...jsonResponse(LogsSchema, '').content, 'text/event-stream': { schema: z.string() } } },
      ...cp([404, 422]),
    },
  });

/** Whether a revision's `kind` log can still grow. */
function logOpen(kind: 'build' | 'deploy', status: RevisionStatus): boolean {
  if (kind === 'build') return ['CREATING', 'QUEUED', 'AWAITING_BUILD', 'BUILDING'].includes(status);
  return status === 'DEPLOYED' || !isFinalRevisionStatus(status);
}

const createUpload = createRoute({
  method: 'post',
  path: `${BASE}/uploads`,
  tags,
  summary: 'Start a source upload',
  description: 'Hands out an upload location for an `internal_source` deployment: PUT the `.tar.gz` of the application to `upload_url`, then create the deployment with `source_tarball_path`.',
  security: apiKeySecurity,
  responses: { 201: jsonResponse(UploadSchema, 'The upload location.'), ...cp([]) },
});

const putUpload = createRoute({
  method: 'put',
  path: `${BASE}/uploads/{upload_id}`,
  tags,
  summary: 'Upload a source tarball',
  description: 'The body is the gzipped tarball (`application/gzip`), at most the configured body limit; it may unpack to at most 256 MiB in 50,000 entries (else 400, nothing stored). It may be replaced until a revision is made from it (then 409: start a new upload).',
  security: apiKeySecurity,
  request: {
    params: z.object({ upload_id: uuidParam('upload_id', 'Upload id.') }),
    body: { required: true, content: { 'application/gzip': { schema: z.string().openapi({ format: 'binary' }) } } },
  },
  responses: { 200: jsonResponse(UploadSchema, 'Stored.'), ...cp([400, 404, 409, 413, 422]) },
});

/** Routes of deployments. */
export function deploymentRoutes({ services, heartbeatMs }: AppDeps) {
  const svc = services.deployments;
  const uploadBody = (id: string, path: string) => ({ source_tarball_path: path, upload_url: `${BASE}/uploads/${id}` });
  return newRouter()
    .openapi(list, async (c) => {
      const page = await svc.list(c.get('caller'), c.req.valid('query'));
      return c.json({ resources: page.resources.map(presentDeployment), offset: page.offset }, 200);
    })
    .openapi(createUpload, async (c) => {
      const u = await services.deploymentUploads.create(c.get('caller'));
      return c.json(uploadBody(u.id, u.sourceTarballPath), 201);
    })
    .openapi(putUpload, async (c) => {
      const bytes = Buffer.from(await c.req.arrayBuffer());
      const u = await services.deploymentUploads.put(c.get('caller'), c.req.valid('param').upload_id, bytes);
      return c.json(uploadBody(u.id, u.sourceTarballPath), 200);
    })
    .openapi(create, async (c) => c.json(presentDeployment(await svc.create(c.get('caller'), c.req.valid('json'))), 201))
    .openapi(get, async (c) => c.json(presentDeployment(await svc.get(c.get('caller'), c.req.valid('param').deployment_id)), 200))
    .openapi(update, async (c) => {
      const d = await svc.update(c.get('caller'), c.req.valid('param').deployment_id, c.req.valid('json'));
      return c.json(presentDeployment(d), 200);
    })
    .openapi(remove, async (c) => {
      await svc.delete(c.get('caller'), c.req.valid('param').deployment_id);
      return c.body(null, 204);
    })
    .openapi(revisions, async (c) => {
      const page = await svc.listRevisions(c.get('caller'), c.req.valid('param').deployment_id, c.req.valid('query'));
      return c.json({ resources: page.resources.map(presentRevision), offset: page.offset }, 200);
    })
    .openapi(revision, async (c) => {
      const p = c.req.valid('param');
      return c.json(presentRevision(await svc.getRevision(c.get('caller'), p.deployment_id, p.revision_id)), 200);
    })
    .openapi(redeploy, async (c) => {
      const p = c.req.valid('param');
      return c.json(presentRevision(await svc.redeploy(c.get('caller'), p.deployment_id, p.revision_id)), 201);
    })
    .openapi(logRoute('build'), async (c) => (await logs(c.get('caller'), c.req.valid('param'), c.req.valid('query').follow === 'true', 'build')) as never)
    .openapi(logRoute('deploy'), async (c) => (await logs(c.get('caller'), c.req.valid('param'), c.req.valid('query').follow === 'true', 'deploy')) as never);

  // One handler for both kinds: the log so far as JSON, or followed as server-sent events.
  async function logs(caller: Caller, p: { deployment_id: string; revision_id: string }, followed: boolean, kind: 'build' | 'deploy'): Promise<Response> {
    const { revision: r, logs: text } = await svc.logs(caller, p.deployment_id, p.revision_id, kind);
    if (!followed) return Response.json({ revision_id: r.id, kind, status: r.status, logs: text }, { status: 200 });
    async function* follow(signal: AbortSignal): AsyncIterable<StoredEvent> {
      let sent = 0;
      let seq = 0;
      for (;;) {
        const now = await svc.logs(caller, p.deployment_id, p.revision_id, kind);
        // Only the last 512 KiB are kept: when the log was cut, carry on from its new end.
        if (now.logs.length < sent) sent = now.logs.length;
        if (now.logs.length > sent) {
          yield { seq: ++seq, event: 'log', data: { text: now.logs.slice(sent) } };
          sent = now.logs.length;
        }
        if (!logOpen(kind, now.revision.status)) {
          yield { seq: ++seq, event: 'end', data: { status: now.revision.status } };
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 500));
        if (signal.aborted) return;
      }
    }
    return sseResponse({ events: follow, heartbeatMs });
  }
}
