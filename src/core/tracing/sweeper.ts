// The retention sweeper: deletes traced runs older than the retention setting, at start and hourly.
import type { Logger } from '../../logging.js';
import type { BackgroundTask } from '../../background.js';
import type { TracingService } from './service.js';

/** A background task that applies trace retention every `intervalMs`. */
export function traceSweeper(options: { tracing: TracingService; retentionDays: number; intervalMs?: number; logger: Logger }): BackgroundTask {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  const sweep = () => {
    running ??= options.tracing
      .sweep(options.retentionDays)
      .then((deleted) => {
        if (deleted > 0) options.logger.info({ deleted, retention_days: options.retentionDays }, 'old traced runs deleted');
      })
      .catch((error: unknown) => options.logger.warn({ err: error }, 'trace retention sweep failed'))
      .finally(() => {
        running = undefined;
      });
  };
  return {
    name: 'trace-sweeper',
    start() {
      sweep();
      timer = setInterval(sweep, options.intervalMs ?? 3_600_000);
      timer.unref();
    },
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
