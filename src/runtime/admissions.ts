// Run starts go before new executions. A start (`POST …/runs/stream`) is accepted by the same event
// loop that executes runs; when many arrive at once and the workers claim the first ones at once, the
// executing runs (model steps, event writes, checkpoints) share the loop with the starts still being
// accepted, and a stream's first event waits seconds behind them. So while starts are being accepted
// in this process, the worker pool holds back its next claim (runs already executing go on), up to a
// bound, so that a steady stream of starts cannot hold the workers back for longer than that.

/** Starts being accepted in this process, and a wait for them to be done. */
export class Admissions {
  private open = 0;
  private waiters: (() => void)[] = [];

  /**
   * `maxDeferMs`: the longest a claim waits for starts to be done. `firstRequestHoldMs`: the longest
   * a new HTTP connection counts as a start while its first request has not arrived (src/server.ts).
   */
  constructor(
    public maxDeferMs = 1_000,
    public firstRequestHoldMs = 250,
  ) {}

  /** Starts being accepted now. */
  get size(): number {
    return this.open;
  }

  /** A start is being accepted; call the returned function (once) when it is done, however it ended. */
  enter(): () => void {
    this.open++;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.open--;
      if (this.open === 0) this.release();
    };
  }

  /** Resolves when no start is being accepted here, or after `maxDeferMs`, or on `release()`. */
  async idle(): Promise<void> {
    if (this.open === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      this.waiters.push(resolve);
      timer = setTimeout(resolve, this.maxDeferMs);
    });
    clearTimeout(timer);
  }

  /** Let every waiting claim go (stopping the pool, for one). */
  release(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}
