// The SSE writer: it reads its source only as fast as the client takes frames (so a slow client
// costs a few frames of memory, not the whole run), heartbeats while idle, reports a client that
// left, and gives its stream slot back however the stream ended.
import { describe, expect, it } from 'vitest';
import { HangarError } from '../core/errors.js';
import type { StoredEvent } from '../runtime/events/types.js';
import { sseResponse, StreamSlots } from './sse.js';

function source(total: number, pulled: { n: number }) {
  return async function* (): AsyncGenerator<StoredEvent> {
    for (let i = 1; i <= total; i++) {
      pulled.n = i;
      yield { seq: i, event: 'values', data: { i } };
    }
  };
}

describe('sseResponse', () => {
  it('pulls from its source only as the client reads', async () => {
    const pulled = { n: 0 };
    let closed = 0;
    const res = sseResponse({ events: source(10_000, pulled), heartbeatMs: 60_000, onClose: () => closed++ });
    const reader = res.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toBe('event: values\ndata: {"i":1}\nid: 1\n\n');
    // The client stops reading: the writer stops pulling a few frames ahead.
    await new Promise((r) => setImmediate(r));
    expect(pulled.n).toBeLessThan(20);
    let frames = 1;
    for (;;) {
      const { done } = await reader.read();
      if (done) break;
      frames++;
    }
    expect(frames).toBe(10_000);
    expect(closed).toBe(1);
  });

  it('sends heartbeats while idle, and reports a client that left (once) without reading further', async () => {
    let release!: () => void;
    const idle = new Promise<void>((r) => (release = r));
    let gone = 0;
    let closed = 0;
    const res = sseResponse({
      events: async function* () {
        await idle;
        yield { seq: 1, event: 'values', data: {} };
      },
      heartbeatMs: 20,
      onClientGone: () => gone++,
      onClose: () => closed++,
    });
    const reader = res.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe(': heartbeat\n\n');
    await reader.cancel();
    release();
    expect(gone).toBe(1);
    expect(closed).toBe(1);
  });

  it('turns a failing source into an error event and closes', async () => {
    const res = sseResponse({
      events: async function* () {
        yield* [];
        throw new Error('database went away');
      },
      heartbeatMs: 60_000,
    });
    const text = await res.text();
    expect(text).toContain('event: error\ndata: {"error":"StreamError","message":"database went away"}');
  });
});

describe('StreamSlots', () => {
  it('refuses beyond its capacity with stream_capacity_reached, and takes slots back once', () => {
    const slots = new StreamSlots(2);
    const a = slots.acquire();
    slots.acquire();
    expect(() => slots.acquire()).toThrow(HangarError);
    try {
      slots.acquire();
    } catch (error) {
      expect((error as HangarError).code).toBe('stream_capacity_reached');
    }
    a();
    a();
    expect(slots.size).toBe(1);
    slots.acquire();
    expect(slots.size).toBe(2);
  });
});
