// Forwards every stored run report to an external LangSmith-compatible API (`POST /runs/batch`),
// asynchronously, in batches, through a bounded queue.
import type { Logger } from '../../logging.js';
import { createToWire, updateToWire, type WireRun } from '../wire.js';
import type { ExportBatch, ExporterStats, TraceExporter } from './exporter.js';
import { BatchQueue } from './queue.js';

type Item = { op: 'post' | 'patch'; run: WireRun };

/** Options of the forwarder. */
export interface LangSmithForwarderOptions {
  /** Base URL of the destination API (what LANGSMITH_ENDPOINT would be). */
  url: string;
  apiKey?: string | undefined;
  maxQueue: number;
  maxBatch?: number;
  flushIntervalMs?: number;
  timeoutMs?: number;
  logger: Logger;
}

/** A LangSmith-compatible forwarding exporter. */
export class LangSmithForwarder implements TraceExporter {
  readonly name = 'langsmith';
  private readonly queue: BatchQueue<Item>;

  constructor(private readonly options: LangSmithForwarderOptions) {
    this.queue = new BatchQueue<Item>({
      send: (items) => this.send(items),
      maxQueue: options.maxQueue,
      maxBatch: options.maxBatch ?? 100,
      flushIntervalMs: options.flushIntervalMs ?? 250,
      onError: (error, dropped) => options.logger.warn({ err: error, dropped }, 'trace forward to the LangSmith-compatible endpoint failed'),
    });
  }

  offer(batch: ExportBatch): void {
    this.queue.pushFor(batch.workspaceId, [
      ...batch.post.map((run): Item => ({ op: 'post', run: createToWire(run, batch.projectNames[run.id]) })),
      ...batch.patch.map((run): Item => ({ op: 'patch', run: updateToWire(run) })),
    ]);
  }

  stats(workspaceId?: string): ExporterStats {
    if (workspaceId !== undefined) return this.queue.countsOf(workspaceId);
    return { queued: this.queue.length, sent: this.queue.sent, dropped: this.queue.dropped };
  }

  flush(): Promise<void> {
    return this.queue.flush();
  }

  close(): Promise<void> {
    return this.queue.close();
  }

  private async send(items: Item[]): Promise<void> {
    const body = { post: items.filter((i) => i.op === 'post').map((i) => i.run), patch: items.filter((i) => i.op === 'patch').map((i) => i.run) };
    const response = await fetch(`${this.options.url.replace(/\/+$/, '')}/runs/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(this.options.apiKey ? { 'x-api-key': this.options.apiKey } : {}) },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(this.options.timeoutMs ?? 10_000),
    });
    await response.body?.cancel();
    if (!response.ok) throw new Error(`destination answered ${response.status}`);
  }
}
