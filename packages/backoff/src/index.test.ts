import { describe, expect, it } from 'vitest';
import { exponentialDelay, fullJitterDelay } from './index.ts';

describe('exponentialDelay', () => {
  it('doubles from the base and stops at the cap', () => {
    expect([0, 1, 2, 3, 4, 5].map((n) => exponentialDelay(n, 200, 5000))).toEqual([200, 400, 800, 1600, 3200, 5000]);
  });
  it('treats a negative attempt as the first, and a huge one as the cap (no Infinity, no NaN)', () => {
    expect(exponentialDelay(-3, 200, 5000)).toBe(200);
    expect(exponentialDelay(10_000, 1, 86_400_000)).toBe(86_400_000);
  });
});

describe('fullJitterDelay', () => {
  it('is a whole number in [0, the exponential delay)', () => {
    expect(fullJitterDelay(3, 200, 5000, () => 0)).toBe(0);
    expect(fullJitterDelay(3, 200, 5000, () => 0.999999)).toBe(1599);
    expect(fullJitterDelay(9, 200, 5000, () => 0.5)).toBe(2500);
  });
});
