// The gate of Admissions (src/runtime/admissions.ts); its effect on the worker pool is tested end to
// end in test/runtime/admissions.test.ts.
import { describe, expect, it } from 'vitest';
import { Admissions } from './admissions.js';

/** Let pending promise jobs and I/O callbacks of this turn run. */
const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('Admissions', () => {
  it('idle() resolves at once when no start is being accepted', async () => {
    await new Admissions(600_000).idle();
  });

  it('idle() waits for every start in progress, and a second leave of one start changes nothing', async () => {
    const gate = new Admissions(600_000);
    const first = gate.enter();
    const second = gate.enter();
    let done = false;
    const waiting = gate.idle().then(() => (done = true));
    first();
    first();
    await turn();
    expect(done).toBe(false);
    expect(gate.size).toBe(1);
    second();
    await waiting;
    expect(gate.size).toBe(0);
  });

  it('is bounded: a claim waits no longer than maxDeferMs, and release() lets it go', async () => {
    const gate = new Admissions(0);
    gate.enter();
    await gate.idle(); // resolves through its bound, the start still in progress
    const held = new Admissions(600_000);
    held.enter();
    const waiting = held.idle();
    held.release();
    await waiting;
  });
});
