// The retention sweeper: deletes traced runs older than the retention setting, at start and hourly.
import type { Logger } from '../../logging.js';
import { periodicTask, type BackgroundTask } from '../../background.js';
import type { TracingService } from './service.js';

/** A background task that applies trace retention every `intervalMs`. */
export function traceSweeper(options: { tracing: TracingService; retentionDays: number; intervalMs?: number; logger: Logger }): BackgroundTask {
  return periodicTask(
    'trace-sweeper',
    options.intervalMs ?? 3_600_000,
    async () => {
      const deleted = await options.tracing.sweep(options.retentionDays);
      if (deleted > 0) options.logger.info({ deleted, retention_days: options.retentionDays }, 'old traced runs deleted');
    },
    (error) => options.logger.warn({ err: error }, 'trace retention sweep failed'),
  );
}
