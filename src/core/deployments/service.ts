// The deployment control plane: create, read, change and delete deployments; every change of the
// desired state that needs one (source_revision_config, secrets, resource_spec) makes a revision,
// which the reconciler (src/deploy/reconciler.ts) then drives.
import { fileURLToPath } from 'node:url';
import type { EgressGuard } from '../../net/egress.js';
import { laptopEgress } from '../egress.js';
import { type LocalRepoPolicy, localRepoProblem, NO_LOCAL_REPOS } from '../local-repos.js';
import { sql, type Transaction } from 'kysely';
import type { Db } from '../../db/index.js';
import type { Database } from '../../db/schema.js';
import { isUniqueViolation } from '../../db/errors.js';
import type { Logger } from '../../logging.js';
import { type Caller, requireWrite } from '../caller.js';
import { HangarError, invalid, type FieldIssue } from '../errors.js';
import type { Cipher } from '../secrets/cipher.js';
import type { CodeHosts, DriverRouting, Nudge, TracingProjects } from './ports.js';
import { selectDeployments, toDeployment, toRevision } from './rows.js';
import { mergeSecrets } from './secrets.js';
import { SKIPPABLE_REVISION_STATUSES, type DeploymentStatus } from './status.js';
import type { Deployment, DeploymentSecret, DeploymentType, Revision, SecretReference, Source, SourceConfig, SourceRevisionConfig } from './types.js';
import { checkDeployment, DEPLOYMENT_NAME } from './validate.js';
import { checkK8sPolicy, type K8sPolicy, OPEN_K8S_POLICY, objectsNamed } from './k8s-policy.js';

/** Body of a create, as parsed by the HTTP layer. */
export interface CreateDeploymentInput {
  name: string;
  source: Source;
  source_config: SourceConfig;
  source_revision_config: SourceRevisionConfig & Record<string, unknown>;
  secrets: DeploymentSecret[];
  secret_references?: SecretReference[] | null | undefined;
  deployment_type?: DeploymentType | undefined;
}

/** Body of a PATCH. */
export interface UpdateDeploymentInput {
  name?: unknown;
  source?: unknown;
  source_config?: SourceConfig | undefined;
  source_revision_config?: (SourceRevisionConfig & Record<string, unknown>) | undefined;
  secrets?: DeploymentSecret[] | undefined;
  secret_references?: SecretReference[] | null | undefined;
}

/** Filters and page of the list. */
export interface ListDeploymentsInput {
  limit: number;
  offset: number;
  name_contains?: string | undefined;
  status?: DeploymentStatus | undefined;
  remote_reconciled?: boolean | undefined;
  tag_value_ids?: string[] | undefined;
  image_version?: string | undefined;
  deployment_type?: DeploymentType | undefined;
  deployment_ids?: string[] | undefined;
}

/** A page of a list and the offset of the next page. */
export interface Page<T> {
  resources: T[];
  offset: number;
}

/** What the deployment service is built from. */
export interface DeploymentServiceDeps {
  db: Db;
  cipher: Cipher;
  logger: Logger;
  routing: DriverRouting;
  codeHosts?: CodeHosts | undefined;
  tracing?: TracingProjects | undefined;
  nudge?: Nudge | undefined;
  /** Outbound policy for repository URLs, and which host directories may be cloned (file://). */
  egress?: EgressGuard | undefined;
  localRepos?: LocalRepoPolicy | undefined;
  /** The operator's bounds on kubernetes-driven deployments (namespaces, pod); open by default. */
  k8sPolicy?: K8sPolicy | undefined;
  /** The templates `internal_template` can name on this install; unchecked when absent. */
  templates?: (() => Promise<string[]>) | undefined;
}

const FROM_SOURCE: readonly Source[] = ['vcshost', 'internal_source', 'internal_template'];

/** The /v2/deployments control plane. */
export class DeploymentService {
  constructor(private readonly deps: DeploymentServiceDeps) {}

