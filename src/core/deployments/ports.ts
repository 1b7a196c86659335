// What the deployment control plane needs from other domains, as small interfaces, so it does not
// wait on them: code-host integrations (issue 7), tracing projects (issue 6), and the drivers.
import type { Source } from './types.js';

/** Where and how to fetch a repository of a code-host integration. */
export interface ResolvedRepository {
  /** URL `git clone` uses (may embed a short-lived credential; never logged). */
  cloneUrl: string;
  /** Extra environment for git (for example GIT_ASKPASS helpers). */
  env?: Record<string, string>;
}

/** Code-host integrations: resolves `integration_id` + `repo_url` to something git can fetch. */
export interface CodeHosts {
  /** Throws a HangarError when the integration is unknown in the workspace or does not reach `repoUrl`. */
  resolve(input: { workspaceId: string; integrationId: string; repoUrl: string }): Promise<ResolvedRepository>;
}

/** Tracing projects: each deployment creates one of its name. */
export interface TracingProjects {
  ensureProject(workspaceId: string, name: string): Promise<unknown>;
}

/** Which driver serves which source (configuration). */
export interface DriverRouting {
  /** The driver name serving `source`, or undefined when none is configured. */
  driverFor(source: Source): string | undefined;
}

/** Wakes the reconciler of this process after a change (it also polls, for changes made elsewhere). */
export type Nudge = () => void;
