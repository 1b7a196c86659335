// What the HTTP app is built from. createApp never reads the environment: everything arrives here.
import type { Services } from '../core/services.js';
import type { Logger } from '../logging.js';
import type { StreamSlots } from './sse.js';
import type { AbuseSettings } from './abuse.js';
import type { Metrics } from '../metrics.js';

/** Facts about this server shown at `GET /info`. */
export interface ServerInfo {
  version: string;
  storage: 'embedded' | 'external';
  role: 'all' | 'api' | 'worker';
  /** Whether agent runs are traced (HANGAR_TRACING). */
  tracing: boolean;
}

/** Dependencies of createApp. */
export interface AppDeps {
  services: Services;
  logger: Logger;
  info: ServerInfo;
  bodyLimitBytes: number;
  /** Interval of `: heartbeat` comments on idle run streams. */
  heartbeatMs: number;
  /** The process's run-stream slots (HANGAR_STREAM_CAPACITY); unlimited without. */
  streams?: StreamSlots | undefined;
  /** Failed-authentication throttling and the per-key rate (both off when absent). */
  limits?: AbuseSettings;
  /** The built Console (default: the package's dist/console/). */
  consoleDir?: string;
  /** Browser origins allowed to call the API (`*`: any); none when absent. */
  corsOrigins?: readonly string[] | undefined;
  /** The server's metrics registry: requests are recorded into it and `GET /metrics` shows it. */
  metrics?: Metrics | undefined;
  /** Readiness checks for `GET /ready` (database reachable, migrations applied); ready when absent. */
  readiness?: (() => Promise<Readiness>) | undefined;
}

/** The answer of `GET /ready`. */
export interface Readiness {
  ready: boolean;
  database: 'ok' | 'unreachable';
  /** Migrations of this build not applied to the database yet. */
  pending_migrations: string[];
}
