import { describe, expect, it } from 'vitest';
import { failingSeeds, seedShard } from './sim-seeds.ts';

const { from, to } = seedShard(3);

describe(`deterministic simulation with the production driver, seeds ${from}–${to - 1}`, () => {
  it('safety, seals, liveness and no equivocation hold', { timeout: 900_000 }, () => {
    const failures = failingSeeds(from, to);
    expect(failures, failures.join('\n')).toEqual([]);
  });
});
