// The sandbox service of a server, with the driver `HANGAR_SANDBOX_DRIVER` picks and the limits of
// the settings (docs/sandboxes.md).
import path from 'node:path';
import type { Config } from '../config/index.js';
import type { Db } from '../db/index.js';
import type { Logger } from '../logging.js';
import type { SandboxDriver, SandboxLimits } from './driver.js';
import { KubernetesSandboxDriver } from './kubernetes/index.js';
import { LocalSandboxDriver } from './local/index.js';
import { SandboxService } from './service.js';

export { sandboxBackend, SANDBOX_WORKDIR, withToolWriter } from './backend.js';
export { SandboxService } from './service.js';

const MiB = 1024 * 1024;

/** The limits of every sandbox command, from the settings. */
export function sandboxLimits(config: Config): SandboxLimits {
  return {
    cpuSeconds: config.sandboxCpuSeconds,
    memoryBytes: config.sandboxMemoryMb * MiB,
    maxProcesses: config.sandboxMaxProcesses,
    maxFileBytes: config.sandboxMaxFileMb * MiB,
    maxOutputBytes: config.sandboxMaxOutputBytes,
    timeoutMs: config.sandboxTimeoutSeconds * 1000,
    tmpBytes: config.sandboxTmpMb * MiB,
  };
}

/** The sandbox service of this server, with the driver `HANGAR_SANDBOX_DRIVER` picks. */
export function createSandboxService(o: { config: Config; db: Db; logger: Logger }): SandboxService {
  const c = o.config;
  const driver: SandboxDriver =
    c.sandboxDriver === 'kubernetes'
      ? new KubernetesSandboxDriver({
          kubeconfig: c.kubeconfig,
          namespace: c.sandboxK8sNamespace,
          image: c.sandboxK8sImage,
          cpu: c.sandboxK8sCpu,
          volumeSize: c.sandboxK8sVolumeSize,
          storageClass: c.sandboxK8sStorageClass,
          runAsUser: c.sandboxK8sRunAsUser,
          startTimeoutMs: c.sandboxK8sStartTimeoutSeconds * 1000,
          diskUsageTimeoutMs: c.sandboxDuTimeoutMs,
          limits: sandboxLimits(c),
        })
      : new LocalSandboxDriver({
          dir: c.sandboxDir ? path.resolve(c.sandboxDir) : path.join(c.dataDir, 'sandboxes'),
          limits: sandboxLimits(c),
          uidBase: c.sandboxUidBase,
          seccomp: c.sandboxSeccomp,
          diskUsageTimeoutMs: c.sandboxDuTimeoutMs,
          logger: o.logger,
        });
  return new SandboxService({ db: o.db, driver, logger: o.logger, sweepMs: c.sandboxSweepMs });
}
