// The run event log and its live fan-out. The process executing a run appends events: subscribers in
// the same process get them at once, and batches are written to `run_events` (what a reconnecting
// client replays). Subscribers in other processes are woken by PostgreSQL NOTIFY and read the table.
import type pg from 'pg';
import type { Logger } from '../../logging.js';
import type { Metrics } from '../../metrics.js';
import { eventName, type RunEvent, type StoredEvent } from './types.js';

const CHANNEL = 'hangar_run_events';

/** Wake-ups across processes; an interface so that Redis pub/sub could replace PostgreSQL NOTIFY. */
export interface EventSignal {
  /** Tell other processes that `runId` has new events (or ended). */
  notify(runId: string): Promise<void>;
  /** Call `onRun` whenever some process notified about a run. */
  listen(onRun: (runId: string) => void): Promise<void>;
  close(): Promise<void>;
}

/** NOTIFY/LISTEN on one dedicated connection. */
export function postgresSignal(pool: pg.Pool, logger: Logger): EventSignal {
  let listener: pg.PoolClient | undefined;
  return {
    async notify(runId) {
      await pool.query('SELECT pg_notify($1, $2)', [CHANNEL, runId]);
    },
    async listen(onRun) {
      listener = await pool.connect();
      listener.on('notification', (msg) => {
        if (msg.channel === CHANNEL && msg.payload) onRun(msg.payload);
      });
      listener.on('error', (error) => logger.warn({ err: error }, 'run event listener connection failed'));
      await listener.query(`LISTEN ${CHANNEL}`);
    },
    async close() {
      if (!listener) return;
      await listener.query(`UNLISTEN ${CHANNEL}`).catch(() => {});
      // Close the connection rather than pool it: it carries the listener's error handler, which
      // would report the database's own shutdown as a failure.
      listener.release(true);
      listener = undefined;
    },
  };
}

interface Listener {
  onEvent(event: StoredEvent): void;
  /** Something may have been written by another process (or the run ended there). */
  onPoke(): void;
  onEnd(): void;
}

