import { describe, expect, it } from 'vitest';
import { failingSeeds } from './sim-seeds.ts';

describe('deterministic simulation, seeds 250–499', () => {
  it('safety, seals and liveness hold', { timeout: 300_000 }, () => {
    const failures = failingSeeds(250, 500);
    expect(failures, failures.join('\n')).toEqual([]);
  });
});
