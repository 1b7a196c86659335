// The run event log and its live fan-out. The process executing a run appends events; one flusher per
// process writes what every run appended to `run_events` in one statement as soon as the previous one
// returned (group commit: a single round trip of latency when idle, few large statements under load)
// and, once written, hands the events to local subscribers, so that no client ever sees an event a
// crash could lose from the log. Subscribers in other processes are woken through the notification
// bus (the NOTIFY rides in the same statement) and read the table; after a gap in the bus they re-read.
import type { NotificationBus } from '../../db/bus.js';
import type pg from 'pg';
import { isConnectionLost, reconnecting } from '../../db/reconnect.js';
import type { Logger } from '../../logging.js';
import type { Metrics } from '../../metrics.js';
import { eventName, type RunEvent, type StoredEvent } from './types.js';

const CHANNEL = 'hangar_run_events';

/** Limits of the hub (defaults in brackets). */
export interface HubLimits {
  /** Written events each run keeps in memory for subscribers joining late [256]. */
  keepEvents?: number;
  /** Events a slow subscriber may have waiting before it re-reads from the table instead [1024]. */
  subscriberBuffer?: number;
  /**
   * Attempts at writing a batch before the runs in it fail [6]: backing off from 50 ms to 1 s, about
   * 3 s in all, as long as the other statements of a run wait for a lost database connection.
   */
  writeAttempts?: number;
  /**
   * Safety-net poll of the table by each subscriber, ms [30000]. Rarely needed: the bus wakes every
   * subscriber after a gap, so this only covers a notification lost on a live connection; with
   * 1,000 queued streams a short poll would cost hundreds of queries a second.
   */
  pollIntervalMs?: number;
}

/**
 * What happens to the logs written by a hub, in order, for another thread of the process to mirror
 * (the executor thread tells the main thread, whose streams then need no table reads).
 */
export type MirrorOp =
  | { op: 'open'; runId: string; lastSeq: number }
  | { op: 'wrote'; runs: { runId: string; events: [seq: number, event: string, json: string][] }[] }
  | { op: 'close'; runId: string; lastSeq: number; failed?: boolean; lost?: boolean };

/**
 * A watch on a run about to be created (`RunEventHub.watch`): whether anything about it reached this
 * process (an event, a poke, its end, or a gap of the bus) before its stream subscribed.
 */
export interface RunWatch {
  /** True once anything was heard (or the watch lapsed): the stream must then check the table. */
  readonly spoiled: boolean;
  /** Stop watching (the subscriber took over, or the run was not created). */
  release(): void;
}

interface Listener {
  onEvent(event: StoredEvent): void;
  /** Something may have been written by another process (or the run ended there). */
  onPoke(): void;
  /**
   * The run's writer here closed; every event up to `lastSeq` was written (and handed to `onEvent`).
   * Undefined when the writer could not finish the log: the rest (the run's error) is in the table.
   */
  onEnd(lastSeq: number | undefined): void;
}

/** The event log could not be written: the run must not go on (replays would miss events). */
export class EventLogUnavailable extends Error {
  constructor(runId: string, cause: unknown) {
    // Not the database's own words (they name its database, host or user): the cause stays for the logs.
    const why = isConnectionLost(cause) ? 'the database could not be reached' : cause instanceof Error ? cause.message : String(cause);
    super(`the event log of run ${runId} could not be written: ${why}`, { cause });
    this.name = 'EventLogUnavailable';
  }
}

/**
 * The run's lease no longer belongs to the writer's attempt (a sweep handed the run on after the
 * lease expired, or it was settled): its events are refused, so that a stalled worker writing late
 * never mixes its events into the log of the next attempt.
 */
export class RunLeaseLost extends EventLogUnavailable {
  constructor(runId: string) {
    super(runId, new Error('the run is no longer held by this worker (its lease expired and the run was handed on)'));
    this.name = 'RunLeaseLost';
  }
}

