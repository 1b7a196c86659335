// Hangar answers in the conventions of the API surface a path belongs to (DESIGN.md §1).

/**
 * - `deepagents`: the agent runtime (`/v1/deepagents/*`), errors `{type, code, detail, status}`.
 * - `controlplane`: deployments, OAuth providers, integrations (`/v2/*`, `/v1/integrations/*`),
 *   errors `{detail}`, validation `{detail: [{loc, msg, type}]}`.
 * - `hangar`: Hangar's own APIs (tracing and others) and the LangSmith-compatible ingestion API
 *   under `/langsmith`, errors like `deepagents`.
 * - `public`: unauthenticated service endpoints (`/ok`, `/ready`, `/metrics`, `/info`, `/openapi.json`, `/docs`).
 */
export type Surface = 'deepagents' | 'controlplane' | 'hangar' | 'public';

/** The surface of a request path. */
export function surfaceOf(path: string): Surface {
  if (path === '/v1/deepagents' || path.startsWith('/v1/deepagents/')) return 'deepagents';
  if (path.startsWith('/v2/') || path === '/v2' || path.startsWith('/v1/integrations/')) return 'controlplane';
  if (path.startsWith('/v1/')) return 'hangar';
  if (path === '/langsmith' || path.startsWith('/langsmith/')) return 'hangar';
  return 'public';
}

/** Whether requests to this surface need an API key. */
export function needsApiKey(surface: Surface): boolean {
  return surface !== 'public';
}
