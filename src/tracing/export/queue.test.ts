import { describe, expect, it } from 'vitest';
import { BatchQueue } from './queue.js';

describe('BatchQueue', () => {
  it('sends in batches of at most maxBatch, in order', async () => {
    const sent: number[][] = [];
    const q = new BatchQueue<number>({ send: async (items) => void sent.push(items), maxQueue: 100, maxBatch: 3, flushIntervalMs: 60_000 });
    q.push(1, 2, 3, 4, 5, 6, 7);
    await q.flush();
    expect(sent).toEqual([[1, 2, 3], [4, 5, 6], [7]]);
    expect({ sent: q.sent, dropped: q.dropped, queued: q.length }).toEqual({ sent: 7, dropped: 0, queued: 0 });
  });

  it('drops and counts what exceeds the bound while a send is stuck, and what a failed send carried', async () => {
    let release!: () => void;
    const stuck = new Promise<void>((resolve) => (release = resolve));
    let calls = 0;
    const q = new BatchQueue<number>({
      send: async () => {
        calls++;
        if (calls === 1) await stuck;
        else throw new Error('destination down');
      },
      maxQueue: 2,
      maxBatch: 1,
      flushIntervalMs: 60_000,
    });
    q.push(1); // goes out at once (batch full) and hangs
    expect(q.push(2, 3, 4, 5)).toBe(2); // two fit, two are dropped
    expect({ queued: q.length, dropped: q.dropped }).toEqual({ queued: 2, dropped: 2 });
    release();
    await q.flush(); // 1 is sent; 2 and 3 fail and are dropped
    expect({ sent: q.sent, dropped: q.dropped, queued: q.length }).toEqual({ sent: 1, dropped: 4, queued: 0 });
  });

  it('after close, pushes are dropped and counted', async () => {
    const q = new BatchQueue<number>({ send: async () => {}, maxQueue: 10, maxBatch: 10, flushIntervalMs: 60_000 });
    await q.close(100);
    expect(q.push(1, 2)).toBe(0);
    expect(q.dropped).toBe(2);
  });
});