  /** Reconciler wake-up, set by the composition root once the reconciler exists. */
  set nudge(fn: Nudge) {
    this.deps.nudge = fn;
  }

  /** Wake the reconciler now (another thread of the process changed something). */
  wakeReconciler(): void {
    this.deps.nudge?.();
  }

  async create(caller: Caller, input: CreateDeploymentInput): Promise<Deployment> {
    requireWrite(caller);
    const revConfig = withDefaults(input.source, input.source_revision_config);
    const issues: FieldIssue[] = [];
    if (!DEPLOYMENT_NAME.test(input.name)) {
      issues.push({ loc: ['body', 'name'], msg: 'must be 1-63 lowercase letters, digits or hyphens, start with a letter and not end with a hyphen', type: 'value_error' });
    }
    const driver = this.deps.routing.driverFor(input.source);
    if (!driver) issues.push({ loc: ['body', 'source'], msg: `no configured driver serves source "${input.source}" on this server (see HANGAR_DEPLOY_DRIVERS)`, type: 'value_error' });
    issues.push(...checkDeployment({ source: input.source, sourceConfig: input.source_config, sourceRevisionConfig: input.source_revision_config, secrets: input.secrets, secretReferences: input.secret_references }));
    if (driver === 'kubernetes') issues.push(...checkK8sPolicy(this.deps.k8sPolicy ?? OPEN_K8S_POLICY, input.source_config));
    if (issues.length === 0) issues.push(...(await this.checkReferences(caller.workspaceId, input.source, input.source_config, revConfig)));
    if (issues.length > 0) throw invalid(issues);

    let id: string;
    try {
      id = await this.deps.db.transaction().execute(async (trx) => {
        if (driver === 'kubernetes') await kubernetesNameFree(trx, caller.workspaceId, input.name, namespaceOf(input.source_config));
        if (driver === 'kubernetes') await noOtherDeploymentsSecrets(trx, undefined, input.source_config, input.secret_references);
        const d = await trx
          .insertInto('deployments')
          .values({
            workspace_id: caller.workspaceId,
            name: input.name,
            source: input.source,
            driver: driver!,
            source_config: JSON.stringify(cleanSourceConfig(input.source_config)),
            secret_references: input.secret_references ? JSON.stringify(input.secret_references) : null,
            deployment_type: input.deployment_type ?? 'dev',
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        await this.addRevision(trx, { deploymentId: d.id, workspaceId: caller.workspaceId, config: revConfig, secrets: input.secrets, resourceSpec: input.source_config.resource_spec ?? null });
        return d.id;
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw new HangarError('deployment_name_taken', `a deployment named "${input.name}" already exists in this workspace`);
      throw error;
    }
    await this.ensureTracingProject(caller.workspaceId, input.name);
    this.deps.nudge?.();
    return this.get(caller, id);
  }

  async list(caller: Caller, q: ListDeploymentsInput): Promise<Page<Deployment>> {
    let query = selectDeployments(this.deps.db).where('d.workspace_id', '=', caller.workspaceId);
    if (q.name_contains) query = query.where('d.name', 'ilike', `%${q.name_contains.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
    if (q.status) query = query.where('d.status', '=', q.status);
    if (q.remote_reconciled !== undefined) query = query.where('d.remote_reconciled', '=', q.remote_reconciled);
    if (q.image_version) query = query.where('d.image_version', '=', q.image_version);
    if (q.deployment_type) query = query.where('d.deployment_type', '=', q.deployment_type);
    if (q.deployment_ids) query = q.deployment_ids.length === 0 ? query.where(sql<boolean>`false`) : query.where('d.id', 'in', q.deployment_ids);
    if (q.tag_value_ids) query = query.where(sql<boolean>`d.tag_value_ids && ${sql.val(q.tag_value_ids)}::uuid[]`);
    const rows = await query.orderBy('d.created_at', 'desc').orderBy('d.id', 'desc').limit(q.limit).offset(q.offset).execute();
    return { resources: rows.map((r) => toDeployment(r, this.deps.cipher, this.deps.k8sPolicy)), offset: q.offset + rows.length };
  }

  async get(caller: Caller, id: string): Promise<Deployment> {
    const row = await selectDeployments(this.deps.db).where('d.workspace_id', '=', caller.workspaceId).where('d.id', '=', id).executeTakeFirst();
    if (!row) throw notFound(id);
    return toDeployment(row, this.deps.cipher, this.deps.k8sPolicy);
  }

  /** Change a deployment; returns it with its (possibly new) latest revision. */
  async update(caller: Caller, id: string, input: UpdateDeploymentInput): Promise<Deployment> {
    requireWrite(caller);
    const immutable: FieldIssue[] = [];
    if (input.name !== undefined) immutable.push({ loc: ['body', 'name'], msg: 'is immutable: a deployment keeps the name it was created with', type: 'immutable' });
    if (input.source !== undefined) immutable.push({ loc: ['body', 'source'], msg: 'is immutable: create a new deployment for another source', type: 'immutable' });
    if (immutable.length > 0) throw invalid(immutable);
    const current = await this.get(caller, id);
    if (current.status === 'AWAITING_DELETE') throw beingDeleted(id);

    const sourceConfig = { ...current.sourceConfig, ...stripUndefined(input.source_config ?? {}) };
    const { repo_commit_sha: _sha, ...currentRev } = current.sourceRevisionConfig;
    const revConfig = { ...currentRev, ...stripUndefined(input.source_revision_config ?? {}) };
    const secrets = input.secrets ? mergeSecrets(input.secrets, current.secrets) : current.secrets;
    const secretReferences = input.secret_references !== undefined ? input.secret_references : current.secretReferences;
    const issues = checkDeployment({ source: current.source, sourceConfig, sourceRevisionConfig: revConfig, secrets, secretReferences });
    if (current.driver === 'kubernetes') issues.push(...checkK8sPolicy(this.deps.k8sPolicy ?? OPEN_K8S_POLICY, sourceConfig));
    if (current.driver === 'kubernetes' && current.activeRevisionId && namespaceOf(sourceConfig) !== namespaceOf(current.sourceConfig)) {
      // Its database (threads, runs, memory) is a volume in the namespace it serves from: moving
      // would start an empty one elsewhere and leave this one, and the running objects, behind.
      issues.push({
        loc: ['body', 'source_config', 'listener_config', 'k8s_namespace'],
        msg: `cannot change once the deployment has served: its database and objects are in namespace "${namespaceOf(current.sourceConfig)}"; create a new deployment in "${namespaceOf(sourceConfig)}" instead`,
        type: 'immutable',
      });
    }
    if (issues.length === 0 && (input.source_revision_config || input.source_config)) {
      issues.push(...(await this.checkReferences(caller.workspaceId, current.source, sourceConfig, revConfig)));
    }
    if (issues.length > 0) throw invalid(issues);

    const specChanged = JSON.stringify(sourceConfig.resource_spec ?? null) !== JSON.stringify(current.sourceConfig.resource_spec ?? null);
    const newRevision = input.source_revision_config !== undefined || input.secrets !== undefined || specChanged;
    await this.deps.db.transaction().execute(async (trx) => {
      if (current.driver === 'kubernetes' && namespaceOf(sourceConfig) !== namespaceOf(current.sourceConfig)) {
        await kubernetesNameFree(trx, caller.workspaceId, current.name, namespaceOf(sourceConfig), id);
      }
      if (current.driver === 'kubernetes') await noOtherDeploymentsSecrets(trx, id, sourceConfig, secretReferences);
      const locked = await trx
        .updateTable('deployments')
        .set({
          source_config: JSON.stringify(cleanSourceConfig(sourceConfig)),
          secret_references: secretReferences ? JSON.stringify(secretReferences) : null,
          updated_at: new Date(),
        })
        .where('id', '=', id)
        .where('workspace_id', '=', caller.workspaceId)
        .where('status', '<>', 'AWAITING_DELETE')
        .returning('id')
        .executeTakeFirst();
      if (!locked) throw beingDeleted(id);
      if (current.driver === 'kubernetes' && namespaceOf(sourceConfig) !== namespaceOf(current.sourceConfig)) {
        // Before it has served, a move is allowed only while nothing of it can be in the old
        // namespace: a revision that went on to deploy (even one that failed) may have applied the
        // database, its volume and objects there, which would stay behind (the teardown removes
        // what is in the namespace of the day); one on its way would still go there. Looked at with
        // the deployment's row locked: a revision is added only under that lock.
        const started = await trx
          .selectFrom('deployment_revisions')
          .select(['seq', 'status'])
          .where('deployment_id', '=', id)
          .where('status', 'not in', NEVER_DEPLOYED_STATUSES)
          .orderBy('seq')
          .executeTakeFirst();
        if (started) {
          throw invalid([
            {
              loc: ['body', 'source_config', 'listener_config', 'k8s_namespace'],
              msg: `cannot change once a revision has gone on to deploy (revision ${started.seq}, ${started.status}): what it applies in namespace "${namespaceOf(current.sourceConfig)}" (the database, its volume, the objects) would stay behind; delete the deployment, which removes them, and create it in "${namespaceOf(sourceConfig)}" instead`,
              type: 'immutable',
            },
          ]);
        }
      }
      if (newRevision) {
        await this.addRevision(trx, { deploymentId: id, workspaceId: caller.workspaceId, config: revConfig, secrets, resourceSpec: sourceConfig.resource_spec ?? null });
      }
    });
    if (newRevision) this.deps.nudge?.();
    return this.get(caller, id);
  }

  /** Ask for deletion: the deployment shows AWAITING_DELETE until the driver has torn it down, then is gone. */
  async delete(caller: Caller, id: string): Promise<void> {
    requireWrite(caller);
    const row = await this.deps.db
      .updateTable('deployments')
      .set({ status: 'AWAITING_DELETE', remote_reconciled: false, updated_at: new Date() })
      .where('id', '=', id)
      .where('workspace_id', '=', caller.workspaceId)
      .returning('id')
      .executeTakeFirst();
    if (!row) throw notFound(id);
    this.deps.nudge?.();
  }

  /** Where the active revision of a locally hosted deployment answers (for the stable proxy URL). */
  async appUrl(caller: Caller, id: string): Promise<string> {
    await this.get(caller, id);
    // One statement, so it sees the active revision and its address from the same moment: read
    // apart, a rollout committing in between pairs the old revision with its cleared address.
    const row = await this.deps.db
      .selectFrom('deployments as d')
      .innerJoin('deployment_revisions as r', 'r.id', 'd.active_revision_id')
      .select('r.runtime_url')
      .where('d.id', '=', id)
      .executeTakeFirst();
    if (!row?.runtime_url) throw new HangarError('deployment_not_serving', `deployment ${id} has no running revision on this host`);
    return row.runtime_url;
  }

  async listRevisions(caller: Caller, id: string, page: { limit: number; offset: number }): Promise<Page<Revision>> {
    await this.get(caller, id);
    const rows = await this.deps.db
      .selectFrom('deployment_revisions')
      .selectAll()
      .where('deployment_id', '=', id)
      .orderBy('seq', 'desc')
      .limit(page.limit)
      .offset(page.offset)
      .execute();
    return { resources: rows.map(toRevision), offset: page.offset + rows.length };
  }

  async getRevision(caller: Caller, id: string, revisionId: string): Promise<Revision> {
    return toRevision(await this.revisionRow(caller, id, revisionId));
  }

  /** The build or deploy log of a revision. */
  async logs(caller: Caller, id: string, revisionId: string, kind: 'build' | 'deploy'): Promise<{ revision: Revision; logs: string }> {
    const row = await this.revisionRow(caller, id, revisionId);
    return { revision: toRevision(row), logs: kind === 'build' ? row.build_log : row.deploy_log };
  }

  /** Deploy a revision's configuration again, as a new revision (the original stays as it was). */
  async redeploy(caller: Caller, id: string, revisionId: string): Promise<Revision> {
    requireWrite(caller);
    const row = await this.revisionRow(caller, id, revisionId);
    const current = await this.get(caller, id);
    if (current.status === 'AWAITING_DELETE') throw beingDeleted(id);
    const config = { ...(row.source_revision_config as SourceRevisionConfig) };
    const resourceSpec = (row.resource_spec as SourceConfig['resource_spec']) ?? null;
    // The revision's pod goes through today's bounds, as a PATCH to it would: a rollback must not
    // bring back what the operator has since forbidden, nor another deployment's Secrets.
    const sourceConfig = { ...current.sourceConfig, resource_spec: resourceSpec };
    if (current.driver === 'kubernetes') {
      const issues = checkK8sPolicy(this.deps.k8sPolicy ?? OPEN_K8S_POLICY, sourceConfig);
      if (issues.length > 0) throw invalid(issues.map((i) => ({ ...i, msg: `revision ${row.seq}: ${i.msg}` })));
    }
    const newId = await this.deps.db.transaction().execute(async (trx) => {
      if (current.driver === 'kubernetes') await noOtherDeploymentsSecrets(trx, id, sourceConfig, current.secretReferences);
      // The deployment takes the revision's resource_spec too, as it takes its code (its
      // source_revision_config is its latest revision's): a later PATCH builds on what was rolled
      // back to, and does not bring back the resources the rollback undid.
      const { resource_spec: _spec, ...rest } = current.sourceConfig;
      await trx
        .updateTable('deployments')
        .set({ source_config: JSON.stringify(cleanSourceConfig(resourceSpec ? { ...rest, resource_spec: resourceSpec } : rest)) })
        .where('id', '=', id)
        .execute();
      return this.addRevision(trx, {
        deploymentId: id,
        workspaceId: caller.workspaceId,
        config,
        // The deployment's secrets as they are now (its latest revision's), not the old revision's:
        // a rollback brings back code and resources, never a value rotated out since.
        secrets: current.secrets,
        resourceSpec,
      });
    });
    this.deps.nudge?.();
    return this.getRevision(caller, id, newId);
  }

  private async revisionRow(caller: Caller, id: string, revisionId: string) {
    const row = await this.deps.db
      .selectFrom('deployment_revisions')
      .selectAll()
      .where('workspace_id', '=', caller.workspaceId)
      .where('deployment_id', '=', id)
      .where('id', '=', revisionId)
      .executeTakeFirst();
    if (!row) {
      await this.get(caller, id);
      throw new HangarError('deployment_revision_not_found', `no revision ${revisionId} of deployment ${id}`);
    }
    return row;
  }

  /**
   * Add a revision as the latest: older revisions that have not started deploying are SKIPPED
   * (the deployment row is locked, so two concurrent changes get consecutive numbers).
   */
  private async addRevision(
    trx: Transaction<Database>,
    r: { deploymentId: string; workspaceId: string; config: SourceRevisionConfig; secrets: DeploymentSecret[]; resourceSpec: SourceConfig['resource_spec'] },
  ): Promise<string> {
    const d = await trx
      .updateTable('deployments')
      .set((eb) => ({ revision_count: eb('revision_count', '+', 1), updated_at: new Date() }))
      .where('id', '=', r.deploymentId)
      .returning('revision_count')
      .executeTakeFirstOrThrow();
    await trx
      .updateTable('deployment_revisions')
      .set({ status: 'SKIPPED', failure_reason: `superseded by revision ${d.revision_count} before it started deploying`, updated_at: new Date() })
      .where('deployment_id', '=', r.deploymentId)
      .where('status', 'in', SKIPPABLE_REVISION_STATUSES)
      .execute();
    // The upload the revision is made from, locked until the revision is committed: the upload
    // sweeper skips it meanwhile (and it may have swept it since the request was checked).
    const upload = r.config.source_tarball_path ? uploadIdOf(r.config.source_tarball_path) : undefined;
    if (upload) {
      const held = await trx.selectFrom('deployment_uploads').select('id').where('workspace_id', '=', r.workspaceId).where('id', '=', upload).where('uploaded_at', 'is not', null).forKeyShare().executeTakeFirst();
      if (!held) throw invalid([{ loc: ['body', 'source_revision_config', 'source_tarball_path'], msg: 'names no completed upload of this workspace (POST /v2/deployments/uploads, then PUT the tarball)', type: 'value_error' }]);
    }
    // Only the four request fields are stored; repo_commit_sha is filled by the build.
    const config = { repo_ref: r.config.repo_ref ?? null, agentgraph_config_path: r.config.agentgraph_config_path ?? null, image_uri: r.config.image_uri ?? null, source_tarball_path: r.config.source_tarball_path ?? null };
    const rev = await trx
      .insertInto('deployment_revisions')
      .values({
        deployment_id: r.deploymentId,
        workspace_id: r.workspaceId,
        seq: d.revision_count,
        source_revision_config: JSON.stringify(config),
        resource_spec: r.resourceSpec ? JSON.stringify(r.resourceSpec) : null,
        secrets_encrypted: this.deps.cipher.encryptJson(r.secrets.map((s) => ({ name: s.name, value: s.value }))),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await trx.updateTable('deployments').set({ latest_revision_id: rev.id, remote_reconciled: false }).where('id', '=', r.deploymentId).execute();
    return rev.id;
  }

  /** References to other resources: the upload of `internal_source`, the integration of `vcshost`. */
  private async checkReferences(workspaceId: string, source: Source, sc: SourceConfig, rc: SourceRevisionConfig): Promise<FieldIssue[]> {
    if (source === 'internal_template' && rc.repo_ref && this.deps.templates) {
      // Known here: an unknown name would only fail the build later.
      const names = await this.deps.templates();
      if (!names.includes(rc.repo_ref)) {
        return [{ loc: ['body', 'source_revision_config', 'repo_ref'], msg: `names no template on this server (templates: ${names.join(', ') || 'none'})`, type: 'value_error' }];
      }
    }
    if (source === 'internal_source' && rc.source_tarball_path) {
      const upload = uploadIdOf(rc.source_tarball_path);
      const row = upload
        ? await this.deps.db.selectFrom('deployment_uploads').select('uploaded_at').where('workspace_id', '=', workspaceId).where('id', '=', upload).executeTakeFirst()
        : undefined;
      if (!row?.uploaded_at) {
        return [{ loc: ['body', 'source_revision_config', 'source_tarball_path'], msg: 'names no completed upload of this workspace (POST /v2/deployments/uploads, then PUT the tarball)', type: 'value_error' }];
      }
    }
    if (source === 'vcshost' && !sc.integration_id && sc.repo_url) {
      const problem = this.repoUrlProblem(sc.repo_url);
      if (problem) return [{ loc: ['body', 'source_config', 'repo_url'], msg: problem, type: 'url_refused' }];
    }
    if (source === 'vcshost' && sc.integration_id) {
      if (!this.deps.codeHosts) {
        return [{ loc: ['body', 'source_config', 'integration_id'], msg: 'code-host integrations are not available on this server', type: 'value_error' }];
      }
      try {
        await this.deps.codeHosts.resolve({ workspaceId, integrationId: sc.integration_id, repoUrl: sc.repo_url ?? '' });
      } catch (error) {
        const msg = error instanceof HangarError ? error.message : 'the integration could not be resolved';
        return [{ loc: ['body', 'source_config', 'integration_id'], msg, type: 'value_error' }];
      }
    }
    return [];
  }

  /** A repository URL without an integration: http(s) through the outbound policy, file:// through the local-repository rules. */
  private repoUrlProblem(url: string): string | undefined {
    if (url.startsWith('file:')) {
      let dir: string;
      try {
        dir = fileURLToPath(url);
      } catch {
        return 'must be a file:// URL of a directory on this server';
      }
      return localRepoProblem(this.deps.localRepos ?? NO_LOCAL_REPOS, dir);
    }
    if (/^https?:\/\//.test(url)) return (this.deps.egress ?? laptopEgress()).urlProblem(url);
    // ssh and git:// connect outside the outbound policy (their own DNS and transports).
    return 'only http:// and https:// repositories are fetched (file:// only where local repositories are enabled)';
  }

  private async ensureTracingProject(workspaceId: string, name: string): Promise<void> {
    if (!this.deps.tracing) return;
    try {
      await this.deps.tracing.ensureProject(workspaceId, name);
    } catch (error) {
      this.deps.logger.warn({ err: error, deployment: name }, 'could not create the tracing project of a deployment');
    }
  }
}

/** `source_tarball_path` values handed out by the upload endpoint: `uploads/<uuid>.tar.gz`. */
export function uploadIdOf(path: string): string | undefined {
  return /^uploads\/([0-9a-f-]{36})\.tar\.gz$/.exec(path)?.[1];
}

function withDefaults(source: Source, rc: SourceRevisionConfig & Record<string, unknown>): SourceRevisionConfig {
  const out: SourceRevisionConfig = {
    repo_ref: rc.repo_ref ?? null,
    agentgraph_config_path: rc.agentgraph_config_path ?? null,
    image_uri: rc.image_uri ?? null,
    source_tarball_path: rc.source_tarball_path ?? null,
  };
  if (FROM_SOURCE.includes(source)) out.agentgraph_config_path ??= 'langgraph.json';
  if (source === 'internal_template') out.repo_ref ??= 'deep-agent';
  return out;
}

function cleanSourceConfig(sc: SourceConfig): SourceConfig {
  return stripUndefined(sc);
}

function stripUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

function notFound(id: string): HangarError {
  return new HangarError('deployment_not_found', `no deployment with id ${id} in this workspace`);
}

function beingDeleted(id: string): HangarError {
  return new HangarError('deployment_being_deleted', `deployment ${id} is being deleted`);
}

/** The namespace the kubernetes driver applies a deployment's objects in. */
function namespaceOf(sourceConfig: SourceConfig): string {
  return sourceConfig.listener_config?.k8s_namespace ?? 'default';
}

/**
 * A deployment's pods must not read what Hangar manages for another deployment (of any workspace) in
 * the same namespace: its Secrets `<name>-secrets` (the other's `secrets`) and `<name>-postgres` (its
 * database password), and its database's volume claim `data-<name>-postgres-0`. Refused with 422
 * naming each field that names one.
 */
async function noOtherDeploymentsSecrets(
  trx: Transaction<Database>,
  ownId: string | undefined,
  sourceConfig: SourceConfig,
  refs: SecretReference[] | null | undefined,
): Promise<void> {
  const named = objectsNamed(sourceConfig, refs)
    .map((s) => ({ ...s, owner: (s.kind === 'Secret' ? /^(.+)-(secrets|postgres)$/ : /^data-(.+)-postgres-0$/).exec(s.name)?.[1] }))
    .filter((s): s is typeof s & { owner: string } => s.owner !== undefined && DEPLOYMENT_NAME.test(s.owner));
  if (named.length === 0) return;
  // Ordered with creates of deployments (kubernetesNameFree), which check the converse.
  await sql`SELECT pg_advisory_xact_lock(hashtext('hangar.deployments.kubernetes-names'))`.execute(trx);
  let q = trx
    .selectFrom('deployments')
    .select('name')
    .where('driver', '=', 'kubernetes')
    .where('name', 'in', [...new Set(named.map((s) => s.owner))])
    .where(sql<string>`coalesce(source_config->'listener_config'->>'k8s_namespace', 'default')`, '=', namespaceOf(sourceConfig));
  if (ownId) q = q.where('id', '<>', ownId);
  const others = new Set((await q.execute()).map((r) => r.name));
  const issues: FieldIssue[] = named
    .filter((s) => others.has(s.owner))
    .map((s) => ({ loc: s.loc, msg: `names the ${s.kind === 'Secret' ? 'Secret' : 'volume claim'} "${s.name}" that Hangar manages for another deployment ("${s.owner}"); a deployment may not read it`, type: 'value_error' }));
  if (issues.length > 0) throw invalid(issues);
}

/**
 * The kubernetes driver names a deployment's objects after the deployment (`<name>-api`,
 * `<name>-secrets`, `<name>-postgres`…) in its namespace, and names are unique per workspace only:
 * a second workspace's deployment of the same name in the same namespace would take over (and, on
 * delete, remove) the first one's objects, its secrets and database included. Refused, under a lock
 * that orders concurrent creates.
 */
async function kubernetesNameFree(trx: Transaction<Database>, workspaceId: string, name: string, namespace: string, ownId?: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtext('hangar.deployments.kubernetes-names'))`.execute(trx);
  const taken = await trx
    .selectFrom('deployments')
    .select('id')
    .where('driver', '=', 'kubernetes')
    .where('name', '=', name)
    .where('workspace_id', '<>', workspaceId)
    .where(sql<string>`coalesce(source_config->'listener_config'->>'k8s_namespace', 'default')`, '=', namespace)
    .executeTakeFirst();
  if (taken) {
    throw new HangarError(
      'deployment_kubernetes_name_taken',
      `the Kubernetes objects of a deployment named "${name}" in namespace "${namespace}" belong to another workspace's deployment; choose another name or namespace`,
    );
  }
  // Nor may another deployment there already name the Secrets (or the database claim) this one's
  // would be: its pods would read them. Names as objectNames() and databaseClaimName() of the kubernetes driver.
  const managed = [`${name}-secrets`, `${name}-postgres`, `data-${name}-postgres-0`];
  let readers = trx
    .selectFrom('deployments')
    .select(['id', 'source_config', 'secret_references'])
    .where('driver', '=', 'kubernetes')
    .where(sql<string>`coalesce(source_config->'listener_config'->>'k8s_namespace', 'default')`, '=', namespace)
    .where((eb) => eb.or(managed.flatMap((m) => [eb(sql<string>`source_config::text`, 'like', `%"${m}"%`), eb(sql<string>`coalesce(secret_references::text, '')`, 'like', `%"${m}"%`)])));
  if (ownId) readers = readers.where('id', '<>', ownId);
  for (const r of await readers.execute()) {
    const refs = (typeof r.secret_references === 'string' ? JSON.parse(r.secret_references) : r.secret_references) as SecretReference[] | null;
    const sc = (typeof r.source_config === 'string' ? JSON.parse(r.source_config) : r.source_config) as SourceConfig;
    const hit = objectsNamed(sc, refs).find((s) => (s.kind === 'Secret' ? managed.slice(0, 2) : managed.slice(2)).includes(s.name));
    if (hit) {
      throw new HangarError(
        'deployment_kubernetes_name_taken',
        `another deployment in namespace "${namespace}" names the ${hit.kind === 'Secret' ? 'Secret' : 'volume claim'} "${hit.name}", which a deployment named "${name}" would keep its ${hit.kind === 'Secret' ? 'secrets' : 'database'} in; choose another name or namespace`,
      );
    }
  }
}

/** Revision statuses that never reach a cluster: nothing of a revision that ended so was applied anywhere. */
const NEVER_DEPLOYED_STATUSES: ('CREATE_FAILED' | 'BUILD_FAILED' | 'SKIPPED')[] = ['CREATE_FAILED', 'BUILD_FAILED', 'SKIPPED'];
