// Deployment and revision statuses as state machines: the unions, what each status means (served in
// the OpenAPI document), and the one table of allowed revision transitions.

/** Statuses of a revision, in the order a successful one passes through them. */
export const REVISION_STATUSES = [
  'CREATING',
  'QUEUED',
  'AWAITING_BUILD',
  'BUILDING',
  'AWAITING_DEPLOY',
  'DEPLOYING',
  'DEPLOYED',
  'CREATE_FAILED',
  'BUILD_FAILED',
  'DEPLOY_FAILED',
  'SKIPPED',
  'INTERRUPTED',
] as const;

/** A revision status. */
export type RevisionStatus = (typeof REVISION_STATUSES)[number];

/** What each revision status means. */
export const REVISION_STATUS_MEANING: Record<RevisionStatus, string> = {
  CREATING: 'Recorded; its source (integration, upload, template) is being resolved.',
  QUEUED: 'Its source resolved; waiting for a reconciler to take it.',
  AWAITING_BUILD: 'Taken by a reconciler; the build is about to start.',
  BUILDING: 'Fetching the source and running the install and build commands.',
  AWAITING_DEPLOY: 'Built; waiting to be started.',
  DEPLOYING: 'Starting and health-checking; the previous revision keeps serving meanwhile.',
  DEPLOYED: 'Serving: the active revision of its deployment (`active_revision_id`). Exactly one revision of a deployment is DEPLOYED at a time, none before the first deploy succeeds.',
  CREATE_FAILED: 'Its source could not be resolved (final).',
  BUILD_FAILED: 'Fetching, installing or building failed or timed out; see the build logs (final).',
  DEPLOY_FAILED: 'It did not start or did not become healthy; see the deploy logs (final).',
  SKIPPED: 'A newer revision was created before this one started deploying (final).',
  INTERRUPTED: 'No longer serving (final): it was replaced by a newer revision (`status_message` names it; a rollback is a new revision), or its deployment was deleted before or while it served.',
};

/** The allowed transitions, in one table. Every change of status is checked against it. */
export const REVISION_TRANSITIONS: Record<RevisionStatus, readonly RevisionStatus[]> = {
  CREATING: ['QUEUED', 'CREATE_FAILED', 'SKIPPED', 'INTERRUPTED'],
  // The *_FAILED exits from waiting states: the reconciler gave up after repeated unexpected errors.
  QUEUED: ['AWAITING_BUILD', 'BUILD_FAILED', 'SKIPPED', 'INTERRUPTED'],
  AWAITING_BUILD: ['BUILDING', 'BUILD_FAILED', 'SKIPPED', 'INTERRUPTED'],
  // Back to AWAITING_BUILD: the process building it was lost; another one starts the build again.
  BUILDING: ['AWAITING_DEPLOY', 'BUILD_FAILED', 'AWAITING_BUILD', 'SKIPPED', 'INTERRUPTED'],
  AWAITING_DEPLOY: ['DEPLOYING', 'DEPLOY_FAILED', 'SKIPPED', 'INTERRUPTED'],
  // Back to AWAITING_DEPLOY: the process deploying it was lost; another one deploys it again.
  DEPLOYING: ['DEPLOYED', 'DEPLOY_FAILED', 'AWAITING_DEPLOY', 'INTERRUPTED'],
  DEPLOYED: ['INTERRUPTED'],
  CREATE_FAILED: [],
  BUILD_FAILED: [],
  DEPLOY_FAILED: [],
  SKIPPED: [],
  INTERRUPTED: [],
};

/** Whether a revision status is final (no transition leaves it, except DEPLOYED on deletion). */
export function isFinalRevisionStatus(status: RevisionStatus): boolean {
  return status === 'DEPLOYED' || REVISION_TRANSITIONS[status].length === 0;
}

/** Statuses a reconciler still has work to do in. */
export const IN_PROGRESS_REVISION_STATUSES: readonly RevisionStatus[] = REVISION_STATUSES.filter((s) => !isFinalRevisionStatus(s));

/** Statuses before deployment starts: a newer revision skips a revision in one of these. */
export const SKIPPABLE_REVISION_STATUSES: readonly RevisionStatus[] = REVISION_STATUSES.filter((s) =>
  REVISION_TRANSITIONS[s].includes('SKIPPED'),
);

/** Whether `from → to` is allowed. */
export function canTransition(from: RevisionStatus, to: RevisionStatus): boolean {
  return REVISION_TRANSITIONS[from].includes(to);
}

/** The statuses a revision may move to `to` from. */
export function sourcesOf(to: RevisionStatus): RevisionStatus[] {
  return REVISION_STATUSES.filter((s) => REVISION_TRANSITIONS[s].includes(to));
}

/** Statuses of a deployment. */
export const DEPLOYMENT_STATUSES = ['AWAITING_DATABASE', 'READY', 'UNUSED', 'AWAITING_DELETE', 'UNKNOWN'] as const;

/** A deployment status. */
export type DeploymentStatus = (typeof DEPLOYMENT_STATUSES)[number];

/** What each deployment status means. */
export const DEPLOYMENT_STATUS_MEANING: Record<DeploymentStatus, string> = {
  AWAITING_DATABASE: 'Its first revision is being deployed and its storage prepared; nothing serves yet.',
  READY: 'Its active revision answers at the stable URL (a newer revision may be building or deploying meanwhile).',
  UNUSED: 'Nothing is deployed: no revision has deployed successfully yet, or the last attempt failed.',
  AWAITING_DELETE: 'Deletion was requested; the driver is tearing it down, then it disappears.',
  UNKNOWN: 'Its active revision is not answering: the process hosting it stopped (for example Hangar restarting) and it is being started again, or it could not be; or a rollout failed after the active revision had stopped for the switch-over and it did not start again (the failed revision\'s `status_message` says so).',
};

/** Markdown list of statuses and their meanings, for OpenAPI descriptions. */
export function describeStatuses<S extends string>(meanings: Record<S, string>): string {
  return (Object.entries(meanings) as [S, string][]).map(([s, m]) => `- \`${s}\`: ${m}`).join('\n');
}