/** Whose lease a writer's events are written under: refused once the run's lease is another's. */
export interface WriterFence {
  workerId: string;
  attempt: number;
}

/** Appends the events of one run being executed here. */
export class RunEventWriter {
  /** Written events, the last `keepEvents` of them. */
  private readonly kept: StoredEvent[] = [];
  /** @internal Appended, not yet handed to the flusher. */
  unflushed: StoredEvent[] = [];
  /** @internal When the oldest unflushed event was appended (for the write-lag metric). */
  unflushedSince = 0;
  private readonly waiters: { seq: number; resolve: () => void; reject: (e: unknown) => void }[] = [];
  /** The last sequence number written to the log (and delivered); events before this writer count as written. */
  private written: number;
  /** Set once the log could not be written; every later flush rejects with it. */
  failure: EventLogUnavailable | undefined;
  /** Called once when the log cannot be written (the worker stops the run). */
  onFailure: ((error: EventLogUnavailable) => void) | undefined;

  constructor(
    private readonly hub: RunEventHub,
    readonly runId: string,
    private seq: number,
    /** A mirror of a writer on another thread: fed by `RunEventHub.applyMirror`, never appended to. */
    readonly mirrored = false,
    /**
     * The lease the events are written under (`RunEventHub.openWriter`); undefined for a log closed by
     * whoever failed the run (no lease any more, and nobody else writes it).
     */
    public fence: WriterFence | undefined = undefined,
  ) {
    this.written = seq;
  }

  /** Append an event: written with the next flush, delivered to local subscribers once written. */
  append(event: RunEvent): StoredEvent {
    const stored: StoredEvent = { seq: ++this.seq, event: eventName(event), data: event.data, json: JSON.stringify(event.data) };
    if (this.failure) return stored; // the run is being stopped; nothing more reaches the log
    if (this.unflushed.length === 0) this.unflushedSince = performance.now();
    this.unflushed.push(stored);
    this.hub.schedule(this);
    return stored;
  }

  /**
   * Written events after `seq` still held in memory; undefined when some of them are no longer held
   * (the subscriber reads the table instead).
   */
  since(seq: number): StoredEvent[] | undefined {
    const first = this.kept[0];
    if (seq < this.written && (!first || first.seq > seq + 1)) return undefined;
    return this.kept.filter((e) => e.seq > seq);
  }

  /** Resolves once every event appended so far is in the log (rejects if it cannot be written). */
  flush(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.written >= this.seq) return Promise.resolve();
    const target = this.seq;
    return new Promise((resolve, reject) => this.waiters.push({ seq: target, resolve, reject }));
  }

  /** The last sequence number written to the log. */
  get lastWritten(): number {
    return this.written;
  }

  /**
   * Flush, then tell every subscriber the run's stream is over. `notified`: the run's end was
   * already announced to other processes (its settling statement carried the NOTIFY of `notice`).
   */
  async end(options: { notified?: boolean } = {}): Promise<void> {
    try {
      await this.flush();
    } finally {
      this.hub.closeWriter(this, !options.notified);
    }
  }

  /** @internal The flusher wrote `batch` (this run's events, in order). */
  wrote(batch: StoredEvent[], keep: number): void {
    this.written = batch.at(-1)!.seq;
    this.kept.push(...batch);
    if (this.kept.length > keep) this.kept.splice(0, this.kept.length - keep);
    for (const l of this.hub.listenersOf(this.runId)) for (const e of batch) l.onEvent(e);
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      const w = this.waiters[i]!;
      if (w.seq <= this.written) {
        this.waiters.splice(i, 1);
        w.resolve();
      }
    }
  }

  /** @internal The flusher gave up on this run's events. */
  failed(error: EventLogUnavailable): void {
    if (this.failure) return;
    this.failure = error;
    this.unflushed = [];
    for (const w of this.waiters.splice(0)) w.reject(error);
    this.onFailure?.(error);
  }
}

