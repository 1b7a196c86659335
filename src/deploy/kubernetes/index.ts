// The Kubernetes driver: applies the rendered objects with server-side apply through
// @kubernetes/client-node and reads the API Deployment's readiness back.
import { createHmac } from 'node:crypto';
// Types only at load: the client (and its undici) is imported when a cluster is first used, so
// servers that never deploy to Kubernetes do not load it.
import type * as k8s from '@kubernetes/client-node';
import type { Logger } from '../../logging.js';
import { DriverFailure, type BuildResult, type DeployResult, type Driver, type DriverContext, type DriverTarget } from '../driver.js';
import { objectsNamed } from '../../core/deployments/k8s-policy.js';
import { loadKubeConnection, type KubeConnection } from './kubeconfig.js';
import { databaseClaimName, objectNames, renderDatabase, renderObjects, type K8sObject } from './render.js';

/** Settings of the Kubernetes driver. */
export interface KubernetesDriverOptions {
  kubeconfig?: string | undefined;
  logger: Logger;
  /** Derives the per-deployment database password (HMAC under Hangar's secret key), so every replica renders the same one. */
  derive?: (label: string) => string;
  readyTimeoutMs?: number;
  /** HANGAR_DEPLOY_K8S_POD_POLICY: `restricted` runs the application containers non-root, without privileges. */
  podPolicy?: 'open' | 'restricted';
  /** HANGAR_DEPLOY_K8S_RUN_AS_USER: the user (and group) of the application containers under `restricted`. */
  runAsUser?: number;
}

const FIELD_MANAGER = 'hangar';

/**
 * The API server's own words for a failed request. The client's ApiException message is
 * "HTTP-Code: … Message: … Body: <json> Headers: <json>", too noisy for a revision's status_message;
 * the body is a Kubernetes Status whose `message` says what was wrong.
 */
export function apiErrorMessage(error: unknown): string {
  const e = error as { code?: unknown; body?: unknown; message?: string };
  if (typeof e?.code === 'number') {
    let body = e.body;
    if (typeof body === 'string') {
      try {
        body = JSON.parse(body);
      } catch {
        // Not a Status: keep the text.
      }
    }
    const status = body as { message?: unknown; reason?: unknown } | undefined;
    const text = typeof status?.message === 'string' ? status.message : typeof body === 'string' && body ? body : 'no message';
    return `HTTP ${e.code}${typeof status?.reason === 'string' ? ` ${status.reason}` : ''}: ${text}`;
  }
  return (e?.message ?? String(error)).split('\n')[0]!;
}

/** Deploys docker-sourced revisions to a Kubernetes cluster. */
export class KubernetesDriver implements Driver {
  readonly name = 'kubernetes' as const;
  readonly hostsProcesses = false;
  private client: k8s.KubernetesObjectApi | undefined;

  constructor(private readonly o: KubernetesDriverOptions) {}

  private async api(): Promise<k8s.KubernetesObjectApi> {
    if (this.client) return this.client;
    let conn: KubeConnection;
    try {
      conn = await loadKubeConnection(this.o.kubeconfig);
    } catch (error) {
      throw new DriverFailure((error as Error).message);
    }
    this.client = conn.lib.KubernetesObjectApi.makeApiClient(conn.kc);
    return this.client;
  }

  /** Images are built elsewhere (external_docker) or pushed by a CLI (internal_docker): nothing to build. */
  async build(ctx: DriverContext): Promise<BuildResult> {
    ctx.log('build', `[hangar] image ${ctx.revision.sourceRevisionConfig.image_uri}: nothing to build\n`);
    return {};
  }

  private dbPassword(t: DriverTarget): string {
    // Without a key (dry runs), a password that is only as secret as the deployment id.
    const derive = this.o.derive ?? ((label: string) => createHmac('sha256', t.deployment.id).update(label).digest('hex'));
    return derive(`postgres:${t.deployment.id}`).slice(0, 32);
  }

  /** The deployment's database objects (exported for tests and dry runs). */
  renderDatabase(t: DriverTarget): K8sObject[] {
    return renderDatabase(t, { dbPassword: this.dbPassword(t) });
  }

  /** The objects of a revision (exported for tests and dry runs). */
  render(t: DriverTarget): K8sObject[] {
    return renderObjects(t, { dbPassword: this.dbPassword(t), restricted: this.o.podPolicy === 'restricted' ? { runAsUser: this.o.runAsUser ?? 1000 } : undefined });
  }

