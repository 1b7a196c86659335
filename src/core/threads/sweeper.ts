// The temporary thread sweeper: deletes the threads of stateless runs that nobody deleted when their
// run ended (a background run, a client that went away, a process that crashed), at start and every
// minute, once their run has been over for HANGAR_TEMPORARY_THREAD_GRACE_SECONDS.
import { inBatches, periodicTask, type BackgroundTask } from '../../background.js';
import type { Logger } from '../../logging.js';
import type { ThreadService } from './service.js';

/** A background task that deletes ended temporary threads every `intervalMs` (a minute by default). */
export function temporaryThreadSweeper(options: { threads: ThreadService; graceSeconds: number; intervalMs?: number; logger: Logger }): BackgroundTask {
  const { threads, graceSeconds, logger } = options;
  return periodicTask(
    'temporary-thread-sweeper',
    options.intervalMs ?? 60_000,
    async () => {
      const deleted = await inBatches(() => threads.sweepTemporary(graceSeconds));
      if (deleted > 0) logger.info({ deleted }, 'temporary threads of stateless runs deleted');
    },
    (error) => logger.warn({ err: error }, 'temporary threads: sweep failed'),
  );
}
