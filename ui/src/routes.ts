// Every page but sign-in is its own chunk, and each route names the queries its page shows first.
// `preload` starts both at once — at navigation start on a cold load (main.tsx, before React renders
// and in parallel with the "who am I" request), and on every in-app navigation — so a page's first
// paint waits for the slowest of session, chunk and data rather than for all three in a row.
import type { QueryClient } from '@tanstack/react-query';
import { matchPath } from 'react-router';
import { sessionHint } from './api';
import { UUID } from './NotFound';
import { agentQuery, agentsQuery, defaultProject, deploymentQuery, deploymentsQuery, mcpServersQuery, modelConfigsQuery, NO_FILTERS, schedulesQuery, sessionQuery, threadQuery, threadsQuery, traceRunsQuery, tracingProjectsQuery, usageQuery } from './queries';

export const pages = {
  Agents: () => import('./pages/Agents'),
  Agent: () => import('./pages/Agent'),
  Playground: () => import('./pages/Playground'),
  Memories: () => import('./pages/Memories'),
  Traces: () => import('./pages/Traces'),
  TraceRun: () => import('./pages/TraceRun'),
  ToolServers: () => import('./pages/ToolServers'),
  Deployments: () => import('./pages/Deployments'),
  Deployment: () => import('./pages/Deployment'),
  Schedules: () => import('./pages/Schedules'),
  Usage: () => import('./pages/Usage'),
  Settings: () => import('./pages/Settings'),
};

type Params = Record<string, string | undefined>;
interface PageRoute {
  path: string;
  page: keyof typeof pages;
  /** Start the page's first queries (a failure is the page's to show when it reads the query). */
  data?: (client: QueryClient, params: Params) => Promise<unknown>;
}

/**
 * An agent's threads: a search is a POST, which a cookie session may make only with its CSRF token,
 * and that comes with "who am I" — so this one waits for the session (the chunk and the GETs do not).
 */
async function threads(c: QueryClient, agentId: string): Promise<void> {
  if (await c.ensureQueryData(sessionQuery)) await c.prefetchQuery(threadsQuery(agentId));
}

export const ROUTES: PageRoute[] = [
  { path: '/agents', page: 'Agents', data: (c) => c.prefetchQuery(agentsQuery()) },
  { path: '/agents/:agentId', page: 'Agent', data: (c, p) => c.prefetchQuery(agentQuery(p.agentId!)) },
  {
    path: '/agents/:agentId/playground',
    page: 'Playground',
    data: (c, p) => Promise.all([c.prefetchQuery(agentQuery(p.agentId!)), threads(c, p.agentId!)]),
  },
  { path: '/agents/:agentId/memories', page: 'Memories', data: (c, p) => c.prefetchQuery(agentQuery(p.agentId!)) },
  {
    path: '/threads/:threadId',
    page: 'Playground',
    // The thread names its agent; the agent and its threads follow as soon as it is known.
    data: async (c, p) => {
      const agentId = (await c.fetchQuery(threadQuery(p.threadId!))).agent_id;
      if (agentId) await Promise.all([c.prefetchQuery(agentQuery(agentId)), threads(c, agentId)]);
    },
  },
  {
    path: '/traces',
    page: 'Traces',
    // The runs of the project the page opens, asked as soon as the projects are known.
    data: async (c) => {
      const project = defaultProject(await c.fetchQuery(tracingProjectsQuery));
      if (project) await c.prefetchQuery(traceRunsQuery({ project, ...NO_FILTERS }));
    },
  },
  { path: '/traces/:runId', page: 'TraceRun' },
  { path: '/tool-servers', page: 'ToolServers', data: (c) => c.prefetchQuery(mcpServersQuery) },
  { path: '/deployments', page: 'Deployments', data: (c) => c.prefetchQuery(deploymentsQuery()) },
  { path: '/deployments/:deploymentId', page: 'Deployment', data: (c, p) => c.prefetchQuery(deploymentQuery(p.deploymentId!)) },
  // All schedules, or one agent's (`?agent=ID`, the agent page's link: the search is not in the path).
  { path: '/schedules', page: 'Schedules', data: (c) => c.prefetchQuery(schedulesQuery(new URLSearchParams(window.location.search).get('agent'))) },
  // The charts' seven daily reports only after the table's: on a busy machine they would slow it down.
  {
    path: '/usage',
    page: 'Usage',
    // The names of the agents in the table, asked as soon as the table's report names them.
    data: async (c) => {
      const usage = await c.fetchQuery(usageQuery(7));
      await Promise.all([...new Set(usage.items.map((r) => r.agent_id))].map((id) => c.prefetchQuery(agentQuery(id))));
    },
  },
  { path: '/settings', page: 'Settings', data: (c) => c.prefetchQuery(modelConfigsQuery) },
];

/** Start loading the chunk and the first data of the page at `pathname` (when signed in). */
export function preload(client: QueryClient, pathname: string): void {
  if (!sessionHint()) return;
  const path = pathname === '/' ? '/agents' : pathname;
  for (const route of ROUTES) {
    const match = matchPath({ path: route.path, end: true }, path);
    if (!match) continue;
    void pages[route.page]().catch(() => {}); // a failed chunk is reported by the page's lazy()
    // An id that cannot name anything is not asked for: the page says there is no such thing.
    if (Object.values(match.params).every((id) => id === undefined || UUID.test(id))) void route.data?.(client, match.params).catch(() => {});
    return;
  }
}
