// Wire shapes of /v2/deployments (SPEC "Deployment"); statuses and their meanings come from the
// state machines in src/core/deployments/status.ts.
import { z } from '@hono/zod-openapi';
import {
  DEPLOYMENT_STATUS_MEANING,
  DEPLOYMENT_STATUSES,
  describeStatuses,
  REVISION_STATUS_MEANING,
  REVISION_STATUSES,
} from '../../core/deployments/status.js';
import { DEPLOYMENT_TYPES, SOURCES, type Deployment, type Revision } from '../../core/deployments/types.js';
import { SECRET_MASK } from '../../core/deployments/secrets.js';
import { ResourceSpecSchema } from './resource-spec.js';

const SourceSchema = z.enum(SOURCES).openapi('DeploymentSource', {
  description:
    '`vcshost`: a git repository; `external_docker`: an image you built; `internal_docker`: an image pushed by a CLI; ' +
    '`internal_source`: an uploaded tarball; `internal_template`: a template shipped with Hangar. Immutable.',
});

export const SourceConfigSchema = z
  .object({
    integration_id: z.uuid().nullable().optional().openapi({ description: '`vcshost`: the code-host integration whose credentials fetch `repo_url`.' }),
    repo_url: z.string().nullable().optional().openapi({ description: '`vcshost`: the repository URL (the `url` of a listed repository).' }),
    build_on_push: z.boolean().nullable().optional().openapi({ description: '`vcshost`: build a new revision on push (recorded; pushes are not watched yet).' }),
    custom_url: z.string().nullable().optional().openapi({
      description: 'Where the application answers. Left empty, the local driver fills in its stable proxy URL `{hangar}/apps/{deployment_id}`.',
    }),
    resource_spec: ResourceSpecSchema.nullable().optional(),
    listener_id: z.uuid().nullable().optional().openapi({ description: 'Docker sources: the listener (cluster) to deploy to.' }),
    listener_config: z
      .object({ k8s_namespace: z.string().nullable().optional() })
      .nullable()
      .optional()
      .openapi({ description: 'Docker sources: `k8s_namespace`, the namespace the objects go to (default `default`; one of `HANGAR_DEPLOY_K8S_NAMESPACES` when the server sets it).' }),
    install_command: z.string().nullable().optional().openapi({ description: 'Source builds: install command (default `npm ci` with a lockfile, else `npm install`; skipped without dependencies).' }),
    build_command: z.string().nullable().optional().openapi({ description: 'Source builds: build command (default: `npm run build` when package.json has a build script).' }),
  })
  .openapi('SourceConfig');

export const SourceRevisionConfigRequest = z
  .looseObject({
    repo_ref: z.string().nullable().optional().openapi({ description: '`vcshost`: branch, tag or commit. `internal_template`: the template name (default `deep-agent`).' }),
    agentgraph_config_path: z.string().nullable().optional().openapi({ description: 'Path of the LangGraph application config in the source (default `langgraph.json`).' }),
    image_uri: z.string().nullable().optional().openapi({ description: 'Docker sources: the image.' }),
    source_tarball_path: z.string().nullable().optional().openapi({ description: '`internal_source`: the `source_tarball_path` handed out by `POST /v2/deployments/uploads`.' }),
  })
  .openapi('SourceRevisionConfigRequest', { description: '`repo_commit_sha` is read-only and rejected here.' });

const SourceRevisionConfigSchema = z
  .object({
    repo_ref: z.string().nullable(),
    agentgraph_config_path: z.string().nullable(),
    image_uri: z.string().nullable(),
    source_tarball_path: z.string().nullable(),
    repo_commit_sha: z.string().nullable().openapi({ description: 'The commit the revision was built from (filled by the build).' }),
  })
  .openapi('SourceRevisionConfig');

const SecretSchema = z.object({ name: z.string(), value: z.string() }).openapi('DeploymentSecret');
const SecretReferenceSchema = z
  .object({ name: z.string(), secret_name: z.string(), secret_key: z.string() })
  .openapi('SecretReference', { description: 'Environment variable `name` from key `secret_key` of the Kubernetes Secret `secret_name` (not one Hangar manages for another deployment: `<name>-secrets`, `<name>-postgres`).' });