  private async apply(ctx: DriverContext, objects: K8sObject[]): Promise<void> {
    const api = await this.api();
    for (const obj of objects) {
      // Stopped (the deployment deleted, the revision superseded): apply nothing more, or the
      // objects applied after the teardown would outlive the deployment.
      if (ctx.signal.aborted) throw new DriverFailure('stopped');
      ctx.log('deploy', `[hangar] apply ${obj.kind} ${obj.metadata.namespace}/${obj.metadata.name}\n`);
      try {
        await api.patch(obj as k8s.KubernetesObject, undefined, undefined, FIELD_MANAGER, true, 'application/apply-patch+yaml');
      } catch (error) {
        throw new DriverFailure(`applying ${obj.kind} ${obj.metadata.name} failed: ${apiErrorMessage(error)}`);
      }
    }
  }

  /** Apply the deployment's PostgreSQL (idempotent) and wait until its StatefulSet has a ready replica. */
  async ensureDatabase(ctx: DriverContext): Promise<void> {
    const ns = ctx.deployment.sourceConfig.listener_config?.k8s_namespace ?? 'default';
    const name = objectNames(ctx.deployment.name).db;
    await this.apply(ctx, await this.keepClaimSize(ctx, this.renderDatabase(ctx), ns, name));
    const deadline = Date.now() + (this.o.readyTimeoutMs ?? 600_000);
    while (Date.now() < deadline) {
      if (ctx.signal.aborted) throw new DriverFailure('stopped');
      let s: k8s.V1StatefulSet;
      try {
        s = (await (await this.api()).read({ apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name, namespace: ns } })) as k8s.V1StatefulSet;
      } catch (error) {
        throw new DriverFailure(`reading StatefulSet ${name} back failed: ${apiErrorMessage(error)}`);
      }
      if ((s.status?.readyReplicas ?? 0) >= 1) {
        ctx.log('deploy', `[hangar] database ${name}: ready\n`);
        return;
      }
      await new Promise((r) => setTimeout(r, 2_000));
    }
    throw new DriverFailure(`the database StatefulSet ${name} did not become ready in time`);
  }

  /**
   * A StatefulSet's claim templates cannot change once it exists (the API server refuses the apply):
   * when `db_storage_gi` changed since the database was made, the volume keeps the size it has, the
   * rest is applied, and the log says so. Every revision uses the same database and its claim.
   */
  private async keepClaimSize(ctx: DriverContext, objects: K8sObject[], ns: string, name: string): Promise<K8sObject[]> {
    type Templates = { spec?: { volumeClaimTemplates?: { spec?: { resources?: { requests?: { storage?: string } } } }[] } };
    let existing: Templates;
    try {
      existing = (await (await this.api()).read({ apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name, namespace: ns } })) as Templates;
    } catch (error) {
      if ((error as { code?: unknown }).code === 404) return objects;
      throw new DriverFailure(`reading StatefulSet ${name} failed: ${apiErrorMessage(error)}`);
    }
    const had = existing.spec?.volumeClaimTemplates?.[0]?.spec?.resources?.requests?.storage;
    return objects.map((o) => {
      if (o.kind !== 'StatefulSet' || !had) return o;
      const copy = structuredClone(o) as K8sObject & Templates;
      const request = copy.spec?.volumeClaimTemplates?.[0]?.spec?.resources?.requests;
      if (!request || request.storage === had) return o;
      ctx.log('deploy', `[hangar] db_storage_gi asks for ${request.storage}, but the database volume keeps its ${had}: a StatefulSet's claim template cannot change (resize the claim ${databaseClaimName(ctx.deployment.name)} itself, where its storage class allows)\n`);
      request.storage = had;
      return copy;
    });
  }

  /**
   * The Secrets and volume claims the revision's pods would read must not be ones Hangar manages for
   * another deployment: the API refuses naming them, but a deployment made before that check, or one
   * of another Hangar server sharing the namespace, could still. A Secret of Hangar's is labelled
   * managed-by hangar with its deployment as instance; a database claim is made by its StatefulSet,
   * which labels it with the StatefulSet's selector (instance: the deployment, component: postgres).
   */
  private async refuseForeignObjects(ctx: DriverContext): Promise<void> {
    const ns = ctx.deployment.sourceConfig.listener_config?.k8s_namespace ?? 'default';
    const named = objectsNamed({ resource_spec: ctx.revision.resourceSpec }, ctx.deployment.secretReferences);
    const seen = new Set<string>();
    for (const { kind, name } of named) {
      if (seen.has(`${kind}/${name}`)) continue;
      seen.add(`${kind}/${name}`);
      let found: k8s.KubernetesObject;
      try {
        found = await (await this.api()).read({ apiVersion: 'v1', kind, metadata: { name, namespace: ns } });
      } catch (error) {
        if ((error as { code?: unknown }).code === 404) continue;
        throw new DriverFailure(`reading ${kind} ${name} failed: ${apiErrorMessage(error)}`);
      }
      const labels = found.metadata?.labels ?? {};
      const owner = labels['app.kubernetes.io/instance'];
      const hangars =
        kind === 'Secret'
          ? labels['app.kubernetes.io/managed-by'] === 'hangar'
          : labels['app.kubernetes.io/component'] === 'postgres' && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(owner ?? '');
      if (hangars && owner !== ctx.deployment.id) {
        const what = kind === 'Secret' ? `the Secret ${ns}/${name} is one` : `the volume claim ${ns}/${name} is the database volume`;
        throw new DriverFailure(`${what} Hangar manages for another deployment (${owner ?? 'unknown'}): this deployment may not read it`);
      }
    }
  }

  async deploy(ctx: DriverContext): Promise<DeployResult> {
    await this.refuseForeignObjects(ctx);
    await this.apply(ctx, this.render(ctx));
    await this.waitReady(ctx);
    const image = ctx.revision.sourceRevisionConfig.image_uri ?? '';
    const tag = /:([^:/@]+)$/.exec(image)?.[1] ?? 'latest';
    const ns = ctx.deployment.sourceConfig.listener_config?.k8s_namespace ?? 'default';
    return { runtimeUrl: `http://${objectNames(ctx.deployment.name).service}.${ns}.svc`, imageVersion: tag };
  }

  private async waitReady(ctx: DriverContext): Promise<void> {
    const ns = ctx.deployment.sourceConfig.listener_config?.k8s_namespace ?? 'default';
    const name = objectNames(ctx.deployment.name).api;
    const deadline = Date.now() + (this.o.readyTimeoutMs ?? 600_000);
    while (Date.now() < deadline) {
      if (ctx.signal.aborted) throw new DriverFailure('stopped');
      let d: k8s.V1Deployment;
      try {
        d = (await (await this.api()).read({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace: ns } })) as k8s.V1Deployment;
      } catch (error) {
        throw new DriverFailure(`reading Deployment ${name} back failed: ${apiErrorMessage(error)}`);
      }
      const s = d.status;
      if (s && (s.observedGeneration ?? 0) >= (d.metadata?.generation ?? 0) && (s.updatedReplicas ?? 0) >= (d.spec?.replicas ?? 1) && (s.availableReplicas ?? 0) >= 1) {
        ctx.log('deploy', `[hangar] ${name}: ${s.availableReplicas} replica(s) available\n`);
        return;
      }
      await new Promise((r) => setTimeout(r, 2_000));
    }
    throw new DriverFailure(`Deployment ${name} did not become available in time`);
  }

  /** The Service already selects the new pods once the rolling update is done: nothing to switch. */
  async promote(): Promise<void> {}

  /** A rolling update replaces the previous revision's pods; nothing to stop separately. */
  async stop(): Promise<void> {}

  async teardown(target: DriverTarget['deployment']): Promise<void> {
    let api: k8s.KubernetesObjectApi;
    try {
      api = await this.api();
    } catch (error) {
      this.o.logger.warn({ err: error, deployment_id: target.id }, 'no cluster to delete the objects of a deployment from');
      return;
    }
    const t: DriverTarget = { deployment: target, revision: { id: '', seq: 0, sourceRevisionConfig: {}, resourceSpec: { redis_cpu: 0, queue_min_scale: 0 }, secrets: [] } };
    // The revision's objects, then the database, then the volume its StatefulSet claimed.
    const ns = target.sourceConfig.listener_config?.k8s_namespace ?? 'default';
    const claim: K8sObject = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: databaseClaimName(target.name), namespace: ns } };
    for (const obj of [...this.render(t).reverse(), ...this.renderDatabase(t).reverse(), claim]) {
      await api.delete(obj as k8s.KubernetesObject).catch(() => {});
    }
  }

  async close(): Promise<void> {}
}
