import { replayLine, runSeed } from './simulator.ts';

/** Seeds `make test` runs on every run (CI included), in SEED_SHARDS test files so vitest spreads them over cores. */
export const SEEDS_PER_RUN = 5000;
export const SEED_SHARDS = 4;

/** The seeds [from, to) of shard `i` (0-based). */
export function seedShard(i: number): { from: number; to: number } {
  const size = Math.ceil(SEEDS_PER_RUN / SEED_SHARDS);
  return { from: i * size, to: Math.min(SEEDS_PER_RUN, (i + 1) * size) };
}

/** Runs seeds [from, to) and returns one report line per failing seed (with its replay command). */
export function failingSeeds(from: number, to: number): string[] {
  const failures: string[] = [];
  for (let seed = from; seed < to; seed++) {
    const r = runSeed(seed);
    if (!r.ok) failures.push(`seed ${seed}: ${r.errors.slice(0, 3).join('; ')}\n${replayLine(seed)}`);
  }
  return failures;
}
