// What the HTTP app is built from. createApp never reads the environment: everything arrives here.
import type { Services } from '../core/services.js';
import type { Logger } from '../logging.js';

/** Facts about this server shown at `GET /info`. */
export interface ServerInfo {
  version: string;
  storage: 'embedded' | 'external';
  role: 'all' | 'api' | 'worker';
}

/** Dependencies of createApp. */
export interface AppDeps {
  services: Services;
  logger: Logger;
  info: ServerInfo;
  bodyLimitBytes: number;
  /** Interval of `: heartbeat` comments on idle run streams. */
  heartbeatMs: number;
  /** The built Console (default: the package's dist/console/). */
  consoleDir?: string;
  /** Browser origins allowed to call the API (`*`: any); none when absent. */
  corsOrigins?: readonly string[] | undefined;
}