/** A stored event whose `data` is parsed from `json` on first use. */
function lazyEvent(seq: number, event: string, json: string): StoredEvent {
  let parsed: unknown;
  let done = false;
  return {
    seq,
    event,
    json,
    get data() {
      if (!done) {
        parsed = JSON.parse(json);
        done = true;
      }
      return parsed;
    },
  };
}

/** Per-process fan-out of run events, backed by the `run_events` table. */
export class RunEventHub {
  /** Where event-log write lags are recorded, if anywhere. */
  metrics: Metrics | undefined;
  private readonly listeners = new Map<string, Set<Listener>>();
  private readonly writers = new Map<string, RunEventWriter>();
  private readonly dirty = new Set<RunEventWriter>();
  private flushing = false;
  private stopBus: (() => Promise<void>) | undefined;
  readonly limits: Required<HubLimits>;
  /** Batches written, and events in them (for benchmarks and tests). */
  readonly stats = { batches: 0, events: 0, failures: 0 };
  /** Told what this hub's writers do, for a mirror on another thread (set by the executor thread). */
  mirrorTo: ((op: MirrorOp) => void) | undefined;

  constructor(
    private readonly pool: pg.Pool,
    private readonly bus: NotificationBus | undefined,
    private readonly logger: Logger,
    limits: HubLimits = {},
    /** Where subscribers read the log (a stream's first read must not queue behind event writes); `pool` without. */
    private readonly readPool: pg.Pool = pool,
  ) {
    this.limits = { keepEvents: 256, subscriberBuffer: 1024, writeAttempts: 6, pollIntervalMs: 30_000, ...limits };
  }

  /** Start listening for other processes' events. */
  async start(): Promise<void> {
    if (!this.bus) return;
    this.stopBus = await this.bus.subscribe(CHANNEL, {
      onMessage: (payload) => {
        for (const runId of payload.split(',')) {
          if (this.writers.has(runId)) continue; // our own notification
          for (const l of this.listenersOf(runId)) l.onPoke();
        }
      },
      // Notifications may have been lost: every subscriber re-reads the table.
      onGap: () => {
        for (const set of this.listeners.values()) for (const l of set) l.onPoke();
      },
    });
  }

  async stop(): Promise<void> {
    await this.stopBus?.();
  }

  /**
   * Open the log of a run this process is about to execute; `lastSeq` is the last id already stored.
   * `fence`: the worker and attempt holding the run's lease; each batch is written only while the
   * run's row still says so (else the writer fails with RunLeaseLost). Without it (a log closed by
   * whoever failed the run), events are written unconditionally.
   */
  openWriter(runId: string, lastSeq: number, fence?: WriterFence): RunEventWriter {
    const writer = new RunEventWriter(this, runId, lastSeq, false, fence);
    this.writers.set(runId, writer);
    this.mirrorTo?.({ op: 'open', runId, lastSeq });
    return writer;
  }

  /**
   * Follow the writers of another thread of this process (`mirrorTo` there): their runs' subscribers
   * here get events as from a local writer, once written, without reading the table.
   */
  applyMirror(op: MirrorOp): void {
    if (op.op === 'open') {
      this.writers.set(op.runId, new RunEventWriter(this, op.runId, op.lastSeq, true));
    } else if (op.op === 'wrote') {
      for (const run of op.runs) {
        const writer = this.writers.get(run.runId);
        if (writer?.mirrored) writer.wrote(run.events.map(([seq, event, json]) => lazyEvent(seq, event, json)), this.limits.keepEvents);
      }
    } else {
      const writer = this.writers.get(op.runId);
      if (writer?.mirrored) this.closeWriter(writer, false, op.failed === true, op.lost === true);
    }
  }

  /**
   * The other thread is gone: its runs are not over (a sweep retries them), so their subscribers
   * here go back to the table and the bus instead of ending.
   */
  dropMirrors(): void {
    for (const [runId, writer] of this.writers) {
      if (!writer.mirrored) continue;
      this.writers.delete(runId);
      for (const l of this.listenersOf(runId)) l.onPoke();
    }
  }

