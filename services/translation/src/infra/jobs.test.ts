import { describe, expect, it } from 'vitest';
import { backoffMs } from './jobs.ts';

describe('job backoff', () => {
  it('doubles from the base per attempt and is capped at a day', () => {
    expect([1, 2, 3, 4].map((a) => backoffMs(a, 30_000))).toEqual([30_000, 60_000, 120_000, 240_000]);
    expect(backoffMs(40, 30_000)).toBe(86_400_000);
    expect(backoffMs(0, 1000)).toBe(1000);
  });
});
