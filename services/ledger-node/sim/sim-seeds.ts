import { replayLine, runSeed } from './simulator.ts';

/** Runs seeds [from, to) and returns one report line per failing seed (with its replay command). */
export function failingSeeds(from: number, to: number): string[] {
  const failures: string[] = [];
  for (let seed = from; seed < to; seed++) {
    const r = runSeed(seed);
    if (!r.ok) failures.push(`seed ${seed}: ${r.errors.slice(0, 3).join('; ')}\n${replayLine(seed)}`);
  }
  return failures;
}