/** Body of POST /v2/deployments. */
export const CreateDeploymentRequest = z
  .object({
    name: z.string().openapi({ description: 'Lowercase letters, digits and hyphens, starting with a letter, at most 63 characters; unique in the workspace; immutable.' }),
    source: SourceSchema,
    source_config: SourceConfigSchema,
    source_revision_config: SourceRevisionConfigRequest,
    secrets: z.array(SecretSchema).openapi({ description: 'Environment variables of the application; stored encrypted. Names are environment variable names; reserved names are rejected.' }),
    secret_references: z.array(SecretReferenceSchema).nullable().optional().openapi({ description: 'Only for `external_docker`.' }),
    deployment_type: z.enum(DEPLOYMENT_TYPES).optional().openapi({ description: 'Hangar addition: the tier the list filter `deployment_type` matches (default `dev`).' }),
  })
  .openapi('CreateDeploymentRequest');

/** Body of PATCH /v2/deployments/{id}: `name` and `source` are present only to be refused clearly. */
export const UpdateDeploymentRequest = z
  .object({
    name: z.unknown().optional().openapi({ description: 'Immutable: any value is refused (422).' }),
    source: z.unknown().optional().openapi({ description: 'Immutable: any value is refused (422).' }),
    source_config: SourceConfigSchema.optional().openapi({ description: 'Fields given replace the stored ones; a change of `resource_spec` makes a new revision.' }),
    source_revision_config: SourceRevisionConfigRequest.optional().openapi({ description: 'Fields given replace the latest revision’s; makes a new revision.' }),
    secrets: z.array(SecretSchema).optional().openapi({ description: `Replaces all secrets and makes a new revision. A value of \`${SECRET_MASK}\` keeps the stored value of that name; for a name with no stored value it is a 422.` }),
    secret_references: z.array(SecretReferenceSchema).nullable().optional(),
  })
  .openapi('UpdateDeploymentRequest');

