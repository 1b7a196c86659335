// The queries the pages show first, in one place: the pages read them with `useQuery`, and the
// entry (routes.ts) starts them at navigation start — alongside the "who am I" request and the
// page's chunk rather than after them — so the data is there (or on its way) when the page mounts.
import { queryOptions } from '@tanstack/react-query';
import { api, fetchSession, ok, setCsrfToken } from './api';

export const sessionQuery = queryOptions({
  queryKey: ['session'],
  queryFn: async () => {
    const s = await fetchSession();
    setCsrfToken(s?.csrf_token ?? null);
    return s;
  },
  staleTime: Infinity,
});

/** A page of the workspace's agents (100, most recently updated first) whose name contains `name`; `cursor`: the page after the one that gave it. */
export const agentsQuery = (name = '', cursor?: string) =>
  queryOptions({
    queryKey: ['agents', name, cursor],
    queryFn: async () => ok(await api.GET('/v1/deepagents/agents', { params: { query: { page_size: 100, ...(name ? { name } : {}), ...(cursor ? { cursor } : {}) } } })),
  });

/** The server's facts (`/info`): whether runs are traced, among others. */
export const infoQuery = queryOptions({
  queryKey: ['info'],
  queryFn: async () => ok(await api.GET('/info')),
  staleTime: Infinity,
});

