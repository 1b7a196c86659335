// The idle reclaimer: a full collection once the thread is idle and holds much garbage, never while
// it works. Node's real collection is checked on real garbage; the decision on given heap readings.
import { describe, expect, it } from 'vitest';
import { fullCollection, idleReclaimer } from './reclaim.js';

/** About `mb` MB of objects, all held until the end, then dropped. */
function makeGarbage(mb: number): number {
  const held: { i: number; j: number; s: string }[][] = [];
  for (let i = 0; i < mb; i++) held.push(Array.from({ length: 16_384 }, (_, j) => ({ i, j, s: `x${j}` })));
  return held.length;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const MB = 1_048_576;

/** A reclaimer with a 64 MB threshold, checking every 100 ms, on given heap readings and collection. */
function onReadings(heap: () => { used: number; total: number }, collect: () => void) {
  // A test worker is not as quiet as an idle server (its runner talks to it): count up to half as idle.
  return idleReclaimer({ thresholdMb: 64, intervalMs: 100, idleUtilization: 0.5, heap, collect });
}

describe('idle reclaimer', () => {
  it("Node's full collection is reachable without --expose-gc and frees dropped objects", () => {
    makeGarbage(64);
    const withGarbage = process.memoryUsage().heapUsed;
    fullCollection()();
    expect(withGarbage - process.memoryUsage().heapUsed).toBeGreaterThan(32 * MB);
  });

  it('an idle thread holding garbage above the threshold gets one collection; below it, none', async () => {
    let used = 100 * MB;
    let total = 120 * MB;
    const collected: number[] = [];
    const task = onReadings(
      () => ({ used, total }),
      () => {
        collected.push(used);
        used = 110 * MB; // what survives
        total = 130 * MB;
      },
    );
    await task.start();
    try {
      used = 150 * MB; // 50 MB above the baseline: under the threshold
      total = 170 * MB;
      await sleep(500);
      expect(collected).toEqual([]);
      used = 400 * MB;
      total = 420 * MB;
      for (let i = 0; i < 50 && collected.length === 0; i++) await sleep(50);
      expect(collected).toEqual([400 * MB]);
      // The new baseline is what survived: nothing more until garbage grows past the threshold again.
      await sleep(500);
      expect(collected).toHaveLength(1);
      // V8 collected the objects itself but kept the pages it grew: that is worth a collection too.
      used = 120 * MB;
      total = 300 * MB;
      for (let i = 0; i < 50 && collected.length === 1; i++) await sleep(50);
      expect(collected).toEqual([400 * MB, 120 * MB]);
    } finally {
      await task.stop();
    }
  });

  it('collects again while a collection still gives back reserved pages, then stops', async () => {
    let used = 100 * MB;
    let total = 120 * MB;
    // What each collection leaves: the objects go at once, the reserved pages only some at a time
    // (survivors spread over them), and the last collection gives back almost nothing.
    const leaves = [360, 200, 198];
    const collected: number[] = [];
    const task = onReadings(
      () => ({ used, total }),
      () => {
        collected.push(total / MB);
        used = 90 * MB;
        total = (leaves.shift() ?? total / MB) * MB;
      },
    );
    await task.start();
    try {
      used = 400 * MB;
      total = 420 * MB;
      for (let i = 0; i < 100 && collected.length < 3; i++) await sleep(50);
      // 420 → 360 (still far above the 120 MB baseline): again; 360 → 200: again; 200 → 198: done.
      expect(collected).toEqual([420, 360, 200]);
      await sleep(500);
      expect(collected).toHaveLength(3);
    } finally {
      await task.stop();
    }
  });

  it('a busy thread is not interrupted, and 0 turns it off', async () => {
    const collected: string[] = [];
    let used = 100 * MB;
    const heap = () => ({ used, total: used });
    const busy = idleReclaimer({ thresholdMb: 1, intervalMs: 300, heap, collect: () => collected.push('busy') });
    const off = idleReclaimer({ thresholdMb: 0, intervalMs: 300, heap, collect: () => collected.push('off') });
    await busy.start();
    await off.start();
    try {
      used = 500 * MB;
      // Work 60 ms of every 100 ms for 2 s.
      const until = Date.now() + 2_000;
      while (Date.now() < until) {
        const stop = Date.now() + 60;
        while (Date.now() < stop) makeGarbage(1);
        await sleep(40);
      }
      expect(collected).toEqual([]);
    } finally {
      await busy.stop();
      await off.stop();
    }
  });
});