/** Appends the events of one run being executed here. */
export class RunEventWriter {
  private readonly events: StoredEvent[] = [];
  private unflushed: StoredEvent[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  /** When the oldest event not yet handed to a flush was appended (for the write-lag metric). */
  private unflushedSince = 0;

  constructor(
    private readonly hub: RunEventHub,
    readonly runId: string,
    private seq: number,
  ) {
    this.written = seq;
  }

  /**
   * Append an event: written to the log within the flush interval, and delivered to local subscribers
   * once written, so that no client ever sees an event a crash could lose from the log (a client
   * reconnecting with Last-Event-ID after a crash must find everything it saw).
   */
  append(event: RunEvent): StoredEvent {
    const stored: StoredEvent = { seq: ++this.seq, event: eventName(event), data: event.data, json: JSON.stringify(event.data) };
    this.events.push(stored);
    if (this.unflushed.length === 0) this.unflushedSince = performance.now();
    this.unflushed.push(stored);
    if (this.unflushed.length >= 500) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), this.hub.flushIntervalMs);
    return stored;
  }

  /** Written events after `seq` still held in memory (every written event of the run while it executes here). */
  since(seq: number): StoredEvent[] {
    return this.events.filter((e) => e.seq > seq && e.seq <= this.written);
  }

  /** The last sequence number written to the log (and delivered); events before this writer count as written. */
  private written = 0;

  /** Write what is buffered to `run_events` and wake other processes. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.unflushed;
    const since = this.unflushedSince;
    this.unflushed = [];
    this.flushing = this.flushing.then(async () => {
      if (batch.length === 0) return;
      await this.hub.store(this.runId, batch);
      this.hub.metrics?.eventLogWriteLag.observe((performance.now() - since) / 1000);
      this.written = batch.at(-1)!.seq;
      for (const l of this.hub.listenersOf(this.runId)) for (const e of batch) l.onEvent(e);
    });
    return this.flushing;
  }

  /** Flush, then tell every subscriber the run's stream is over. */
  async end(): Promise<void> {
    await this.flush();
    this.hub.closeWriter(this);
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

  constructor(
    private readonly pool: pg.Pool,
    private readonly signal: EventSignal,
    private readonly logger: Logger,
    readonly flushIntervalMs = 25,
    readonly pollIntervalMs = 5_000,
  ) {}

  /** Start listening for other processes' events. */
  async start(): Promise<void> {
    await this.signal.listen((runId) => {
      if (this.writers.has(runId)) return; // our own notification
      for (const l of this.listenersOf(runId)) l.onPoke();
    });
  }

  async stop(): Promise<void> {
    await this.signal.close();
  }

  /** Open the log of a run this process is about to execute; `lastSeq` is the last id already stored. */
  openWriter(runId: string, lastSeq: number): RunEventWriter {
    const writer = new RunEventWriter(this, runId, lastSeq);
    this.writers.set(runId, writer);
    return writer;
  }

  /** @internal */
  closeWriter(writer: RunEventWriter): void {
    if (this.writers.get(writer.runId) === writer) this.writers.delete(writer.runId);
    for (const l of this.listenersOf(writer.runId)) l.onEnd();
    void this.signal.notify(writer.runId).catch((error: unknown) => this.logger.warn({ err: error }, 'notify failed'));
  }

  /** @internal */
  listenersOf(runId: string): Set<Listener> {
    return this.listeners.get(runId) ?? new Set();
  }

  /** @internal Insert a batch into the log and wake other processes. */
  async store(runId: string, batch: StoredEvent[]): Promise<void> {
    try {
      // Four array parameters instead of four per row: one statement shape, cheap to bind.
      await this.pool.query(
        `INSERT INTO run_events (run_id, seq, event, data)
         SELECT $1::uuid, s, e, d FROM unnest($2::bigint[], $3::text[], $4::text[]) AS t(s, e, d)
         ON CONFLICT DO NOTHING`,
        [runId, batch.map((e) => e.seq), batch.map((e) => e.event), batch.map((e) => e.json ?? JSON.stringify(e.data))],
      );
      // Not awaited: subscribers elsewhere also look at the table every few seconds.
      this.signal.notify(runId).catch((error: unknown) => this.logger.warn({ err: error }, 'notify failed'));
    } catch (error) {
      // Live subscribers already have these events; a replay would miss them, so say so loudly.
      this.logger.error({ err: error, run_id: runId, events: batch.length }, 'could not write run events');
    }
  }

  /** Stored events of a run after `afterSeq`, in order. */
  async readStored(runId: string, afterSeq: number): Promise<StoredEvent[]> {
    const { rows } = await this.pool.query<{ seq: number; event: string; data: string }>(
      'SELECT seq, event, data FROM run_events WHERE run_id = $1 AND seq > $2 ORDER BY seq',
      [runId, afterSeq],
    );
    // The stored text goes on the wire as it is; `data` is parsed only if someone reads it.
    return rows.map((r) => lazyEvent(Number(r.seq), r.event, r.data));
  }

  /**
   * Every event of `runId` after `afterSeq`, then live ones until the run ends. `isOver` says, from
   * the database, whether the run has finished (used when its executor is in another process).
   */
  async *subscribe(runId: string, afterSeq: number, isOver: () => Promise<boolean>, signal?: AbortSignal): AsyncGenerator<StoredEvent> {
    let cursor = afterSeq;
    const pending: StoredEvent[] = [];
    let ended = false;
    let poked = true; // read the table once at the start
    let wake: (() => void) | undefined;
    const nudge = () => {
      wake?.();
      wake = undefined;
    };
    const listener: Listener = {
      onEvent: (e) => {
        pending.push(e);
        nudge();
      },
      onPoke: () => {
        poked = true;
        nudge();
      },
      onEnd: () => {
        ended = true;
        nudge();
      },
    };
    let set = this.listeners.get(runId);
    if (!set) this.listeners.set(runId, (set = new Set()));
    set.add(listener);
    // Registered first, then the in-memory snapshot: nothing falls between the two.
    const local = this.writers.get(runId);
    if (local) {
      pending.push(...local.since(cursor));
      poked = false;
    }
    // A safety net for a lost notification: look at the table now and then.
    const safety = setInterval(() => listener.onPoke(), this.pollIntervalMs);
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
          pending.push(...(await this.readStored(runId, cursor)));
        }
        pending.sort((a, b) => a.seq - b.seq);
        while (pending.length > 0) {
          const e = pending.shift()!;
          if (e.seq <= cursor) continue;
          cursor = e.seq;
          yield e;
        }
        if (ended) {
          if (signal?.aborted) return;
          // The writer flushed before ending: anything not seen live is in the table.
          for (const e of await this.readStored(runId, cursor)) {
            cursor = e.seq;
            yield e;
          }
          return;
        }
        if (!this.writers.has(runId) && !poked && (await isOver())) {
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
