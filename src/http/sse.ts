// The SSE writer of run streams: frames stored events, sends `: heartbeat` comments while idle, and
// stops reading (without stopping the run) when the client goes away. It pulls: the next event is
// read from the source only when the socket took the previous one, so a slow client holds at most a
// few frames here (the run's events wait in the log, not in memory). Streams are counted against the
// process's stream capacity (HANGAR_STREAM_CAPACITY), separate from the worker concurrency.
import { HangarError } from '../core/errors.js';
import { isConnectionLost } from '../db/reconnect.js';
import { frame, HEARTBEAT, type StoredEvent } from '../runtime/events/types.js';

/** The stream slots of one process. */
export class StreamSlots {
  private open = 0;

  constructor(readonly capacity: number) {}

  /** Streams open now. */
  get size(): number {
    return this.open;
  }

  /** Take a slot or throw `stream_capacity_reached`; the returned function gives it back (once). */
  acquire(): () => void {
    if (this.open >= this.capacity) {
      throw new HangarError('stream_capacity_reached', `this server already serves ${this.capacity} run streams (HANGAR_STREAM_CAPACITY); retry shortly`);
    }
    this.open++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.open--;
    };
  }
}

/** A `text/event-stream` response over `events(signal)`; aborting `signal` means the client left. */
export function sseResponse(options: {
  events: (signal: AbortSignal) => AsyncIterable<StoredEvent>;
  heartbeatMs: number;
  headers?: Record<string, string>;
  /** Called when the client goes away before the stream ended (`on_disconnect: "cancel"`). */
  onClientGone?: () => void;
  /** Called once when the stream is over, however it ended (gives a stream slot back). */
  onClose?: () => void;
}): Response {
  const left = new AbortController();
  const encoder = new TextEncoder();
  let timer: NodeJS.Timeout | undefined;
  let lastWrite = Date.now();
  let closed = false;
  const iterator = options.events(left.signal)[Symbol.asyncIterator]();
  const finish = () => {
    if (closed) return;
    closed = true;
    clearInterval(timer);
    options.onClose?.();
  };
  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        timer = setInterval(() => {
          if (closed || Date.now() - lastWrite < options.heartbeatMs) return;
          lastWrite = Date.now();
          controller.enqueue(encoder.encode(HEARTBEAT));
        }, Math.max(50, Math.floor(options.heartbeatMs / 2)));
      },
      async pull(controller) {
        if (closed) return;
        try {
          const next = await iterator.next();
          if (closed) return;
          if (next.done) {
            finish();
            controller.close();
            return;
          }
          lastWrite = Date.now();
          controller.enqueue(encoder.encode(frame(next.value)));
        } catch (error) {
          if (closed) return;
          // The stream's source failed (not the run): say so in the stream's own terms, without the
          // database's own words.
          const message = isConnectionLost(error)
            ? 'the server lost its database connection; join the stream again with Last-Event-ID to read on'
            : error instanceof Error
              ? error.message
              : String(error);
          controller.enqueue(encoder.encode(frame({ seq: 0, event: 'error', data: { error: 'StreamError', message } })));
          finish();
          controller.close();
        }
      },
      cancel() {
        const wasOpen = !closed;
        finish();
        left.abort();
        void iterator.return?.(undefined)?.catch(() => {});
        if (wasOpen) options.onClientGone?.();
      },
    },
    // A few frames may wait for the socket; beyond that the source is not read.
    { highWaterMark: 8 },
  );
  return new Response(body, {
    status: 200,
    headers: {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
      ...options.headers,
    },
  });
}
