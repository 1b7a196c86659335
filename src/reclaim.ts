// Giving back the memory of a burst. After a load ends, V8 keeps the garbage of the burst and the heap
// it grew for it until allocation starts again: an idle server then sits at its peak memory (measured
// by `npm run bench:load`: heap used 128 MB before a 1,000-run burst, 512 MB fifteen seconds after it,
// with nothing running). So when this thread has been idle for a whole interval (event-loop
// utilisation under 2%) and its heap holds at least `thresholdMb` more than after the last collection,
// it runs one full collection, which frees the garbage and lets V8 return the emptied pages. Busy
// threads are never interrupted: the check costs one sample per interval.
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
  /** Heap used now, bytes (process.memoryUsage by default; tests give their own). */
  heapUsed?: () => number;
  /** The full collection (Node's by default). */
  collect?: () => void;
}): BackgroundTask {
  const heapUsed = options.heapUsed ?? (() => process.memoryUsage().heapUsed);
  const intervalMs = options.intervalMs ?? 5_000;
  let timer: NodeJS.Timeout | undefined;
  let gc: (() => void) | undefined;
  let baseline = heapUsed();
  let last = performance.eventLoopUtilization();
  const check = () => {
    const now = performance.eventLoopUtilization();
    const idle = performance.eventLoopUtilization(now, last).utilization < 0.02;
    last = now;
    const used = heapUsed();
    if (!idle || used - baseline < options.thresholdMb * 1_048_576) {
      baseline = Math.min(baseline, used);
      return;
    }
    gc ??= options.collect ?? fullCollection();
    gc();
    const after = heapUsed();
    options.onCollect?.(Math.round((used - after) / 1_048_576));
    baseline = after;
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
