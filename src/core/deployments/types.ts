// The domain view of deployments and revisions (wire names stay snake_case inside the JSON objects,
// which are stored and returned as the API has them).
import type { DeploymentStatus, RevisionStatus } from './status.js';

/** Where a deployment's application comes from. */
export const SOURCES = ['vcshost', 'external_docker', 'internal_docker', 'internal_source', 'internal_template'] as const;
/** A deployment source. */
export type Source = (typeof SOURCES)[number];

/** Deployment tiers accepted by the list filter (and, as a Hangar addition, on create). */
export const DEPLOYMENT_TYPES = ['dev_free', 'dev', 'prod'] as const;
/** A deployment tier. */
export type DeploymentType = (typeof DEPLOYMENT_TYPES)[number];

/** `source_config` as stored (all fields nullable). */
export interface SourceConfig {
  integration_id?: string | null;
  repo_url?: string | null;
  build_on_push?: boolean | null;
  custom_url?: string | null;
  resource_spec?: ResourceSpec | null;
  listener_id?: string | null;
  listener_config?: { k8s_namespace?: string | null } | null;
  install_command?: string | null;
  build_command?: string | null;
}

/** `source_revision_config` as stored; `repo_commit_sha` is filled by the build. */
export interface SourceRevisionConfig {
  repo_ref?: string | null;
  agentgraph_config_path?: string | null;
  image_uri?: string | null;
  source_tarball_path?: string | null;
  repo_commit_sha?: string | null;
}

/** `resource_spec`: scale, resources, metadata and pod composition (Kubernetes shapes kept as given). */
export type ResourceSpec = Record<string, unknown> & {
  labels?: Record<string, string> | null;
  annotations?: Record<string, string> | null;
  service_account_name?: string | null;
  image_pull_secrets?: { name: string }[] | null;
  volumes?: Record<string, unknown>[] | null;
  volume_mounts?: Record<string, unknown>[] | null;
  init_containers?: Record<string, unknown>[] | null;
  sidecars?: Record<string, unknown>[] | null;
};

/** A secret given to the application as an environment variable. */
export interface DeploymentSecret {
  name: string;
  value: string;
}

/** A reference to a key of an existing Kubernetes Secret (`external_docker` only). */
export interface SecretReference {
  name: string;
  secret_name: string;
  secret_key: string;
}

/** A deployment with its latest revision's values. */
export interface Deployment {
  id: string;
  workspaceId: string;
  name: string;
  source: Source;
  driver: string;
  sourceConfig: SourceConfig;
  sourceRevisionConfig: SourceRevisionConfig;
  secrets: DeploymentSecret[];
  secretReferences: SecretReference[] | null;
  deploymentType: DeploymentType;
  status: DeploymentStatus;
  remoteReconciled: boolean;
  imageVersion: string | null;
  latestRevisionId: string | null;
  activeRevisionId: string | null;
  /** What of it this server's Kubernetes policy forbids now (set after it was made); empty when nothing. */
  policyIssues: { field: string; message: string }[];
  createdAt: Date;
  updatedAt: Date;
}

/** One revision of a deployment. */
export interface Revision {
  id: string;
  deploymentId: string;
  seq: number;
  status: RevisionStatus;
  sourceRevisionConfig: SourceRevisionConfig;
  resourceSpec: ResourceSpec | null;
  imageVersion: string | null;
  failureReason: string | null;
  createdAt: Date;
  updatedAt: Date;
}
