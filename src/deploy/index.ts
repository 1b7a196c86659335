// Building the reconciler and its drivers from the configuration (used by the composition root).
import type { EgressGuard } from '../net/egress.js';
import { parseRoots } from '../core/local-repos.js';
import { createHmac } from 'node:crypto';
import path from 'node:path';
import type { Config } from '../config/index.js';
import { integrationCodeHosts } from '../core/deployments/code-hosts.js';
import type { Services } from '../core/services.js';
import type { Cipher } from '../core/secrets/cipher.js';
import type { Db } from '../db/index.js';
import type { Logger } from '../logging.js';
import type { Driver } from './driver.js';
import { hangarAppTracing } from './app-tracing.js';
import { KubernetesDriver } from './kubernetes/index.js';
import { DEPLOYMENT_UID_OFFSET, LocalDriver } from './local/index.js';
import { Reconciler } from './reconciler.js';
import { reportPolicyDrift } from './policy-drift.js';
import { parseNamespaces } from '../core/deployments/k8s-policy.js';

/** The reconciler with the drivers named in HANGAR_DEPLOY_DRIVERS. */
export function createReconciler(o: { config: Config; db: Db; cipher: Cipher; logger: Logger; services: Services; drivers: Set<string>; secretKey: Buffer; publicUrl: () => string; egress?: EgressGuard }): Reconciler {
  const logger = o.logger.child({ component: 'deploy' });
  const drivers: Driver[] = [];
  if (o.drivers.has('local')) {
    drivers.push(
      new LocalDriver({
        dir: path.join(o.config.dataDir, 'deployments'),
        dataDir: o.config.dataDir,
        // As root: one user for every deployment, just above the sandboxes' users (slots < 60000).
        uid: o.config.sandboxUidBase + DEPLOYMENT_UID_OFFSET,
        buildTimeoutMs: o.config.deployBuildTimeoutMs,
        healthTimeoutMs: o.config.deployHealthTimeoutMs,
        uploads: o.services.deploymentUploads,
        codeHosts: integrationCodeHosts(o.services.integrations),
        tracing: hangarAppTracing({ db: o.db, workspaces: o.services.workspaces, publicUrl: o.publicUrl }),
        localRepos: { allow: o.config.deployAllowLocalRepos, roots: parseRoots(o.config.localRepoRoots) },
        egress: o.egress,
        seccomp: o.config.deploySeccomp,
        logger,
      }),
    );
  }
  if (o.drivers.has('kubernetes')) drivers.push(new KubernetesDriver({ kubeconfig: o.config.kubeconfig, logger, readyTimeoutMs: o.config.deployHealthTimeoutMs, podPolicy: o.config.deployK8sPodPolicy, runAsUser: o.config.deployK8sRunAsUser, derive: (label) => createHmac('sha256', o.secretKey).update(label).digest('hex') }));
  const policy = { namespaces: parseNamespaces(o.config.deployK8sNamespaces), pod: o.config.deployK8sPodPolicy };
  // Deployments made before the policy changed keep running; the start says which are out of it.
  const onStart = o.drivers.has('kubernetes') && (policy.namespaces.length > 0 || policy.pod !== 'open') ? () => reportPolicyDrift({ db: o.db, policy, logger }) : undefined;
  return new Reconciler({ db: o.db, cipher: o.cipher, logger, drivers, leaseMs: o.config.deployLeaseMs, pollMs: o.config.deployPollMs, publicUrl: o.publicUrl, onStart });
}

/** The templates internal_template deployments can name (the directories of `templates/`). */
export { templateNames } from './local/fetch.js';