  /**
   * The run's state changed outside its writer (cancelled while queued, deleted by a rollback): its
   * subscribers here and in other processes re-read the table and the run's status.
   */
  async poke(runId: string): Promise<void> {
    for (const l of this.listenersOf(runId)) l.onPoke();
    await this.bus?.notify(CHANNEL, runId);
  }

  /** Runs whose events are being written by this process. */
  get activeWriters(): number {
    return this.writers.size;
  }

  /**
   * The NOTIFY that tells the run's subscribers in every process to read its log and status again,
   * for a statement that wrote them outside a writer to carry: the settle (then `end({ notified: true
   * })` sends none of its own) and a run put back in the queue.
   */
  notice(runId: string): { channel: string; payload: string } {
    return { channel: CHANNEL, payload: runId };
  }

  /** The channel of `notice`: a run id on it tells the run's subscribers everywhere to read on. */
  get channel(): string {
    return CHANNEL;
  }

  /** Set by `endStreams`: streams here end after what is stored. */
  private streamsEnded = false;

  /**
   * The server is stopping: every stream of this process ends once it has sent what is stored of
   * its run, without the run's end when the run goes on elsewhere (its client joins again, on
   * another process, with Last-Event-ID); streams that subscribe later end the same way.
   */
  endStreams(): void {
    this.streamsEnded = true;
    for (const set of this.listeners.values()) for (const l of [...set]) l.onEnd(undefined);
  }

  /**
   * @internal `failed`: the writer could not finish the log (for a mirror, its thread's writer could
   * not). `lost`: it lost the run's lease (the run was handed on and goes on elsewhere).
   */
  closeWriter(writer: RunEventWriter, notify = true, failed = writer.failure !== undefined, lost = writer.failure instanceof RunLeaseLost): void {
    if (this.writers.get(writer.runId) === writer) this.writers.delete(writer.runId);
    if (!writer.mirrored) this.mirrorTo?.({ op: 'close', runId: writer.runId, lastSeq: writer.lastWritten, ...(failed ? { failed } : {}), ...(lost ? { lost } : {}) });
    // The run goes on elsewhere (its lease was handed on): its subscribers here follow it there,
    // through the table and the bus, as when the run executes in another process.
    if (lost) for (const l of this.listenersOf(writer.runId)) l.onPoke();
    // A log this writer could not finish is finished by the run's settle: subscribers read the table.
    else for (const l of this.listenersOf(writer.runId)) l.onEnd(failed ? undefined : writer.lastWritten);
    if (notify) this.bus?.notify(CHANNEL, writer.runId).catch((error: unknown) => this.logger.warn({ err: error }, 'notify failed'));
  }

  /** @internal */
  listenersOf(runId: string): Set<Listener> {
    return this.listeners.get(runId) ?? new Set();
  }

  /** @internal A writer has unflushed events: write them with the next batch. */
  schedule(writer: RunEventWriter): void {
    this.dirty.add(writer);
    if (this.flushing) return;
    this.flushing = true;
    // Events appended in the same turn of the event loop go together.
    setImmediate(() => void this.flushLoop());
  }

  private async flushLoop(): Promise<void> {
    try {
      while (this.dirty.size > 0) {
        const batch: { writer: RunEventWriter; events: StoredEvent[] }[] = [];
        let oldest = Infinity;
        for (const w of this.dirty) {
          if (w.unflushed.length > 0 && !w.failure) {
            batch.push({ writer: w, events: w.unflushed });
            oldest = Math.min(oldest, w.unflushedSince);
          }
          w.unflushed = [];
        }
        this.dirty.clear();
        if (batch.length === 0) continue;
        const refused = await this.write(batch);
        if (refused) {
          this.metrics?.eventLogWriteLag.observe((performance.now() - oldest) / 1000);
          this.settleBatch(batch, refused);
          continue;
        }
        // One statement failed: write each run on its own, so one bad run (deleted, say) does not
        // fail the others.
        await Promise.all(
          batch.map(async (b) => {
            const alone = batch.length > 1 ? await this.write([b]) : undefined;
            if (alone) this.settleBatch([b], alone);
            else this.giveUp(b.writer, b.events.length);
          }),
        );
      }
    } finally {
      this.flushing = false;
      if (this.dirty.size > 0) this.schedule([...this.dirty][0]!);
    }
  }