export const agentQuery = (agentId: string) =>
  queryOptions({
    queryKey: ['agent', agentId],
    queryFn: async () => ok(await api.GET('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: agentId } } })),
  });

export const threadQuery = (threadId: string) =>
  queryOptions({
    queryKey: ['thread', threadId],
    queryFn: async () => ok(await api.GET('/v1/deepagents/threads/{thread_id}', { params: { path: { thread_id: threadId } } })),
  });

/** Rows per page of the lists paged by offset (deployments, threads, a thread's runs). */
export const THREADS_PAGE = 50;
export const RUNS_PAGE = 20;
export const DEPLOYMENTS_PAGE = 100;

/** A page of an agent's threads (50, newest first), from `offset`. */
export const threadsQuery = (agentId: string, status: string | null = null, offset = 0) =>
  queryOptions({
    queryKey: ['threads', agentId, status, offset],
    queryFn: async () =>
      ok(
        await api.POST('/v1/deepagents/threads/search', {
          body: { agent_id: agentId, limit: THREADS_PAGE, offset, ...(status ? { status: status as 'idle' } : {}) },
        }),
      ),
  });

/** A page of a thread's runs (20, newest first), from `offset`. */
export const runsQuery = (threadId: string | null, offset = 0) =>
  queryOptions({
    queryKey: ['runs', threadId, offset],
    enabled: Boolean(threadId),
    queryFn: async () => ok(await api.GET('/v1/deepagents/threads/{thread_id}/runs', { params: { path: { thread_id: threadId! }, query: { limit: RUNS_PAGE, offset } } })),
  });

export const modelConfigsQuery = queryOptions({
  queryKey: ['model-configs'],
  queryFn: async () => ok(await api.GET('/v1/deepagents/model-configs')),
});

export const mcpServersQuery = queryOptions({
  queryKey: ['mcp-servers'],
  queryFn: async () => ok(await api.GET('/v1/deepagents/mcp-servers')),
});

export const tracingProjectsQuery = queryOptions({
  queryKey: ['tracing-projects'],
  queryFn: async () => ok(await api.GET('/v1/tracing/projects')),
});

export const SINCE: Record<string, number | null> = { 'Last hour': 3600e3, 'Last 24 hours': 86400e3, 'Last 7 days': 7 * 86400e3, 'Any time': null };

export interface RunFilters {
  project: string | null;
  status: string | null;
  name: string;
  minLatency: number | string;
  since: string;
  cursor: string | undefined;
}
export const NO_FILTERS: Omit<RunFilters, 'project'> = { status: null, name: '', minLatency: '', since: 'Any time', cursor: undefined };

export const traceRunsQuery = (f: RunFilters) =>
  queryOptions({
    queryKey: ['trace-runs', f.project, f.status, f.name, f.minLatency, f.since, f.cursor],
    enabled: Boolean(f.project),
    queryFn: async () => {
      const window = SINCE[f.since] ?? null;
      return ok(
        await api.GET('/v1/tracing/projects/{project_id}/runs', {
          params: {
            path: { project_id: f.project! },
            query: {
              page_size: 50,
              ...(f.status ? { status: f.status as 'pending' | 'success' | 'error' } : {}),
              ...(f.name ? { name: f.name } : {}),
              ...(typeof f.minLatency === 'number' ? { min_latency_ms: f.minLatency } : {}),
              ...(window ? { start_time_gte: new Date(Date.now() - window).toISOString() } : {}),
              ...(f.cursor ? { cursor: f.cursor } : {}),
            },
          },
        }),
      );
    },
  });

/** The project the Traces page opens: the default one, else the first. */
export function defaultProject(projects: { items: { id: string; is_default: boolean }[] } | undefined): string | null {
  if (!projects?.items.length) return null;
  return (projects.items.find((p) => p.is_default) ?? projects.items[0]!).id;
}

/** A page of the workspace's deployments (100), from `offset`. */
export const deploymentsQuery = (offset = 0) =>
  queryOptions({
    queryKey: ['deployments', offset],
    queryFn: async () => ok(await api.GET('/v2/deployments', { params: { query: { limit: DEPLOYMENTS_PAGE, offset } } })),
  });

export const deploymentQuery = (deploymentId: string) =>
  queryOptions({
    queryKey: ['deployment', deploymentId],
    queryFn: async () => ok(await api.GET('/v2/deployments/{deployment_id}', { params: { path: { deployment_id: deploymentId } } })),
  });

const DAY = 86_400_000;

function usageRanges(days: number) {
  const today = new Date(new Date().toDateString()).getTime() + DAY;
  return Array.from({ length: days }, (_, i) => ({ start: new Date(today - (days - i) * DAY), end: new Date(today - (days - i - 1) * DAY) }));
}

async function usageReport(start: Date, end: Date) {
  return ok(await api.GET('/v1/deepagents/usage', { params: { query: { start: start.toISOString(), end: end.toISOString() } } }));
}

/** Runs and tokens per agent and model over the last `days` days (the Usage table). */
export const usageQuery = (days: number) =>
  queryOptions({
    queryKey: ['usage', days],
    queryFn: async () => {
      const ranges = usageRanges(days);
      return usageReport(ranges[0]!.start, ranges[days - 1]!.end);
    },
  });

/** One usage report per day over the last `days` days (the Usage charts; asked beside the table's). */
export const dailyUsageQuery = (days: number) =>
  queryOptions({
    queryKey: ['usage-daily', days],
    queryFn: async () =>
      Promise.all(usageRanges(days).map(async (r) => ({ day: r.start.toLocaleDateString(undefined, { month: 'short', day: 'numeric' }), report: await usageReport(r.start, r.end) }))),
  });

/** Rows per page of the schedules list and of a schedule's ticks. */
export const SCHEDULES_PAGE = 50;
export const TICKS_PAGE = 20;

/** A page of the workspace's schedules (50, newest first), of one agent when `agentId` is set; `cursor`: the page after the one that gave it. */
export const schedulesQuery = (agentId: string | null = null, cursor?: string) =>
  queryOptions({
    queryKey: ['schedules', agentId, cursor],
    queryFn: async () =>
      ok(await api.GET('/v1/deepagents/schedules', { params: { query: { page_size: SCHEDULES_PAGE, ...(agentId ? { agent_id: agentId } : {}), ...(cursor ? { cursor } : {}) } } })),
  });

/** A page of a schedule's ticks and the runs they started (20, newest first). */
export const ticksQuery = (scheduleId: string, cursor?: string) =>
  queryOptions({
    queryKey: ['schedule-ticks', scheduleId, cursor],
    queryFn: async () =>
      ok(await api.GET('/v1/deepagents/schedules/{schedule_id}/runs', { params: { path: { schedule_id: scheduleId }, query: { page_size: TICKS_PAGE, ...(cursor ? { cursor } : {}) } } })),
  });
