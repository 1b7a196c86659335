// The run event retention sweeper: deletes the events of ended runs older than the retention setting
// (HANGAR_RUN_EVENT_RETENTION_DAYS), at start and hourly, in batches so no statement holds many locks.
import type { Logger } from '../../logging.js';
import { inBatches, retentionTask, type BackgroundTask } from '../../background.js';
import type { RunLifecycle } from './lifecycle.js';

/** Delete old run events until none is left to delete; returns how many went. */
export function sweepRunEvents(lifecycle: RunLifecycle, retentionDays: number): Promise<number> {
  return inBatches(() => lifecycle.deleteOldEvents(retentionDays));
}

/** A background task that applies run event retention every `intervalMs`. */
export function runEventSweeper(options: { lifecycle: RunLifecycle; retentionDays: number; intervalMs?: number; logger: Logger }): BackgroundTask {
  return retentionTask({ ...options, name: 'run-event-sweeper', what: 'old run events', sweep: (days) => sweepRunEvents(options.lifecycle, days) });
}