  /**
   * A batch's statement returned: its runs' events are written and handed on, except those of the
   * runs in `refused` (their lease is another's): nothing of theirs was written, and their writers fail.
   */
  private settleBatch(batch: { writer: RunEventWriter; events: StoredEvent[] }[], refused: ReadonlySet<string>): void {
    const written = refused.size === 0 ? batch : batch.filter((b) => !refused.has(b.writer.runId));
    for (const b of written) b.writer.wrote(b.events, this.limits.keepEvents);
    if (written.length > 0) this.mirrorWrote(written);
    for (const b of batch) {
      if (!refused.has(b.writer.runId)) continue;
      this.logger.warn({ run_id: b.writer.runId, events: b.events.length }, 'run events refused: the run is no longer held by this worker (its lease expired and it was handed on); the run is stopped here');
      b.writer.failed(new RunLeaseLost(b.writer.runId));
    }
  }

  private mirrorWrote(batch: { writer: RunEventWriter; events: StoredEvent[] }[]): void {
    if (!this.mirrorTo) return;
    this.mirrorTo({
      op: 'wrote',
      runs: batch.map((b) => ({ runId: b.writer.runId, events: b.events.map((e) => [e.seq, e.event, e.json ?? JSON.stringify(e.data)] as [number, string, string]) })),
    });
  }

  private lastError: unknown;

  /**
   * Insert `batch` (retrying with backoff), with the NOTIFY of its runs in the same statement. The
   * events of a fenced writer are inserted only while the run's row holds that worker's lease for
   * that attempt (for a cancelled run, a lease not yet expired), checked under a `FOR KEY SHARE` lock of the row taken before they are inserted: a
   * sweep handing the run on (which locks it `FOR UPDATE SKIP LOCKED`) either skips the run until
   * this statement is done, or has handed it on first and this statement then refuses its events.
   * So no late event of a stalled worker follows the sweep's `pending` in the log. Returns the runs
   * whose events were refused, or undefined when the batch could not be written.
   */
  private async write(batch: { writer: RunEventWriter; events: StoredEvent[] }[]): Promise<Set<string> | undefined> {
    const runIds: string[] = [];
    const seqs: number[] = [];
    const names: string[] = [];
    const data: string[] = [];
    const fenced: string[] = [];
    const owners: string[] = [];
    const attempts: number[] = [];
    const open: string[] = [];
    for (const b of batch) {
      const fence = b.writer.fence;
      if (fence) {
        fenced.push(b.writer.runId);
        owners.push(fence.workerId);
        attempts.push(fence.attempt);
      } else open.push(b.writer.runId);
      for (const e of b.events) {
        runIds.push(b.writer.runId);
        seqs.push(e.seq);
        names.push(e.event);
        data.push(e.json ?? JSON.stringify(e.data));
      }
    }
    const notice = batch.map((b) => b.writer.runId).join(',');
    for (let attempt = 1; ; attempt++) {
      try {
        // Array parameters instead of four per row: one statement shape, cheap to bind.
        const { rows } = await this.pool.query<{ held: string[] | null }>(
          `WITH held AS MATERIALIZED (
             SELECT r.id FROM runs r
             JOIN unnest($6::uuid[], $7::text[], $8::int[]) AS f(id, owner, attempt) ON r.id = f.id AND r.lease_owner = f.owner AND r.attempt = f.attempt
             -- A cancelled run's worker writes on only while its lease holds the thread (\`stopping\` in
             -- src/core/runs/lifecycle.ts): once expired, the thread's next run may be executing.
             WHERE r.status = 'running' OR r.lease_expires_at > now()
             FOR KEY SHARE OF r
           ), ins AS (
             INSERT INTO run_events (run_id, seq, event, data)
             SELECT r, s, e, d FROM unnest($1::uuid[], $2::bigint[], $3::text[], $4::text[]) AS t(r, s, e, d)
             WHERE t.r = ANY($9::uuid[]) OR t.r IN (SELECT id FROM held)
             ON CONFLICT DO NOTHING
           )
           SELECT pg_notify('${CHANNEL}', $5), (SELECT array_agg(id::text) FROM held) AS held`,
          [runIds, seqs, names, data, notice.length < 7900 ? notice : '', fenced, owners, attempts, open],
        );
        this.stats.batches++;
        this.stats.events += seqs.length;
        const held = new Set(rows[0]?.held ?? []);
        return new Set(fenced.filter((id) => !held.has(id)));
      } catch (error) {
        this.lastError = error;
        this.stats.failures++;
        if (attempt >= this.limits.writeAttempts || isPermanent(error)) {
          this.logger.warn({ err: error, runs: batch.length, events: seqs.length, attempt }, 'could not write run events');
          return undefined;
        }
        await new Promise((resolve) => setTimeout(resolve, Math.min(1_000, 50 * 4 ** (attempt - 1))));
      }
    }
  }

