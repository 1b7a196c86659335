// The contract of a long-lived part of the server, below every layer so that the runtime, tracing and
// deploy may each provide one and the composition root (server.ts) starts and stops them.
import type { Logger } from './logging.js';

/** A long-lived part of the server started after the database and stopped before it (workers, sweepers). */
export interface BackgroundTask {
  name: string;
  start(): Promise<void> | void;
  /** Stop taking new work and let current work finish (within the drain timeout). */
  stop(): Promise<void> | void;
}

/**
 * A task that runs `work` at start and every `intervalMs` (never two passes at once); a failing pass
 * is logged and the next one tries again. `stop` waits for a pass in progress.
 */
export function periodicTask(name: string, intervalMs: number, work: () => Promise<void>, onError: (error: unknown) => void): BackgroundTask {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  const pass = () => {
    running ??= work()
      .catch(onError)
      .finally(() => {
        running = undefined;
      });
  };
  return {
    name,
    start() {
      pass();
      timer = setInterval(pass, intervalMs);
      timer.unref();
    },
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

/**
 * A retention sweeper: `sweep(retentionDays)` deletes what is older, at start and every `intervalMs`
 * (hourly by default); how much went is logged as `what` ("old run events", …).
 */
export function retentionTask(options: {
  name: string;
  what: string;
  retentionDays: number;
  intervalMs?: number | undefined;
  logger: Logger;
  sweep: (retentionDays: number) => Promise<number>;
}): BackgroundTask {
  const { retentionDays, logger } = options;
  return periodicTask(
    options.name,
    options.intervalMs ?? 3_600_000,
    async () => {
      const deleted = await options.sweep(retentionDays);
      if (deleted > 0) logger.info({ deleted, retention_days: retentionDays }, `${options.what} deleted`);
    },
    (error) => logger.warn({ err: error }, `${options.what}: retention sweep failed`),
  );
}

/** Run `batch` (which deletes up to a batch and says how many went) until it deletes nothing; the total. */
export async function inBatches(batch: () => Promise<number>): Promise<number> {
  let total = 0;
  for (let n = await batch(); n > 0; n = await batch()) total += n;
  return total;
}