export const DeploymentSchema = z
  .object({
    id: z.uuid(),
    tenant_id: z.uuid().openapi({ description: 'The workspace that owns the deployment.' }),
    name: z.string(),
    source: SourceSchema,
    source_config: SourceConfigSchema,
    source_revision_config: SourceRevisionConfigSchema,
    secrets: z.array(SecretSchema).openapi({ description: `Names as given; every value is shown as \`${SECRET_MASK}\` (values are stored encrypted and never returned).` }),
    secret_references: z.array(SecretReferenceSchema).nullable(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
    status: z.enum(DEPLOYMENT_STATUSES).openapi({ description: describeStatuses(DEPLOYMENT_STATUS_MEANING) }),
    latest_revision_id: z.uuid().nullable(),
    active_revision_id: z.uuid().nullable().openapi({ description: 'Moves to a new revision only once that revision is healthy.' }),
    image_version: z.string().nullable().openapi({ description: 'Version of what runs the active revision (local driver: the LangGraph API server version; Kubernetes: the image tag).' }),
    deployment_type: z.enum(DEPLOYMENT_TYPES),
    remote_reconciled: z.boolean().openapi({ description: 'The latest revision is the active one and serves.' }),
    policy_issues: z
      .array(
        z
          .object({
            field: z.string().openapi({ description: 'The field, as a path: `source_config.listener_config.k8s_namespace`, `source_config.resource_spec.volumes.0.hostPath`…' }),
            message: z.string(),
          })
          .openapi('DeploymentPolicyIssue'),
      )
      .openapi({
        description:
          'What of the deployment this server’s Kubernetes policy (HANGAR_DEPLOY_K8S_NAMESPACES, HANGAR_DEPLOY_K8S_POD_POLICY) forbids now: its namespace and the pod of ' +
          'the revision that serves it (the latest one until one serves). Non-empty only for a kubernetes-driven deployment made or last changed before the policy was set: ' +
          'it keeps running as it is, but a change or a redeploy must satisfy the policy. Always empty for other drivers.',
      }),
  })
  .openapi('Deployment');

export const DeploymentListSchema = z
  .object({
    resources: z.array(DeploymentSchema),
    offset: z.number().int().openapi({ description: 'Offset of the next page; a page shorter than `limit` is the last.' }),
  })
  .openapi('DeploymentList');

const bool = z.enum(['true', 'false']).transform((v) => v === 'true');
const commaUuids = (name: string) =>
  z
    .string()
    .transform((v, ctx) => {
      const ids = v.split(',').map((s) => s.trim()).filter(Boolean);
      for (const id of ids) if (!z.uuid().safeParse(id).success) ctx.addIssue({ code: 'custom', message: `"${id}" is not a UUID` });
      return ids;
    })
    .optional()
    .openapi({ param: { name, in: 'query' }, description: 'Comma-separated UUIDs.', type: 'string' });

export const ListDeploymentsQuery = z.object({
  limit: z.coerce.number().int('must be an integer').min(1).max(100).default(20).openapi({ param: { name: 'limit', in: 'query' }, description: '1..100, default 20.' }),
  offset: z.coerce.number().int('must be an integer').min(0).default(0).openapi({ param: { name: 'offset', in: 'query' }, description: '≥ 0, default 0.' }),
  name_contains: z.string().optional().openapi({ param: { name: 'name_contains', in: 'query' }, description: 'Case-insensitive substring of the name.' }),
  status: z.enum(DEPLOYMENT_STATUSES).optional().openapi({ param: { name: 'status', in: 'query' } }),
  remote_reconciled: bool.optional().openapi({ param: { name: 'remote_reconciled', in: 'query' }, type: 'boolean' }),
  tag_value_ids: commaUuids('tag_value_ids'),
  image_version: z.string().optional().openapi({ param: { name: 'image_version', in: 'query' } }),
  deployment_type: z.enum(DEPLOYMENT_TYPES).optional().openapi({ param: { name: 'deployment_type', in: 'query' } }),
  deployment_ids: commaUuids('deployment_ids'),
});

export const RevisionSchema = z
  .object({
    id: z.uuid(),
    deployment_id: z.uuid(),
    number: z.number().int().openapi({ description: 'Hangar addition: the revision\'s number within its deployment (1, 2, …), as the logs count them.' }),
    status: z.enum(REVISION_STATUSES).openapi({ description: describeStatuses(REVISION_STATUS_MEANING) }),
    source_revision_config: SourceRevisionConfigSchema,
    resource_spec: ResourceSpecSchema.nullable(),
    image_version: z.string().nullable(),
    status_message: z.string().nullable().openapi({ description: 'Why it failed, was skipped, was interrupted or no longer serves (replaced by revision N).' }),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('DeploymentRevision');

export const RevisionListSchema = z.object({ resources: z.array(RevisionSchema), offset: z.number().int() }).openapi('DeploymentRevisionList');

export const PageQuery = z.object({
  limit: ListDeploymentsQuery.shape.limit,
  offset: ListDeploymentsQuery.shape.offset,
});

export const LogsSchema = z
  .object({ revision_id: z.uuid(), kind: z.enum(['build', 'deploy']), status: z.enum(REVISION_STATUSES), logs: z.string() })
  .openapi('DeploymentLogs');

export const UploadSchema = z
  .object({
    source_tarball_path: z.string().openapi({ description: 'Pass as `source_revision_config.source_tarball_path`.' }),
    upload_url: z.string().openapi({ description: 'PUT the gzipped tarball here (same API key), body `application/gzip`.' }),
  })
  .openapi('DeploymentUpload');

const iso = (d: Date) => d.toISOString();

/** Wire form of a deployment; secret values are masked. */
export function presentDeployment(d: Deployment): z.infer<typeof DeploymentSchema> {
  const src = d.sourceRevisionConfig;
  return {
    id: d.id,
    tenant_id: d.workspaceId,
    name: d.name,
    source: d.source,
    source_config: d.sourceConfig as z.infer<typeof SourceConfigSchema>,
    source_revision_config: {
      repo_ref: src.repo_ref ?? null,
      agentgraph_config_path: src.agentgraph_config_path ?? null,
      image_uri: src.image_uri ?? null,
      source_tarball_path: src.source_tarball_path ?? null,
      repo_commit_sha: src.repo_commit_sha ?? null,
    },
    secrets: d.secrets.map((s) => ({ name: s.name, value: SECRET_MASK })),
    secret_references: d.secretReferences,
    created_at: iso(d.createdAt),
    updated_at: iso(d.updatedAt),
    status: d.status,
    latest_revision_id: d.latestRevisionId,
    active_revision_id: d.activeRevisionId,
    image_version: d.imageVersion,
    deployment_type: d.deploymentType,
    remote_reconciled: d.remoteReconciled,
    policy_issues: d.policyIssues,
  };
}

/** Wire form of a revision. */
export function presentRevision(r: Revision): z.infer<typeof RevisionSchema> {
  const src = r.sourceRevisionConfig;
  return {
    id: r.id,
    deployment_id: r.deploymentId,
    number: r.seq,
    status: r.status,
    source_revision_config: {
      repo_ref: src.repo_ref ?? null,
      agentgraph_config_path: src.agentgraph_config_path ?? null,
      image_uri: src.image_uri ?? null,
      source_tarball_path: src.source_tarball_path ?? null,
      repo_commit_sha: src.repo_commit_sha ?? null,
    },
    resource_spec: r.resourceSpec as z.infer<typeof ResourceSpecSchema> | null,
    image_version: r.imageVersion,
    status_message: r.failureReason,
    created_at: iso(r.createdAt),
    updated_at: iso(r.updatedAt),
  };
}
