// /v1/tracing: tracing projects, their runs (root runs with filters, one run with its tree) and stats.
import { createRoute, z } from '@hono/zod-openapi';
import type { AppDeps } from '../../http/deps.js';
import { apiKeySecurity, errorResponses, jsonBody, jsonResponse, uuidParam } from '../../http/openapi.js';
import { newRouter } from '../../http/router.js';
import {
  CreateTracingProjectRequest,
  ExporterList,
  ProjectStatsSchema,
  presentProject,
  presentRootRun,
  presentStats,
  presentTree,
  TraceRunPage,
  TraceRunTreeSchema,
  TracingProjectList,
  TracingProjectSchema,
} from './schemas.js';

const BASE = '/v1/tracing';
const tags = ['Tracing'];
const projectParams = z.object({ project_id: uuidParam('project_id', 'Tracing project id.') });
const time = (description: string) => z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time' }).optional().openapi({ description });
const range = {
  start_time_gte: time('Only runs that started at or after this time.'),
  start_time_lt: time('Only runs that started before this time.'),
};
const runsQuery = z.object({
  ...range,
  status: z.enum(['pending', 'success', 'error']).optional(),
  name: z.string().min(1).max(200).optional().openapi({ description: 'Runs whose name contains this text (case-insensitive).' }),
  error: z.enum(['true', 'false']).optional().openapi({ description: '`true`: only failed runs; `false`: only runs without an error.' }),
  min_latency_ms: z.coerce.number().min(0).optional().openapi({ description: 'Only finished runs that took at least this long.' }),
  page_size: z.coerce.number().int().min(1).max(100).default(20).openapi({ description: '1 to 100, default 20.' }),
  cursor: z.string().max(200).optional().openapi({ description: '`next_cursor` of the previous page.' }),
});

const listProjects = createRoute({
  method: 'get',
  path: `${BASE}/projects`,
  tags,
  summary: 'List tracing projects',
  description: 'Oldest first. The workspace’s default project always exists and is listed.',
  security: apiKeySecurity,
  responses: { 200: jsonResponse(TracingProjectList, 'The workspace’s projects.'), ...errorResponses('hangar', []) },
});

const createProject = createRoute({
  method: 'post',
  path: `${BASE}/projects`,
  tags,
  summary: 'Create a tracing project',
  description: 'Names are unique per workspace. Traces name a project with `session_name` (LangSmith SDK) or the thread metadata key `tracing_project`.',
  security: apiKeySecurity,
  request: { body: jsonBody(CreateTracingProjectRequest) },
  responses: { 201: jsonResponse(TracingProjectSchema, 'Created.'), ...errorResponses('hangar', [400, 409, 413, 415, 422]) },
});

const getProject = createRoute({
  method: 'get',
  path: `${BASE}/projects/{project_id}`,
  tags,
  summary: 'Get a tracing project',
  security: apiKeySecurity,
  request: { params: projectParams },
  responses: { 200: jsonResponse(TracingProjectSchema, 'The project.'), ...errorResponses('hangar', [404, 422]) },
});

const listRuns = createRoute({
  method: 'get',
  path: `${BASE}/projects/{project_id}/runs`,
  tags,
  summary: 'List the root runs of a project',
  description: 'One item per trace (its root run), newest first, with the token totals of the whole trace. Filters combine with AND.',
  security: apiKeySecurity,
  request: { params: projectParams, query: runsQuery },
  responses: { 200: jsonResponse(TraceRunPage, 'A page of root runs.'), ...errorResponses('hangar', [404, 422]) },
});

const stats = createRoute({
  method: 'get',
  path: `${BASE}/projects/{project_id}/stats`,
  tags,
  summary: 'Figures of a project',
  description: 'Count, error rate and latency percentiles of root runs; token totals of all model runs. Optionally within a time range.',
  security: apiKeySecurity,
  request: { params: projectParams, query: z.object(range) },
  responses: { 200: jsonResponse(ProjectStatsSchema, 'The figures.'), ...errorResponses('hangar', [404, 422]) },
});

const getRun = createRoute({
  method: 'get',
  path: `${BASE}/runs/{run_id}`,
  tags,
  summary: 'Get a run with its children',
  description: 'The run and, nested in `child_runs` (in execution order), every run beneath it.',
  security: apiKeySecurity,
  request: { params: z.object({ run_id: uuidParam('run_id', 'Run id.') }) },
  responses: { 200: jsonResponse(TraceRunTreeSchema, 'The run tree.'), ...errorResponses('hangar', [404, 422]) },
});

const exporters = createRoute({
  method: 'get',
  path: `${BASE}/exporters`,
  tags,
  summary: 'Export counters',
  description:
    'One item per configured exporter (`otlp`, `langsmith`) of this server process: the run reports of the caller\'s workspace ' +
    'queued, sent, and dropped (queue full or destination failing). Other workspaces\' reports are not counted here; the ' +
    'process\'s totals are on `/metrics`. Export never slows or fails runs; what it cannot deliver is counted here.',
  security: apiKeySecurity,
  responses: { 200: jsonResponse(ExporterList, 'Counters since start.'), ...errorResponses('hangar', []) },
});

const date = (v: string | undefined) => (v === undefined ? undefined : new Date(v));

/** Routes of the tracing read API. */
export function tracingRoutes({ services }: AppDeps) {
  return newRouter()
    .openapi(listProjects, async (c) => c.json({ items: (await services.tracing.listProjects(c.get('caller'))).map(presentProject) }, 200))
    .openapi(createProject, async (c) => c.json(presentProject(await services.tracing.createProject(c.get('caller'), c.req.valid('json'))), 201))
    .openapi(getProject, async (c) => c.json(presentProject(await services.tracing.getProject(c.get('caller'), c.req.valid('param').project_id)), 200))
    .openapi(listRuns, async (c) => {
      const q = c.req.valid('query');
      const page = await services.tracing.listRuns(c.get('caller'), c.req.valid('param').project_id, {
        startAfter: date(q.start_time_gte),
        startBefore: date(q.start_time_lt),
        status: q.status,
        name: q.name,
        error: q.error === undefined ? undefined : q.error === 'true',
        minLatencyMs: q.min_latency_ms,
        limit: q.page_size,
        cursor: q.cursor,
      });
      return c.json({ items: page.runs.map(presentRootRun), next_cursor: page.nextCursor }, 200);
    })
    .openapi(stats, async (c) => {
      const q = c.req.valid('query');
      const figures = await services.tracing.stats(c.get('caller'), c.req.valid('param').project_id, { startAfter: date(q.start_time_gte), startBefore: date(q.start_time_lt) });
      return c.json(presentStats(figures), 200);
    })
    .openapi(exporters, (c) => c.json({ items: services.tracing.exporterStats(c.get('caller')) }, 200))
    .openapi(getRun, async (c) => c.json(presentTree(await services.tracing.getRun(c.get('caller'), c.req.valid('param').run_id)), 200));
}
