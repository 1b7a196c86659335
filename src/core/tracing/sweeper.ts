// The retention sweeper: deletes traced runs older than the retention setting, at start and hourly.
import type { Logger } from '../../logging.js';
import { retentionTask, type BackgroundTask } from '../../background.js';
import type { TracingService } from './service.js';

/** A background task that applies trace retention every `intervalMs`. */
export function traceSweeper(options: { tracing: TracingService; retentionDays: number; intervalMs?: number; logger: Logger }): BackgroundTask {
  return retentionTask({ ...options, name: 'trace-sweeper', what: 'old traced runs', sweep: (days) => options.tracing.sweep(days) });
}
