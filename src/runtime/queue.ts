// The run queue as a worker sees it: claims, leases and outcomes go to the run lifecycle (the one
// owner of run status, src/core/runs/lifecycle.ts); wake-ups and cancels travel on the process's
// notification bus (src/db/bus.ts), with a direct call for this process's own subscribers.
import type { NotificationBus } from '../db/bus.js';
import { reconnecting } from '../db/reconnect.js';
import { Admissions } from './admissions.js';
import type { ClaimedRun, RunLifecycle, RunOutcome, StartSlot } from '../core/runs/lifecycle.js';

export type { ClaimedRun, RunOutcome } from '../core/runs/lifecycle.js';

const QUEUE_CHANNEL = 'hangar_runs_queued';
const CANCEL_CHANNEL = 'hangar_runs_cancelled';

/** What a worker pool hears from the queue. */
export interface QueueListener {
  /** A run may be waiting. */
  wake(): void;
  /** Stop executing `runId` if it runs here. */
  cancel(runId: string): void;
  /** Notifications may have been lost: re-check what this worker holds (a renewal does). */
  gap?(): void;
  /** Whether the woken listener will claim the announced run (it runs and has a slot not yet promised); a yes promises the slot. */
  canClaim?(): boolean;
  /** A free slot held for a start to claim its run with (RunLifecycle.createOnThread), if there is one. */
  reserve?(): StartSlot | undefined;
}

/** Claims, leases and settles runs of one worker identity. */
export class RunQueue {
  private readonly local = new Set<QueueListener>();
  /** The queue NOTIFY in flight, and whether another must follow it (announcements coalesce). */
  private notifying: Promise<void> | undefined;
  private notifyAgain = false;
  /** Starts being accepted in this process: local workers claim after them (src/runtime/admissions.ts). */
  readonly admissions = new Admissions();

  constructor(
    private readonly lifecycle: RunLifecycle,
    private readonly bus: NotificationBus,
    readonly workerId: string,
    readonly leaseMs: number,
  ) {}

  /** Claim up to `limit` pending runs, oldest first. */
  claim(limit: number): Promise<ClaimedRun[]> {
    return this.lifecycle.claim(this.workerId, this.leaseMs, limit);
  }

  /** Extend the leases of runs this worker holds; returns those it lost (cancelled or swept). */
  renew(runIds: string[]): Promise<string[]> {
    return this.lifecycle.renew(this.workerId, this.leaseMs, runIds);
  }

  /** Settle a run this worker holds and free its thread. False if the run was no longer ours. */
  finish(run: ClaimedRun, outcome: RunOutcome): Promise<boolean> {
    return this.lifecycle.finish(this.workerId, run.id, outcome, run.attempt);
  }

  /**
   * `finish`, also saying whether another run holds the thread (one enqueued behind it), and sending
   * `notify` with the same statement.
   */
  async settle(run: ClaimedRun, outcome: RunOutcome, notify?: { channel: string; payload: string }, lastEvent?: { event: string; json: string }): Promise<{ settled: boolean; threadHeld: boolean }> {
    // Guarded by the run's state, lease and attempt: safe to send again over a new connection.
    const result = await reconnecting(() => this.lifecycle.settle(this.workerId, run.id, outcome, notify, run.attempt, lastEvent));
    if (result.settled) return result;
    // Cancelled while executing here: the run has now stopped, so its thread's next run may start (in
    // any process), and only this worker knows its usage. Guarded by lease and attempt like the settle.
    const { waiting } = await reconnecting(() => this.lifecycle.release(this.workerId, run.id, run.attempt, outcome.usage));
    if (waiting) await this.announce();
    return result;
  }

  /**
   * Hand back (or fail) runs whose lease expired, except `executingHere` (this process renews those
   * itself; other processes' sweeps still take them if it stalls); see RunLifecycle.sweepExpired.
   * `streamsChannel`: where the streams of a run handed back are told to read on (its `pending` event).
   */
  sweepExpired(maxAttempts: number, executingHere: readonly string[] = [], streamsChannel?: string): Promise<{ retried: number; failed: { id: string; threadId: string }[] }> {
    // The statement wakes every process's workers when a run may be claimed now: this process's may
    // have no free slot, and the others would otherwise find the run only at their poll.
    return this.lifecycle.sweepExpired(this.leaseMs, maxAttempts, executingHere, streamsChannel, { channel: QUEUE_CHANNEL, payload: '' });
  }

