// The sandbox service of a server, with the driver `HANGAR_SANDBOX_DRIVER` picks and the limits of
// the settings (docs/sandboxes.md).
import path from 'node:path';
import type { Config } from '../config/index.js';
import type { Db } from '../db/index.js';
import type { Logger } from '../logging.js';
import type { SandboxLimits } from './driver.js';
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

/** The sandbox service of this server. */
export function createSandboxService(o: { config: Config; db: Db; logger: Logger }): SandboxService {
  const driver = new LocalSandboxDriver({
    dir: o.config.sandboxDir ? path.resolve(o.config.sandboxDir) : path.join(o.config.dataDir, 'sandboxes'),
    limits: sandboxLimits(o.config),
    uidBase: o.config.sandboxUidBase,
  });
  return new SandboxService({ db: o.db, driver, logger: o.logger, sweepMs: o.config.sandboxSweepMs });
}
