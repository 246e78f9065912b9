// When a validator's next comparison pass starts: at its own place in every poll interval, so that n validators
// look at the brokers at n evenly spaced moments rather than all at once.
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { EARLY_SWEEP_MIN_GAP_MS, FULL_SWEEP_EVERY, nextPassAt, PassScheduler, sweepKind } from './pass-schedule.ts';
import { newPassResult } from './status.ts';

describe('nextPassAt', () => {
  it("is the first start of the node's slot at or after now", () => {
    expect(nextPassAt(12_300, 10_000, 0.25)).toBe(12_500);
    expect(nextPassAt(12_500, 10_000, 0.25)).toBe(12_500);
    expect(nextPassAt(12_501, 10_000, 0.25)).toBe(22_500);
    expect(nextPassAt(12_300, 10_000, 0)).toBe(20_000);
    expect(nextPassAt(20_000, 10_000, 0)).toBe(20_000);
    // Out-of-range phases are clamped: 1 is the same place as 0.
    expect(nextPassAt(12_300, 10_000, 1)).toBe(20_000);
    expect(nextPassAt(12_300, 10_000, -3)).toBe(20_000);
  });

  it('never lies in the past nor more than one interval ahead, and always at the phase', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 45 }),
        fc.integer({ min: 1, max: 600_000 }),
        fc.double({ min: 0, max: 0.999, noNaN: true }),
        (now, poll, phase) => {
          const at = nextPassAt(now, poll, phase);
          expect(at).toBeGreaterThanOrEqual(now);
          expect(at - now).toBeLessThan(poll);
          expect(at % poll).toBe(Math.floor(phase * poll) % poll);
        },
      ),
      { numRuns: 2000, seed: 3 },
    );
  });

  it('four validators at phases 0, 1/4, 2/4, 3/4: a change at any moment waits at most a quarter interval', () => {
    for (let change = 0; change < 20_000; change += 137) {
      const firstLook = Math.min(...[0, 0.25, 0.5, 0.75].map((p) => nextPassAt(change, 10_000, p)));
      expect(firstLook - change).toBeLessThanOrEqual(2500);
    }
  });
});

describe('sweepKind', () => {
  const state = { subscribe: true, fullSweepWanted: false, sweepsSinceFull: 0 };
  const ready = () => true;

  it('is what was asked for, else full in poll mode, when wanted, or every FULL_SWEEP_EVERY-th sweep', () => {
    expect(sweepKind('incremental', { ...state, subscribe: false }, ready)).toBe('incremental');
    expect(sweepKind('full', state, ready)).toBe('full');
    expect(sweepKind(undefined, { ...state, subscribe: false }, ready)).toBe('full');
    expect(sweepKind(undefined, { ...state, fullSweepWanted: true }, ready)).toBe('full');
    const kinds = Array.from({ length: FULL_SWEEP_EVERY }, (_, n) =>
      sweepKind(undefined, { ...state, sweepsSinceFull: n }, ready),
    );
    expect(kinds).toEqual([...Array(FULL_SWEEP_EVERY - 1).fill('incremental'), 'full']);
  });

  it('is full while some broker cannot be read incrementally, and asks only when it matters', () => {
    expect(sweepKind(undefined, state, () => false)).toBe('full');
    const never = () => {
      throw new Error('not asked');
    };
    expect(sweepKind(undefined, { ...state, fullSweepWanted: true }, never)).toBe('full');
  });
});

describe('PassScheduler', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(0);
  });
  afterEach(() => vi.useRealTimers());

  /** A scheduler at `phase` of a 10 s interval whose passes take 100 ms (`skipped` when the node is not ready). */
  function setup(phase = 0.25) {
    const starts: number[] = [];
    let skipped = false;
    let busy = false;
    const scheduler = new PassScheduler({
      intervalMs: 10_000,
      subscribe: true,
      ports: { phase: () => phase },
      now: Date.now,
      log: undefined,
      pass: async () => {
        starts.push(Date.now());
        await new Promise((resolve) => setTimeout(resolve, 100));
        return { ...newPassResult('full', Date.now()), ...(skipped ? { skipped: 'not_synced' as const } : {}) };
      },
      busy: () => busy,
    });
    return {
      scheduler,
      starts,
      skip: (v: boolean) => (skipped = v),
      setBusy: (v: boolean) => (busy = v),
    };
  }

  it('passes at once, then at its place in every interval; a skipped pass is tried again a second later', async () => {
    const { scheduler, starts, skip } = setup();
    scheduler.start();
    await vi.advanceTimersByTimeAsync(100);
    expect(starts).toEqual([0]);
    expect(scheduler.nextPassAt).toBe(2500);
    await vi.advanceTimersByTimeAsync(12_500);
    expect(starts).toEqual([0, 2500, 12_500]);
    skip(true);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(starts).toEqual([0, 2500, 12_500, 22_500]);
    await vi.advanceTimersByTimeAsync(1100);
    expect(starts.at(-1)).toBe(23_600);
    scheduler.stop();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(starts.at(-1)).toBe(23_600);
  });

  it('sweeps early on request, at most once per EARLY_SWEEP_MIN_GAP_MS, and the next sweep is then full', async () => {
    const { scheduler, starts, setBusy } = setup(0);
    scheduler.start();
    await vi.advanceTimersByTimeAsync(1000);
    scheduler.ended('full');
    expect(scheduler.kind(undefined, () => true)).toBe('incremental');
    scheduler.sweepSoon('test');
    expect(scheduler.kind(undefined, () => true)).toBe('full');
    expect(scheduler.nextPassAt).toBe(EARLY_SWEEP_MIN_GAP_MS);
    await vi.advanceTimersByTimeAsync(EARLY_SWEEP_MIN_GAP_MS - 1000);
    expect(starts).toEqual([0, EARLY_SWEEP_MIN_GAP_MS]);
    await vi.advanceTimersByTimeAsync(100);
    scheduler.began('full');
    expect(scheduler.kind(undefined, () => true)).toBe('incremental');
    // While a pass runs, a request only marks the next sweep full.
    setBusy(true);
    scheduler.sweepSoon('test');
    expect(scheduler.nextPassAt).toBe(10_000);
    expect(scheduler.kind(undefined, () => true)).toBe('full');
    scheduler.stop();
  });
});