  /**
   * Hand back a run this worker stopped without finishing it (its process is stopping), as a sweep
   * hands back a run whose worker died; see RunLifecycle.handBack. `streamsNotice`: the NOTIFY that
   * tells the run's streams to read on (the event saying it is pending again).
   */
  handBack(run: ClaimedRun, maxAttempts: number, streamsNotice: { channel: string; payload: string }): Promise<{ handedBack: boolean; failed: boolean }> {
    // Other processes' workers are woken by the statement itself: this process's bus is closing.
    return reconnecting(() => this.lifecycle.handBack(this.workerId, run.id, run.attempt, maxAttempts, [{ channel: QUEUE_CHANNEL, payload: '' }, streamsNotice]));
  }

  /**
   * Put back a run a start here recorded claimed by this worker that it will not execute (this process
   * began stopping meanwhile): `pending` for any worker, woken by the same statement; see
   * RunLifecycle.unclaim. `streamsNotice`: the NOTIFY that tells the run's streams to read on (the
   * event saying it is pending again). Cancelled meanwhile (false): its lease is given back, as after
   * a cancelled run stopped.
   */
  async unclaim(run: ClaimedRun, streamsNotice: { channel: string; payload: string }): Promise<boolean> {
    // Other processes' workers are woken by the statement itself: this process's bus is closing.
    if (await reconnecting(() => this.lifecycle.unclaim(this.workerId, run.id, [{ channel: QUEUE_CHANNEL, payload: '' }, streamsNotice]))) return true;
    const { waiting } = await reconnecting(() => this.lifecycle.release(this.workerId, run.id, run.attempt));
    if (waiting) this.notifyQueued();
    return false;
  }

  /** A free worker slot of this process, held for a start that may claim its run at once. */
  reserve(): StartSlot | undefined {
    for (const l of this.local) {
      const slot = l.reserve?.();
      if (slot) return slot;
    }
    return undefined;
  }

  /**
   * Tell workers that a run is waiting: at once in this process, and through NOTIFY in others (not
   * awaited: the poll of other processes and the bus's gap wake-up cover a lost notification). When
   * a worker here has a free slot it claims the run now, and other processes are not disturbed (the
   * NOTIFY would also come back to this process and cost it a claim that finds nothing).
   */
  async announce(): Promise<void> {
    let claimedHere = false;
    for (const l of this.local) {
      if (l.canClaim?.()) claimedHere = true;
      l.wake();
    }
    if (!claimedHere) this.notifyQueued();
  }

  /**
   * One NOTIFY at a time: announcements made while one is in flight share the next, sent after it
   * (so after their runs were recorded). A woken worker claims every run it can, so a burst of starts
   * costs a few statements instead of one each.
   */
  private notifyQueued(): void {
    if (this.notifying) {
      this.notifyAgain = true;
      return;
    }
    this.notifying = this.bus
      .notify(QUEUE_CHANNEL)
      .catch(() => {})
      .finally(() => {
        this.notifying = undefined;
        if (this.notifyAgain) {
          this.notifyAgain = false;
          this.notifyQueued();
        }
      });
  }

  /** Tell the worker executing `runId`, here or elsewhere, to stop it (its row already says so). */
  async cancel(runId: string): Promise<void> {
    for (const l of this.local) l.cancel(runId);
    await this.bus.notify(CANCEL_CHANNEL, runId);
  }

  /** Stop `runId` if a worker of this process executes it (the cancel reached it another way). */
  cancelHere(runId: string): void {
    for (const l of this.local) l.cancel(runId);
  }

  /**
   * Deliver this process's own wake-ups and cancels to `listener`, not the bus's (the executor thread's
   * relay on the main thread: announced runs and cancels reach the thread through its port).
   */
  attach(listener: QueueListener): () => void {
    this.local.add(listener);
    return () => this.local.delete(listener);
  }

  /** Deliver wake-ups, cancels and gaps to `listener` until the returned function is called. */
  async listen(listener: QueueListener): Promise<() => Promise<void>> {
    this.local.add(listener);
    const offQueue = await this.bus.subscribe(QUEUE_CHANNEL, { onMessage: () => listener.wake(), onGap: () => listener.wake() });
    // This process's own cancels were delivered directly; a second call is harmless.
    const offCancel = await this.bus.subscribe(CANCEL_CHANNEL, { onMessage: (id) => id && listener.cancel(id), onGap: () => listener.gap?.() });
    return async () => {
      this.local.delete(listener);
      await offQueue();
      await offCancel();
    };
  }
}
