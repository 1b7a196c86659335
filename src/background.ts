// The contract of a long-lived part of the server, below every layer so that the runtime, tracing and
// deploy may each provide one and the composition root (server.ts) starts and stops them.

/** A long-lived part of the server started after the database and stopped before it (workers, sweepers). */
export interface BackgroundTask {
  name: string;
  start(): Promise<void> | void;
  /** Stop taking new work and let current work finish (within the drain timeout). */
  stop(): Promise<void> | void;
}
