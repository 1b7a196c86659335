// The SSE writer of run streams: frames stored events, sends `: heartbeat` comments while idle, and
// stops reading (without stopping the run) when the client goes away.
import { frame, HEARTBEAT, type StoredEvent } from '../runtime/events/types.js';

/** A `text/event-stream` response over `events(signal)`; aborting `signal` means the client left. */
export function sseResponse(options: {
  events: (signal: AbortSignal) => AsyncIterable<StoredEvent>;
  heartbeatMs: number;
  headers?: Record<string, string>;
  /** Called when the client goes away before the stream ended (`on_disconnect: "cancel"`). */
  onClientGone?: () => void;
}): Response {
  const left = new AbortController();
  const encoder = new TextEncoder();
  let timer: NodeJS.Timeout | undefined;
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      let lastWrite = Date.now();
      const write = (text: string) => {
        if (left.signal.aborted) return;
        lastWrite = Date.now();
        controller.enqueue(encoder.encode(text));
      };
      timer = setInterval(() => {
        if (Date.now() - lastWrite >= options.heartbeatMs) write(HEARTBEAT);
      }, Math.max(50, Math.floor(options.heartbeatMs / 2)));
      try {
        for await (const event of options.events(left.signal)) write(frame(event));
      } catch (error) {
        // The stream's source failed (not the run): say so in the stream's own terms.
        write(frame({ seq: 0, event: 'error', data: { error: 'StreamError', message: error instanceof Error ? error.message : String(error) } }));
      } finally {
        clearInterval(timer);
        if (!left.signal.aborted) controller.close();
      }
    },
    cancel() {
      clearInterval(timer);
      left.abort();
      options.onClientGone?.();
    },
  });
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
