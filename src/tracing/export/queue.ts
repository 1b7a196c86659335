// A bounded, batched, asynchronous send queue: the one mechanism behind every exporter. Adding
// never waits and never fails; when the queue is full the item is dropped and counted, so a slow or
// dead destination can never slow or fail a run.

/** Options of a queue. */
export interface BatchQueueOptions<T> {
  /** Sends one batch; a rejection drops the batch (counted). */
  send: (items: T[]) => Promise<void>;
  /** Most items held at once; more are dropped. */
  maxQueue: number;
  /** Most items per send. */
  maxBatch: number;
  /** How long an item may wait for companions before a send. */
  flushIntervalMs: number;
  onError?: (error: unknown, dropped: number) => void;
}

/** Bounded batching queue with counters. */
export class BatchQueue<T> {
  private items: T[] = [];
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private closed = false;
  /** Items sent successfully. */
  sent = 0;
  /** Items dropped: queue full, or their send failed. */
  dropped = 0;

  constructor(private readonly options: BatchQueueOptions<T>) {}

  /** Items waiting to be sent. */
  get length(): number {
    return this.items.length;
  }

  /** Queue items; returns how many were accepted. */
  push(...items: T[]): number {
    if (this.closed) {
      this.dropped += items.length;
      return 0;
    }
    const room = Math.max(0, this.options.maxQueue - this.items.length);
    const accepted = items.slice(0, room);
    this.dropped += items.length - accepted.length;
    this.items.push(...accepted);
    if (this.items.length >= this.options.maxBatch) this.kick();
    else this.schedule();
    return accepted.length;
  }

  /** Send everything queued now; resolves when the queue is empty (failed sends are dropped). */
  async flush(): Promise<void> {
    while (this.items.length > 0 || this.inFlight) {
      if (!this.inFlight) this.kick();
      await this.inFlight;
    }
  }

  /** Stop accepting items; flush for at most `timeoutMs`, then drop the rest (counted). */
  async close(timeoutMs = 2000): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.flush(), new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs).unref()))]);
    clearTimeout(timer);
    this.dropped += this.items.length;
    this.items = [];
  }

  private schedule(): void {
    if (this.timer || this.inFlight || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.kick();
    }, this.options.flushIntervalMs);
    this.timer.unref();
  }

  private kick(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.inFlight || this.items.length === 0) return;
    const batch = this.items.splice(0, this.options.maxBatch);
    this.inFlight = this.options
      .send(batch)
      .then(() => {
        this.sent += batch.length;
      })
      .catch((error: unknown) => {
        this.dropped += batch.length;
        this.options.onError?.(error, batch.length);
      })
      .finally(() => {
        this.inFlight = undefined;
        if (this.items.length >= this.options.maxBatch || (this.closed && this.items.length > 0)) this.kick();
        else if (this.items.length > 0) this.schedule();
      });
  }
}
