// The contract of a long-lived part of the server, below every layer so that the runtime, tracing and
// deploy may each provide one and the composition root (server.ts) starts and stops them.

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
