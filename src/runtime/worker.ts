// The worker pool: claims pending runs up to its concurrency, executes them, renews their leases and
// reports their outcomes to the run lifecycle. It sleeps until a run is announced (in-process or
// through the notification bus), with a slow poll as a safety net. A renewal that finds a run no
// longer held by this worker (cancelled elsewhere, or swept after a lost lease) stops it: cancels
// arrive even when their notification was lost.
import type { Logger } from '../logging.js';
import type { BackgroundTask } from '../background.js';
import type { BaseCallbackHandler } from '@langchain/core/callbacks/base';
import { runCallbacks, settleCallbacks } from './callbacks.js';
import { executeRun, RunCancelled, RunHandedBack } from './execute.js';
import type { Runtime, RuntimeSettings } from './index.js';
import type { RunEventWriter } from './events/hub.js';
import type { ClaimedRun } from './queue.js';
import type { StartSlot } from '../core/runs/lifecycle.js';
import { rollbackRunCheckpoints } from './storage.js';

/** How often idle workers claim without being woken, unless set (RuntimeSettings.pollMs). */
const POLL_MS = 2_000;

/** Executes runs of the queue; a BackgroundTask of the server. */
export class WorkerPool implements BackgroundTask {
  readonly name = 'run-workers';
  private readonly active = new Map<string, { run: ClaimedRun; abort: AbortController; done: Promise<void>; settled?: boolean }>();
  /** Runs' callbacks finishing (the trace's last write) after the runs ended. */
  private readonly finishing = new Set<Promise<void>>();
  private running = false;
  private wake: (() => void) | undefined;
  private pendingWake = false;
  private loop: Promise<void> | undefined;
  private stopListening: (() => Promise<void>) | undefined;
  private renewTimer: NodeJS.Timeout | undefined;
  private renewing: Promise<void> | undefined;
  /**
   * Runs may be waiting that the last claim did not take: it was skipped (no free slot) or filled
   * every free slot. A run ending here then claims again; otherwise the claim the announcement of
   * each run caused already took every claimable run, and a run ending claims only when its thread
   * has another run waiting.
   */
  private mayHaveWaiting = false;
  /**
   * Slots promised to runs announced here since the last claim began (that claim takes them). Without
   * the count, a burst of starts arriving before any claim (claims wait for starts in progress) all
   * found the slots free, so none told the other processes, whose workers then sat idle until
   * their poll.
   */
  private promised = 0;
  /** Slots held for starts that may claim their run at once (`reserve`). */
  private reserved = 0;
  /** A stop waiting for the starts holding slots (`reserved`) to be done with them. */
  private startsSettled: (() => void) | undefined;

  constructor(
    private readonly runtime: Runtime,
    private readonly settings: RuntimeSettings,
    private readonly logger: Logger,
  ) {}

  /** Runs executing here now. */
  get size(): number {
    return this.active.size;
  }

  async start(): Promise<void> {
    this.running = true;
    this.stopListening = await this.runtime.queue.listen({
      wake: () => this.nudge(),
      cancel: (runId) => this.active.get(runId)?.abort.abort(new RunCancelled(runId)),
      // Cancels may have been lost with the connection: a renewal finds them.
      gap: () => void this.renew(),
      canClaim: () => {
        if (!this.hasFreeSlot()) return false;
        this.promised++;
        return true;
      },
      reserve: () => this.reserve(),
    });
    this.renewTimer = setInterval(() => void this.renew(), Math.max(500, Math.floor(this.settings.leaseMs / 3)));
    this.loop = this.run();
  }

  private stopped: Promise<void> | undefined;
  /** The stop was told not to wait out the drain timeout (`hurry`), and how to tell a drain under way. */
  private hurried = false;
  private cutDrain: (() => void) | undefined;

  /** Cut a stop's drain short: the runs still executing are handed back now (a second Ctrl-C). */
  hurry(): void {
    this.hurried = true;
    this.cutDrain?.();
  }

  /** Stop (once: the server's close calls it at its start, its clean-up again). */
  stop(): Promise<void> {
    this.stopped ??= this.drainAndStop();
    return this.stopped;
  }

