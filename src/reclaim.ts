// Giving back the memory of a burst. After a load ends, V8 keeps the garbage of the burst and the heap
// it grew for it until allocation starts again: an idle server then sits at its peak memory (measured
// by `npm run bench:load`: heap used 128 MB before a 1,000-run burst, 512 MB fifteen seconds after it,
// with nothing running; or, when V8 did collect, 152 MB of heap reserved before and 332 MB after). So
// when this thread has been idle for a whole interval (event-loop utilisation under 5%) and its heap
// uses or reserves at least `thresholdMb` more than after the last collection, it runs a full
// collection, which frees the garbage and returns the emptied pages, and again at the next idle
// check while a collection still gives pages back. Busy threads are never interrupted: the check
// costs one sample per interval.
import v8 from 'node:v8';
import vm from 'node:vm';
import { performance } from 'node:perf_hooks';
import type { BackgroundTask } from './background.js';

/** Node's full collection, made reachable without the `--expose-gc` flag on the command line. */
export function fullCollection(): () => void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed) return exposed;
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as () => void;
}

/** Collects garbage when the thread is idle and holds much of it; `thresholdMb` 0 turns it off. */
export function idleReclaimer(options: {
  thresholdMb: number;
  intervalMs?: number;
  onCollect?: (freedMb: number) => void;
  /** The heap now, bytes used and reserved (process.memoryUsage by default; tests give their own). */
  heap?: () => { used: number; total: number };
  /** The full collection (Node's by default). */
  collect?: () => void;
  /** Event-loop utilisation over an interval below which the thread counts as idle [0.05]. */
  idleUtilization?: number;
}): BackgroundTask {
  const idleBelow = options.idleUtilization ?? 0.05;
  const heap = options.heap ?? (() => {
    const m = process.memoryUsage();
    return { used: m.heapUsed, total: m.heapTotal };
  });
  const intervalMs = options.intervalMs ?? 2_000;
  const threshold = options.thresholdMb * 1_048_576;
  let timer: NodeJS.Timeout | undefined;
  let gc: (() => void) | undefined;
  // The heap after the last collection (or at start): lower whenever V8 itself got below it.
  let base = heap();
  let last = performance.eventLoopUtilization();
  const check = () => {
    const now = performance.eventLoopUtilization();
    const idle = performance.eventLoopUtilization(now, last).utilization < idleBelow;
    last = now;
    const current = heap();
    // Garbage, or a heap V8 grew for a burst and keeps reserved after its own collections (they free
    // the objects but not the pages; a full collection releases them).
    if (!idle || (current.used - base.used < threshold && current.total - base.total < threshold)) {
      base = { used: Math.min(base.used, current.used), total: Math.min(base.total, current.total) };
      return;
    }
    gc ??= options.collect ?? fullCollection();
    gc();
    const after = heap();
    options.onCollect?.(Math.round((current.total - after.total) / 1_048_576));
    // One collection frees the garbage but may keep many pages reserved: those its survivors are
    // spread over, which each collection compacts only some of (measured: 92 MB used in 353 MB
    // reserved after a 1,000-run burst). While a collection still gives back pages (4 MB or more)
    // and the reserve stays above the threshold, the next idle check collects again; then what
    // remains is the new baseline.
    const gaveBack = current.total - after.total >= 4 * 1_048_576;
    base = gaveBack && after.total - base.total >= threshold ? { used: after.used, total: base.total } : after;
    last = performance.eventLoopUtilization();
  };
  return {
    name: 'idle-reclaimer',
    start() {
      if (options.thresholdMb <= 0) return;
      timer = setInterval(check, intervalMs);
      timer.unref();
    },
    stop() {
      clearInterval(timer);
    },
  };
}
