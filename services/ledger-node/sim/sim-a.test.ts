import { describe, expect, it } from 'vitest';
import { failingSeeds } from './sim-seeds.ts';

// 500 seeds are split over two files so that vitest runs them on both cores.
describe('deterministic simulation, seeds 0–249', () => {
  it('safety, seals and liveness hold', { timeout: 300_000 }, () => {
    const failures = failingSeeds(0, 250);
    expect(failures, failures.join('\n')).toEqual([]);
  });
});