  private async drainAndStop(): Promise<void> {
    this.running = false;
    this.runtime.queue.admissions.release();
    this.nudge();
    await this.loop;
    clearInterval(this.renewTimer);
    await this.stopListening?.();
    // Starts being recorded as the stop began, with a slot held here: each leaves its run in the
    // queue (`release`) or puts back the run it claimed (`adopt`).
    const starts = this.reserved === 0 ? Promise.resolve() : new Promise<void>((resolve) => (this.startsSettled = resolve));
    // Let current runs finish (their clients are still reading) for up to the drain timeout, then
    // stop them and hand them back to the queue, as a sweep hands back the runs of a worker that
    // died: another worker (or this one's next start) continues each from its last checkpoint.
    // Their streams here end without the run's end; clients join again with Last-Event-ID.
    const all = Promise.all([...this.active.values()].map((a) => a.done));
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), this.settings.drainTimeoutMs);
      this.cutDrain = () => resolve('late');
      if (this.hurried) resolve('late');
    });
    if ((await Promise.race([Promise.all([all, starts]), late])) === 'late') {
      for (const [id, a] of this.active) a.abort.abort(new RunHandedBack(id));
      await all;
    }
    clearTimeout(timer);
    await this.renewing;
    await Promise.all(this.finishing);
  }

  /**
   * Hold a free slot for a start: its statement records the run claimed by this worker when it can
   * run at once (RunLifecycle.createOnThread), and `adopt` executes it, so the run needs no claim.
   */
  private reserve(): StartSlot | undefined {
    if (!this.hasFreeSlot()) return undefined;
    this.reserved++;
    let held = true;
    let adopted = false;
    const free = (): boolean => {
      if (!held) return false;
      held = false;
      this.reserved--;
      if (this.reserved === 0) this.startsSettled?.();
      return true;
    };
    return {
      workerId: this.runtime.queue.workerId,
      leaseMs: this.settings.leaseMs,
      adopt: (run) => {
        if (!held || adopted) return;
        adopted = true;
        if (this.running) {
          free();
          this.execute(run, true);
          return;
        }
        // Stopping meanwhile (the start was being recorded when the stop began): the run is put back
        // in the queue at once, for any worker, rather than held here until its lease expires. The
        // stop waits for this (its slot stays held until then).
        const putBack = this.runtime.queue
          .unclaim(run, this.runtime.hub.notice(run.id))
          .then((queued) => {
            if (queued) this.logger.info({ run_id: run.id, thread_id: run.threadId }, 'run accepted as the server began stopping: put back in the queue for another worker');
          })
          .catch((error: unknown) => this.logger.error({ err: error, run_id: run.id }, 'putting back a run accepted as the server began stopping failed (another worker takes it once its lease expires)'))
          .finally(() => {
            free();
            this.finishing.delete(putBack);
          });
        this.finishing.add(putBack);
      },
      release: () => {
        // After `adopt`, the slot is the run's (or its putting back's) to free.
        if (!adopted && free() && this.mayHaveWaiting) this.nudge();
      },
    };
  }

  /** Running, with a slot neither executing, promised to a woken claim, nor held for a start. */
  private hasFreeSlot(): boolean {
    return this.running && this.active.size + this.promised + this.reserved < this.settings.workerConcurrency;
  }

  /** The runs executing here and not yet settled. */
  private executingIds(): string[] {
    return [...this.active].filter(([, a]) => !a.settled).map(([id]) => id);
  }

  /** Extend the leases of the runs executing here; stop those this worker no longer holds. */
  renew(): Promise<void> {
    this.renewing ??= (async () => {
      try {
        // A run already settled here is no longer held by anyone: not lost, just finishing up.
        const lost = await this.runtime.queue.renew(this.executingIds());
        for (const runId of lost) {
          const a = this.active.get(runId);
          if (!a || a.settled || a.abort.signal.aborted) continue;
          this.logger.warn({ run_id: runId }, 'run no longer held by this worker (cancelled or taken back); stopping it');
          a.abort.abort(new RunCancelled(runId));
        }
      } catch (error) {
        this.logger.warn({ err: error }, 'lease renewal failed');
      } finally {
        this.renewing = undefined;
      }
    })();
    return this.renewing;
  }

  private nudge(): void {
    this.pendingWake = true;
    this.wake?.();
  }

  private async run(): Promise<void> {
    let nextSweep = 0;
    while (this.running) {
      if (Date.now() >= nextSweep) {
        nextSweep = Date.now() + Math.max(500, Math.floor(this.settings.leaseMs / 3));
        await this.sweep();
      }
      // Starts being accepted here go first (their streams' first event); bounded, see Admissions.
      await this.runtime.queue.admissions.idle();
      if (!this.running) break;
      const free = this.settings.workerConcurrency - this.active.size - this.reserved;
      let claimed: ClaimedRun[] = [];
      this.pendingWake = false;
      if (free > 0) {
        this.mayHaveWaiting = false;
        const promisedBefore = this.promised;
        try {
          claimed = await this.runtime.queue.claim(free);
        } catch (error) {
          this.mayHaveWaiting = true;
          this.logger.error({ err: error }, 'claiming runs failed');
        }
        // The runs taken now hold their slots themselves. A claim that left slots free took every run
        // announced before it; those announced during it stay promised (the next claim takes them).
        const during = this.promised - promisedBefore;
        this.promised = (claimed.length < free ? 0 : Math.max(0, promisedBefore - claimed.length)) + during;
        if (claimed.length === free) this.mayHaveWaiting = true;
        for (const run of claimed) {
          // Another process's sweep handed back a run still executing here, and this process claimed
          // it again: the older attempt stops first (its settle no longer matches the attempt), so
          // two writers never share the run's event log.
          const stale = this.active.get(run.id);
          if (stale) {
            stale.abort.abort(new RunCancelled(run.id));
            // Stopping meanwhile: the run keeps its lease until it expires, then a sweep hands it on.
            void stale.done.then(() => this.running && this.execute(run));
          } else this.execute(run);
        }
      } else this.mayHaveWaiting = true;
      if (claimed.length > 0 && claimed.length === free) continue;
      if (this.pendingWake || !this.running) continue;
      await new Promise<void>((resolve) => {
        // Woken by announcements; the poll is the safety net, and the sweep keeps its own pace.
        const timer = setTimeout(resolve, Math.max(0, Math.min(this.settings.pollMs ?? POLL_MS, nextSweep - Date.now())));
        this.wake = () => {
          clearTimeout(timer);
          this.wake = undefined;
          resolve();
        };
      });
    }
  }

  /** Delete the checkpoints of `run` when a rollback deleted its row (RunService.rollBack). */
  private async forgetIfRolledBack(run: ClaimedRun): Promise<void> {
    const { rowCount } = await this.runtime.deps.pool.query('SELECT 1 FROM runs WHERE id = $1', [run.id]);
    if (rowCount === 0) await rollbackRunCheckpoints(this.runtime.deps.pool, run.threadId, run.id);
  }

  /** Execute a claimed run; `afterStarts`: claimed by its start, it begins once the starts in progress are accepted. */
  private execute(run: ClaimedRun, afterStarts = false): void {
    const abort = new AbortController();
    const log = this.logger.child({ run_id: run.id, thread_id: run.threadId });
    let writer: RunEventWriter | undefined;
    const metrics = this.runtime.deps.metrics;
    if (run.attempt === 1 && run.waitedSeconds !== undefined) metrics?.queueWait.observe(run.waitedSeconds);
    const claimedAt = performance.now();
    let handlers: BaseCallbackHandler[] = [];
    let unfence: (() => void) | undefined;
    const done = (async () => {
      // Starts go before executions (src/runtime/admissions.ts), as for runs the loop claims.
      if (afterStarts) await this.runtime.queue.admissions.idle();
      // The log holds the run's `metadata` (written when it was accepted) and, for a retried run,
      // what earlier attempts stored. Written under this attempt's lease: once a sweep has handed the
      // run on (this process stalled past its lease), its events are refused and the run stops here.
      const lease = { workerId: this.runtime.queue.workerId, attempt: run.attempt };
      const opened = this.runtime.hub.openWriter(run.id, run.lastSeq, lease);
      writer = opened;
      // Its checkpoints too: a stalled attempt must not fork the thread's state under the next one.
      unfence = this.runtime.storage.checkpointer.fence(run.id, lease);
      // The log cannot be written: stop the run (it fails with the reason) rather than go on unrecorded.
      opened.onFailure = (error) => abort.abort(error);
      const egress = this.runtime.deps.egress;
      const execute = (): ReturnType<typeof executeRun> => executeRun({
        run,
        writer: opened,
        agent: () => this.runtime.agentFor(run.workspaceId, run.agentId, run.revision),
        usageModel: () => this.runtime.usageModel(run.workspaceId, run.agentId, run.revision),
        callbacks: async (agent) => {
          // Without an agent (it could not be built), the failure's trace names it from its tree.
          const described = agent ? { agentName: agent.agentName, modelName: agent.modelName } : await this.describeAgent(run);
          handlers = await runCallbacks(this.runtime.callbackFactories, {
            run,
            ...described,
            droppedTools: agent?.dropped,
            cancelled: () => abort.signal.reason instanceof RunCancelled,
          });
          return handlers;
        },
        signal: abort.signal,
        recursionLimit: this.settings.recursionLimit,
        durability: this.settings.checkpointDurability,
        deadlines: this.settings.deadlines,
      });
      const outcome = await (egress ? egress.scope(execute) : execute());
      // Undefined once every event is in the log; else why it could not be written.
      const unwritten = await opened.flush().then(
        () => undefined,
        (error: unknown) => error as Error,
      );
      if (abort.signal.reason instanceof RunHandedBack && outcome.status === 'interrupted' && (await this.handBack(run, opened, log))) {
        writer = undefined;
        return;
      }
      const final =
        unwritten && outcome.status !== 'interrupted'
          ? { ...outcome, status: 'error' as const, thread: 'error' as const, error: { code: 'run_failed', error: 'EventLogUnavailable', message: String(unwritten.message) } }
          : outcome;
      // The statement that settles the run also tells subscribers in other processes that it ended.
      // When the log could not be written, it also ends the log with the run's error, so that every
      // stream of the run says how it ended.
      const lastEvent = opened.failure && final.status === 'error' && final.error ? { event: 'error', json: JSON.stringify(final.error) } : undefined;
      const { settled, threadHeld } = await this.runtime.queue.settle(run, final, this.runtime.hub.notice(run.id), lastEvent);
      const entry = this.active.get(run.id);
      if (entry) entry.settled = true;
      // Rolled back while it ran (its row deleted): a step it was still writing is deleted too.
      if (!settled) await this.forgetIfRolledBack(run);
      // Another run of this thread waits for this one (enqueued): claim it now.
      if (threadHeld) this.mayHaveWaiting = true;
      metrics?.runsFinished.inc({ status: final.status });
      metrics?.runDuration.observe({ status: final.status }, (performance.now() - claimedAt) / 1000);
      // A cancelled run was already settled by whoever cancelled it.
      if (!settled && final.status !== 'interrupted') log.warn('run was taken from this worker before it finished');
      if (final.status === 'error' || final.status === 'timeout') {
        log.warn({ error: final.error }, 'run failed');
        log.debug({ err: final.cause }, 'run failure details');
      }
      await opened.end({ notified: true }).catch(() => {});
      writer = undefined;
    })()
      .catch((error: unknown) => {
        // Settling failed (the database?): the run stays `running` until its lease expires and a
        // sweep retries or fails it; local subscribers are released now and fall back to the table.
        log.error({ err: error }, 'run execution crashed');
        return writer?.end().catch(() => {});
      })
      .finally(() => {
        unfence?.();
        this.active.delete(run.id);
        if (this.mayHaveWaiting || !this.running) this.nudge();
        // The trace's last write, off the run's path: the run's stream has ended and its slot is
        // free; a read of the trace waits for it (TracingService.traceWriting). A stop waits for it too.
        const finishing = settleCallbacks(handlers).finally(() => this.finishing.delete(finishing));
        this.finishing.add(finishing);
      });
    this.active.set(run.id, { run, abort, done });
  }

  /**
   * Hand back `run`, stopped here unfinished because this process is stopping (RunLifecycle.handBack),
   * and close its log here: its streams in this process end, and the next attempt appends to the log.
   * A run that used its attempts is failed instead, its log ended with the error as a sweep ends it.
   * False when the run was no longer this worker's to hand back (cancelled meanwhile): it settles as
   * any stopped run does.
   */
  private async handBack(run: ClaimedRun, log: RunEventWriter, logger: Logger): Promise<boolean> {
    const entry = this.active.get(run.id);
    if (entry) entry.settled = true;
    const { handedBack, failed } = await this.runtime.queue.handBack(run, this.settings.maxAttempts ?? 3, this.runtime.hub.notice(run.id));
    if (!handedBack && !failed) {
      if (entry) entry.settled = false;
      return false;
    }
    if (failed) {
      // Failed by the statement above, which cleared the lease: nobody else writes its log now.
      log.fence = undefined;
      log.append({ kind: 'error', data: { code: 'run_lease_expired', error: 'LeaseExpired', message: 'the worker running this run stopped and the run used its attempts; start a new run' } });
      logger.warn('run failed: its worker stopped and it used its attempts');
    } else {
      logger.warn('run handed back to the queue (the server is shutting down): another worker continues it');
    }
    await log.end().catch(() => {});
    return true;
  }

  /** The name and model of a run's agent read from its tree (the agent could not be built); what is known. */
  private async describeAgent(run: ClaimedRun): Promise<{ agentName?: string | undefined; modelName: string }> {
    try {
      const tree = await this.runtime.deps.agents.loadTree(run.workspaceId, run.agentId, run.revision);
      return { agentName: tree.definition.name, modelName: tree.definition.runtime.model.model_id };
    } catch {
      return { modelName: 'unknown' };
    }
  }

  /**
   * Hand back (or fail) runs whose worker died: every process sweeps, and SKIP LOCKED keeps two
   * sweepers from touching one run. A failed run's event log is closed with the reason.
   */
  private async sweep(): Promise<void> {
    try {
      // Not the runs executing here: a late renewal of our own (a busy event loop) is not a lost
      // worker, and handing such a run back would let this process claim it a second time.
      const { retried, failed } = await this.runtime.queue.sweepExpired(this.settings.maxAttempts ?? 3, this.executingIds(), this.runtime.hub.channel);
      if (retried > 0) {
        this.logger.warn({ retried }, 'runs of a lost worker were handed back to the queue');
        this.nudge();
      }
      for (const expired of failed) {
        // Still executing here (this process was too slow to renew): stop it; its own writer closes
        // the log with the error, so no second writer races it for sequence numbers.
        const local = this.active.get(expired.id);
        if (local) {
          local.abort.abort(new Error('the run lost its lease (this worker could not renew it in time)'));
          continue;
        }
        const writer = this.runtime.hub.openWriter(expired.id, await this.lastSeq(expired.id));
        writer.append({ kind: 'error', data: { code: 'run_lease_expired', error: 'LeaseExpired', message: 'the worker running this run stopped (its lease expired); start a new run' } });
        await writer.end().catch(() => {});
        this.logger.warn({ run_id: expired.id, thread_id: expired.threadId }, 'run failed: its lease expired');
      }
    } catch (error) {
      this.logger.error({ err: error }, 'sweeping expired runs failed');
    }
  }

  private async lastSeq(runId: string): Promise<number> {
    const { rows } = await this.runtime.deps.pool.query<{ seq: number | null }>('SELECT max(seq) AS seq FROM run_events WHERE run_id = $1', [runId]);
    return Number(rows[0]?.seq ?? 0);
  }
}
