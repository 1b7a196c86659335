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

/** What a queue counted, in all or for one key. */
export interface QueueCounts {
  queued: number;
  sent: number;
  dropped: number;
}

/** An item and whose it is (a workspace), for the counters of each. */
interface Entry<T> {
  item: T;
  key: string | undefined;
}

/**
 * Bounded batching queue with counters, in all and per key (items pushed with `pushFor`): a
 * workspace is shown its own figures, never another's.
 */
export class BatchQueue<T> {
  private items: Entry<T>[] = [];
  private readonly byKey = new Map<string, QueueCounts>();
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
    return this.pushFor(undefined, items);
  }

  /** Queue items of `key` (counted for it too); returns how many were accepted. */
  pushFor(key: string | undefined, items: T[]): number {
    if (this.closed) {
      this.count(key, 'dropped', items.length);
      return 0;
    }
    const room = Math.max(0, this.options.maxQueue - this.items.length);
    const accepted = items.slice(0, room);
    this.count(key, 'dropped', items.length - accepted.length);
    this.count(key, 'queued', accepted.length, false);
    for (const item of accepted) this.items.push({ item, key });
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
    this.leave(this.items.splice(0), 'dropped');
  }

  /** What was counted for `key` (items pushed with it). */
  countsOf(key: string): QueueCounts {
    return { ...(this.byKey.get(key) ?? { queued: 0, sent: 0, dropped: 0 }) };
  }

  /** Add `n` to a counter of `key` (and to the queue's own `sent`/`dropped` unless `total` is false). */
  count(key: string | undefined, counter: keyof QueueCounts, n: number, total = true): void {
    if (n === 0) return;
    if (total && counter !== 'queued') this[counter] += n;
    if (key === undefined) return;
    let counts = this.byKey.get(key);
    if (!counts) this.byKey.set(key, (counts = { queued: 0, sent: 0, dropped: 0 }));
    counts[counter] += n;
  }

  /** Entries that left the queue (sent, or dropped at close). */
  private leave(entries: Entry<T>[], how?: 'sent' | 'dropped'): void {
    for (const e of entries) {
      this.count(e.key, 'queued', -1, false);
      if (how) this.count(e.key, how, 1);
    }
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
    this.leave(batch); // in flight: no longer queued
    this.inFlight = this.options
      .send(batch.map((e) => e.item))
      .then(() => {
        for (const e of batch) this.count(e.key, 'sent', 1);
      })
      .catch((error: unknown) => {
        for (const e of batch) this.count(e.key, 'dropped', 1);
        this.options.onError?.(error, batch.length);
      })
      .finally(() => {
        this.inFlight = undefined;
        if (this.items.length >= this.options.maxBatch || (this.closed && this.items.length > 0)) this.kick();
        else if (this.items.length > 0) this.schedule();
      });
  }
}
