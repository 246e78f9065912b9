/**
 * `npm run sim -w @scriptorium/ledger-node -- --seed=N [--verbose]` replays one seed;
 * `-- --seeds=A..B` runs a range. Exit code 1 when any seed fails.
 */
import { replayLine, runSeed } from './simulator.ts';

function parseArgs(argv: string[]) {
  let from = 0;
  let to = 99;
  let verbose = false;
  for (const arg of argv) {
    const one = /^--seed=(\d+)$/.exec(arg);
    const range = /^--seeds=(\d+)\.\.(\d+)$/.exec(arg);
    if (one) from = to = Number(one[1]);
    else if (range) {
      from = Number(range[1]);
      to = Number(range[2]);
    } else if (arg === '--verbose' || arg === '-v') verbose = true;
    else {
      console.error(`unknown argument ${arg}; use --seed=N, --seeds=A..B, --verbose`);
      process.exit(2);
    }
  }
  return { from, to, verbose };
}

const { from, to, verbose } = parseArgs(process.argv.slice(2));
let failed = 0;
const started = performance.now();
for (let seed = from; seed <= to; seed++) {
  const r = runSeed(seed, { verbose: verbose && from === to });
  if (verbose && from === to) {
    for (const line of r.log) console.log(line);
    console.log(JSON.stringify({ scenario: r.scenario, stats: r.stats }, null, 2));
  }
  if (!r.ok) {
    failed++;
    console.log(`seed ${seed} FAILED:\n  ${r.errors.join('\n  ')}\n${replayLine(seed)}`);
  } else if (from === to || verbose) {
    console.log(
      `seed ${seed} ok: ${r.scenario.validators} validators, ${r.scenario.twins} twin(s), heights ${r.stats.heightAtHeal} → ${Math.min(...r.stats.finalHeights)}, max round ${r.stats.maxRound}`,
    );
  }
}
const secs = ((performance.now() - started) / 1000).toFixed(1);
console.log(`${to - from + 1 - failed}/${to - from + 1} seeds passed in ${secs}s`);
process.exit(failed > 0 ? 1 : 0);
