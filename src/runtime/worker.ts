// The worker pool: claims pending runs up to its concurrency, executes them, renews their leases and
// settles them. It sleeps until a run is announced (in-process or by NOTIFY), with a slow poll as a
// safety net for a lost notification.
import type { Logger } from '../logging.js';
import type { BackgroundTask } from '../server.js';
import { runCallbacks } from './callbacks.js';
import { executeRun } from './execute.js';
import type { Runtime, RuntimeSettings } from './index.js';
import type { ClaimedRun } from './queue.js';

const POLL_MS = 2_000;

/** Executes runs of the queue; a BackgroundTask of the server. */
export class WorkerPool implements BackgroundTask {
  readonly name = 'run-workers';
  private readonly active = new Map<string, { run: ClaimedRun; abort: AbortController; done: Promise<void> }>();
  private running = false;
  private wake: (() => void) | undefined;
  private pendingWake = false;
  private loop: Promise<void> | undefined;
  private stopListening: (() => Promise<void>) | undefined;
  private renewTimer: NodeJS.Timeout | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly runtime: Runtime,
    private readonly settings: RuntimeSettings,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    this.running = true;
    this.stopListening = await this.runtime.queue.listen(
      () => this.nudge(),
      (runId) => this.active.get(runId)?.abort.abort(),
    );
    await this.sweep();
    this.sweepTimer = setInterval(() => void this.sweep(), Math.max(500, Math.floor(this.settings.leaseMs / 2)));
    this.renewTimer = setInterval(() => {
      this.runtime.queue.renew([...this.active.keys()]).catch((error: unknown) => this.logger.warn({ err: error }, 'lease renewal failed'));
    }, Math.max(500, Math.floor(this.settings.leaseMs / 3)));
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.nudge();
    await this.loop;
    clearInterval(this.renewTimer);
    clearInterval(this.sweepTimer);
    await this.stopListening?.();
    // Let current runs finish: their clients are still reading.
    await Promise.all([...this.active.values()].map((a) => a.done));
  }

  private nudge(): void {
    this.pendingWake = true;
    this.wake?.();
  }

  private async run(): Promise<void> {
    while (this.running) {
      const free = this.settings.workerConcurrency - this.active.size;
      let claimed: ClaimedRun[] = [];
      this.pendingWake = false;
      if (free > 0) {
        try {
          claimed = await this.runtime.queue.claim(free);
        } catch (error) {
          this.logger.error({ err: error }, 'claiming runs failed');
        }
        for (const run of claimed) this.execute(run);
      }
      if (claimed.length > 0 && claimed.length === free) continue;
      if (this.pendingWake || !this.running) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, POLL_MS);
        this.wake = () => {
          clearTimeout(timer);
          this.wake = undefined;
          resolve();
        };
      });
    }
  }

  private execute(run: ClaimedRun): void {
    const abort = new AbortController();
    const log = this.logger.child({ run_id: run.id, thread_id: run.threadId });
    const done = (async () => {
      // A retried run continues its event log after what the earlier attempt stored.
      const writer = this.runtime.hub.openWriter(run.id, run.attempt > 1 ? await this.lastSeq(run.id) : 0);
      const outcome = await executeRun({
        run,
        writer,
        agent: () => this.runtime.agentFor(run.workspaceId, run.agentId, run.revision),
        callbacks: (agent) => runCallbacks(this.runtime.callbackFactories, { run, modelName: agent.modelName }),
        signal: abort.signal,
        recursionLimit: this.settings.recursionLimit,
        durability: this.settings.checkpointDurability,
      });
      await writer.flush();
      const settled = await this.runtime.queue.finish(run, outcome);
      // A cancelled run was already settled by whoever cancelled it.
      if (!settled && outcome.status !== 'interrupted') log.warn('run was taken from this worker before it finished');
      if (outcome.status === 'error') log.warn({ error: outcome.error }, 'run failed');
      await writer.end();
    })()
      .catch((error: unknown) => log.error({ err: error }, 'run execution crashed'))
      .finally(() => {
        this.active.delete(run.id);
        this.nudge();
      });
    this.active.set(run.id, { run, abort, done });
  }

  /**
   * Hand back (or fail) runs whose worker died: every process sweeps, and SKIP LOCKED keeps two
   * sweepers from touching one run.
   */
  private async sweep(): Promise<void> {
    try {
      const { retried, failed } = await this.runtime.queue.sweepExpired(this.settings.maxAttempts ?? 3);
      if (retried > 0 || failed > 0) {
        this.logger.warn({ retried, failed }, 'runs of a lost worker were swept');
        if (retried > 0) this.nudge();
      }
    } catch (error) {
      this.logger.warn({ err: error }, 'sweeping expired leases failed');
    }
  }

  private async lastSeq(runId: string): Promise<number> {
    const { rows } = await this.runtime.deps.pool.query<{ seq: number | null }>('SELECT max(seq) AS seq FROM run_events WHERE run_id = $1', [runId]);
    return Number(rows[0]?.seq ?? 0);
  }
}