  private giveUp(writer: RunEventWriter, events: number): void {
    this.logger.error({ err: this.lastError, run_id: writer.runId, events }, 'run events could not be written; the run is stopped');
    writer.failed(new EventLogUnavailable(writer.runId, this.lastError));
  }

  /** Stored events of a run after `afterSeq`, in order. */
  async readStored(runId: string, afterSeq: number): Promise<StoredEvent[]> {
    const { rows } = await this.readPool.query<{ seq: number; event: string; data: string }>(
      'SELECT seq, event, data FROM run_events WHERE run_id = $1 AND seq > $2 ORDER BY seq',
      [runId, afterSeq],
    );
    // The stored text goes on the wire as it is; `data` is parsed only if someone reads it.
    return rows.map((r) => lazyEvent(Number(r.seq), r.event, r.data));
  }

  /**
   * Watch `runId` before the statement that creates it, for `ttlMs`: a stream that subscribes with
   * the watch unspoiled knows nothing happened to the run in between (every end, cancel and gap
   * reaches this hub's listeners), so its first status read is not needed. One statement less per
   * streamed start, which is what a burst of starts queues on.
   */
  watch(runId: string, ttlMs = 10_000): RunWatch {
    let spoiled = false;
    let released = false;
    const spoil = () => void (spoiled = true);
    const listener: Listener = { onEvent: spoil, onPoke: spoil, onEnd: spoil };
    let set = this.listeners.get(runId);
    if (!set) this.listeners.set(runId, (set = new Set()));
    set.add(listener);
    const release = () => {
      if (released) return;
      released = true;
      spoiled = true;
      clearTimeout(timer);
      const current = this.listeners.get(runId);
      current?.delete(listener);
      if (current?.size === 0) this.listeners.delete(runId);
    };
    const timer = setTimeout(release, ttlMs);
    timer.unref();
    return {
      get spoiled() {
        return spoiled;
      },
      release,
    };
  }

