// Deployments that no longer satisfy the operator's Kubernetes policy: the policy is checked on
// create, PATCH and redeploy, so a deployment made before HANGAR_DEPLOY_K8S_NAMESPACES or
// HANGAR_DEPLOY_K8S_POD_POLICY changed keeps running as it was. Stopping it would take a working
// agent down on a restart; instead, at each start, the server says which ones are out of bounds (a
// warning in its own log, a line in the serving revision's deploy log) and leaves them running. The
// API shows the same at every read (`policy_issues` of a deployment).
import { sql } from 'kysely';
import { policyIssues, type K8sPolicy } from '../core/deployments/k8s-policy.js';
import type { SourceConfig } from '../core/deployments/types.js';
import type { Db } from '../db/index.js';
import type { Logger } from '../logging.js';

/** One deployment out of the policy, with what is out (the fields a PATCH would be refused on). */
export interface PolicyDrift {
  deploymentId: string;
  revisionId: string;
  issues: string[];
}

/**
 * Check the serving revision of every kubernetes-driven deployment against `policy`; report those
 * out of it. Nothing is stopped or changed but the logs.
 */
export async function reportPolicyDrift(o: { db: Db; policy: K8sPolicy; logger: Logger }): Promise<PolicyDrift[]> {
  const rows = await o.db
    .selectFrom('deployments as d')
    .innerJoin('deployment_revisions as r', 'r.id', 'd.active_revision_id')
    .select(['d.id', 'd.source_config', 'r.id as revision_id', 'r.resource_spec'])
    .where('d.driver', '=', 'kubernetes')
    .where('d.status', '<>', 'AWAITING_DELETE')
    .execute();
  const out: PolicyDrift[] = [];
  for (const row of rows) {
    // What runs: the deployment's namespace and its serving revision's pod (a rollback may differ
    // from the deployment's current resource_spec).
    const issues = policyIssues(o.policy, row.source_config as SourceConfig, row.resource_spec as SourceConfig['resource_spec']).map((i) => `${i.field} ${i.message}`);
    if (issues.length === 0) continue;
    out.push({ deploymentId: row.id, revisionId: row.revision_id, issues });
    o.logger.warn({ deployment_id: row.id, revision_id: row.revision_id, issues }, 'a deployment no longer satisfies the Kubernetes policy of this server; it keeps running, and its next change must satisfy it');
    const line = `${new Date().toISOString()} [hangar] this deployment no longer satisfies the server's Kubernetes policy; it keeps running as it is, but a change or a redeploy must satisfy it: ${issues.join('; ')}\n`;
    await sql`UPDATE deployment_revisions SET deploy_log = right(deploy_log || CASE WHEN deploy_log = '' OR right(deploy_log, 1) = E'\n' THEN '' ELSE E'\n' END || ${line}, 524288) WHERE id = ${row.revision_id}`.execute(o.db);
  }
  return out;
}
