// What the trace store hands to exporters after every write: the redacted run reports of one batch.
import type { RunBatch } from '../run.js';

/** Run reports stored for one workspace, offered to exporters after they are stored. */
export interface ExportBatch extends RunBatch {
  workspaceId: string;
  /** Project name of each created run, by run id (exporters name the project downstream). */
  projectNames: Record<string, string>;
}

/** A destination beyond Hangar's own store. `offer` never blocks and never throws. */
export interface TraceExporter {
  readonly name: string;
  offer(batch: ExportBatch): void;
  /**
   * Counters: items queued, sent, dropped (queue full or send failed); with `workspaceId`, only
   * that workspace's items (what its keys may see), else the whole process's (`/metrics`).
   */
  stats(workspaceId?: string): ExporterStats;
  /** Send what is queued now; resolves when the queue is empty (failed sends are dropped and counted). */
  flush(): Promise<void>;
  /** Send what is queued (bounded by a timeout), then stop. */
  close(): Promise<void>;
}

/** Counters of one exporter. */
export interface ExporterStats {
  queued: number;
  sent: number;
  dropped: number;
}
