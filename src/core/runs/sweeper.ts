// The run event retention sweeper: deletes the events of ended runs older than the retention setting
// (HANGAR_RUN_EVENT_RETENTION_DAYS), at start and hourly, in batches so no statement holds many locks.
import type { Logger } from '../../logging.js';
import { periodicTask, type BackgroundTask } from '../../background.js';
import type { RunLifecycle } from './lifecycle.js';

/** Delete old run events until none is left to delete; returns how many went. */
export async function sweepRunEvents(lifecycle: RunLifecycle, retentionDays: number): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await lifecycle.deleteOldEvents(retentionDays);
    total += n;
    if (n === 0) return total;
  }
}

/** A background task that applies run event retention every `intervalMs`. */
export function runEventSweeper(options: { lifecycle: RunLifecycle; retentionDays: number; intervalMs?: number; logger: Logger }): BackgroundTask {
  return periodicTask(
    'run-event-sweeper',
    options.intervalMs ?? 3_600_000,
    async () => {
      const deleted = await sweepRunEvents(options.lifecycle, options.retentionDays);
      if (deleted > 0) options.logger.info({ deleted, retention_days: options.retentionDays }, 'old run events deleted');
    },
    (error) => options.logger.warn({ err: error }, 'run event retention sweep failed'),
  );
}
