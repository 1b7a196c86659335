// Reading deployments and revisions out of their rows (secrets decrypted, statuses typed).
import { sql, type Selectable } from 'kysely';
import type { Db } from '../../db/index.js';
import type { DeploymentRevisionsTable, DeploymentsTable } from '../../db/tables/deployments.js';
import type { Cipher } from '../secrets/cipher.js';
import { OPEN_K8S_POLICY, policyIssues, type K8sPolicy } from './k8s-policy.js';
import type { DeploymentStatus, RevisionStatus } from './status.js';
import type { Deployment, DeploymentSecret, DeploymentType, ResourceSpec, Revision, SecretReference, Source, SourceConfig, SourceRevisionConfig } from './types.js';

/** A deployment row joined with its latest revision's configuration and sealed secrets. */
export type DeploymentRow = Selectable<DeploymentsTable> & {
  rev_config: Record<string, unknown> | null;
  rev_secrets: string | null;
  rev_sha: string | null;
  /** The resource_spec of the revision that serves (the active one, else the latest). */
  serving_spec: unknown;
};

/** Select deployments with their latest revision's fields. */
export function selectDeployments(db: Db) {
  return db
    .selectFrom('deployments as d')
    .leftJoin('deployment_revisions as r', 'r.id', 'd.latest_revision_id')
    .selectAll('d')
    .select(['r.source_revision_config as rev_config', 'r.secrets_encrypted as rev_secrets', 'r.repo_commit_sha as rev_sha'])
    .select(sql<unknown>`(SELECT s.resource_spec FROM deployment_revisions s WHERE s.id = coalesce(d.active_revision_id, d.latest_revision_id))`.as('serving_spec'));
}

/** The domain form of a deployment row; `policy`: this server's Kubernetes policy, for `policyIssues`. */
export function toDeployment(row: DeploymentRow, cipher: Cipher, policy: K8sPolicy = OPEN_K8S_POLICY): Deployment {
  const revConfig = (row.rev_config ?? {}) as SourceRevisionConfig;
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    name: row.name,
    source: row.source as Source,
    driver: row.driver,
    sourceConfig: row.source_config as SourceConfig,
    sourceRevisionConfig: { ...revConfig, repo_commit_sha: row.rev_sha },
    secrets: row.rev_secrets ? cipher.decryptJson<DeploymentSecret[]>(row.rev_secrets) : [],
    secretReferences: (row.secret_references as SecretReference[] | null) ?? null,
    deploymentType: row.deployment_type as DeploymentType,
    status: row.status as DeploymentStatus,
    remoteReconciled: row.remote_reconciled,
    imageVersion: row.image_version,
    latestRevisionId: row.latest_revision_id,
    activeRevisionId: row.active_revision_id,
    policyIssues: row.driver === 'kubernetes' ? policyIssues(policy, row.source_config as SourceConfig, row.serving_spec as SourceConfig['resource_spec']) : [],
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** The domain form of a revision row. */
export function toRevision(row: Selectable<DeploymentRevisionsTable>): Revision {
  return {
    id: row.id,
    deploymentId: row.deployment_id,
    seq: row.seq,
    status: row.status as RevisionStatus,
    sourceRevisionConfig: { ...(row.source_revision_config as SourceRevisionConfig), repo_commit_sha: row.repo_commit_sha },
    resourceSpec: row.resource_spec as ResourceSpec | null,
    imageVersion: row.image_version,
    failureReason: row.failure_reason,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