  /**
   * Every event of `runId` after `afterSeq`, then live ones until the run ends. `isOver` says, from
   * the database, whether the run has finished (used when its executor is in another process).
   * `watch`: the run's watch from before it was created (see `watch`).
   */
  async *subscribe(
    runId: string,
    afterSeq: number,
    isOver: () => Promise<boolean>,
    signal?: AbortSignal,
    /** The log's first events when the caller knows them (a run it just created): not read again. */
    known: readonly StoredEvent[] = [],
    watch?: RunWatch,
  ): AsyncGenerator<StoredEvent> {
    let cursor = afterSeq;
    // Reads are repeated over a lost connection for up to 30 s (a restarted or failed-over database):
    // the stream waits, with its heartbeats, and goes on.
    const retry = { retries: 1_000, withinMs: 30_000, ...(signal ? { signal } : {}) };
    const stored = (after: number) => reconnecting(() => this.readStored(runId, after), retry);
    const over = () => reconnecting(isOver, retry);
    let pending: StoredEvent[] = [];
    let ended = false;
    /** The last event the local writer wrote, once it closed: nothing after it is in the table. */
    let endSeq: number | undefined;
    let poked = true; // read the table once at the start
    let wake: (() => void) | undefined;
    const nudge = () => {
      wake?.();
      wake = undefined;
    };
    const buffer = this.limits.subscriberBuffer;
    const listener: Listener = {
      onEvent: (e) => {
        // A subscriber that does not keep up drops its copies and reads the table when it is ready.
        if (pending.length >= buffer) {
          pending = [];
          poked = true;
        } else pending.push(e);
        nudge();
      },
      onPoke: () => {
        poked = true;
        nudge();
      },
      onEnd: (lastSeq) => {
        ended = true;
        endSeq = lastSeq;
        nudge();
      },
    };
    let set = this.listeners.get(runId);
    if (!set) this.listeners.set(runId, (set = new Set()));
    set.add(listener);
    if (this.streamsEnded) ended = true;
    // Registered first, then the in-memory snapshot: nothing falls between the two. Events the
    // caller knows (contiguous from the cursor) need no read either.
    let knownUpTo = cursor;
    for (const e of known) {
      if (e.seq !== knownUpTo + 1) break;
      pending.push(e);
      knownUpTo = e.seq;
    }
    const writer = this.writers.get(runId);
    const local = writer ? writer.since(knownUpTo) : knownUpTo > cursor ? [] : undefined;
    if (local) {
      pending.push(...local);
      poked = false;
    }
    // Registered before the watch lets go: nothing heard about the run falls between the two.
    let skipStatusRead = watch !== undefined && !watch.spoiled;
    watch?.release();
    // A safety net for a lost notification: look at the table now and then.
    const safety = setInterval(() => listener.onPoke(), this.limits.pollIntervalMs);
    const onAbort = () => {
      ended = true;
      nudge();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      for (;;) {
        if (signal?.aborted) return;
        if (poked) {
          poked = false;
          pending.push(...(await stored(cursor)));
        }
        if (pending.length > 1) pending.sort((a, b) => a.seq - b.seq);
        while (pending.length > 0) {
          const batch = pending;
          pending = [];
          for (const e of batch) {
            if (e.seq <= cursor) continue;
            // A gap (events dropped for a slow subscriber): read the table first.
            if (e.seq > cursor + 1) {
              for (const s of await stored(cursor)) {
                cursor = s.seq;
                yield s;
              }
              if (e.seq <= cursor) continue;
            }
            cursor = e.seq;
            yield e;
          }
        }
        if (ended) {
          if (signal?.aborted) return;
          // Every event the writer here wrote was handed over live: nothing more to read.
          if (endSeq !== undefined && cursor >= endSeq && !poked) return;
          // The writer flushed before ending: anything not seen live is in the table.
          for (const e of await stored(cursor)) {
            cursor = e.seq;
            yield e;
          }
          return;
        }
        if (skipStatusRead) {
          // Nothing happened to the run since before it was created: it is not over.
          skipStatusRead = false;
        } else if (!this.writers.has(runId) && !poked && (await over())) {
          ended = true;
          continue;
        }
        await new Promise<void>((resolve) => {
          wake = resolve;
          if (pending.length > 0 || poked || ended) nudge();
        });
      }
    } finally {
      clearInterval(safety);
      signal?.removeEventListener('abort', onAbort);
      set.delete(listener);
      if (set.size === 0) this.listeners.delete(runId);
    }
  }
}

/** Errors a retry cannot fix (the run was deleted: foreign key; bad data). */
function isPermanent(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('23') || code.startsWith('22'));
}
