// When a validator's next comparison pass starts: at its own place in every poll interval, so that n validators
// look at the brokers at n evenly spaced moments rather than all at once.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nextPassAt } from './pass-schedule.ts';

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
