/**
 * `npm run sim -w @scriptorium/ledger-node -- --seed=N [--verbose]` replays one seed;
 * `-- --seeds=A..B [--jobs=J]` runs a range on J worker threads (default: the machine's parallelism).
 * Exit code 1 when any seed fails.
 */
import { availableParallelism } from 'node:os';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { replayLine, runSeed } from './simulator.ts';

interface Args {
  from: number;
  to: number;
  verbose: boolean;
  jobs: number;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { from: 0, to: 99, verbose: false, jobs: availableParallelism() };
  for (const arg of argv) {
    const one = /^--seed=(\d+)$/.exec(arg);
    const range = /^--seeds=(\d+)\.\.(\d+)$/.exec(arg);
    const jobs = /^--jobs=(\d+)$/.exec(arg);
    if (one) args.from = args.to = Number(one[1]);
    else if (range) {
      args.from = Number(range[1]);
      args.to = Number(range[2]);
    } else if (jobs) args.jobs = Math.max(1, Number(jobs[1]));
    else if (arg === '--verbose' || arg === '-v') args.verbose = true;
    else {
      console.error(`unknown argument ${arg}; use --seed=N, --seeds=A..B, --jobs=J, --verbose`);
      process.exit(2);
    }
  }
  return args;
}

/** Runs seeds `from, from + step, …` up to `to`; reports one line per seed. */
function runShard(
  from: number,
  to: number,
  step: number,
  report: (line: { seed: number; text: string; ok: boolean }) => void,
) {
  for (let seed = from; seed <= to; seed += step) {
    const r = runSeed(seed);
    const text = r.ok
      ? `seed ${seed} ok: ${r.scenario.validators} validators, ${r.scenario.twins} twin(s), heights ${r.stats.heightAtHeal} → ${Math.min(...r.stats.finalHeights)}, max round ${r.stats.maxRound}`
      : `seed ${seed} FAILED:\n  ${r.errors.join('\n  ')}\n${replayLine(seed)}`;
    report({ seed, text, ok: r.ok });
  }
}

if (!isMainThread) {
  const { from, to, step } = workerData as { from: number; to: number; step: number };
  runShard(from, to, step, (line) => parentPort?.postMessage(line));
} else {
  const args = parseArgs(process.argv.slice(2));
  const started = performance.now();
  const total = args.to - args.from + 1;
  let failed = 0;
  const print = (line: { text: string; ok: boolean }) => {
    if (!line.ok) failed++;
    if (!line.ok || args.verbose || total === 1) console.log(line.text);
  };
  if (total === 1) {
    const r = runSeed(args.from, { verbose: args.verbose });
    if (args.verbose) {
      for (const line of r.log) console.log(line);
      console.log(JSON.stringify({ scenario: r.scenario, stats: r.stats }, null, 2));
    }
    runShard(args.from, args.to, 1, print);
  } else {
    const jobs = Math.min(args.jobs, total);
    await Promise.all(
      Array.from(
        { length: jobs },
        (_, j) =>
          new Promise<void>((resolve, reject) => {
            const worker = new Worker(new URL(import.meta.url), {
              workerData: { from: args.from + j, to: args.to, step: jobs },
            });
            worker.on('message', print);
            worker.on('error', reject);
            worker.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`worker exited ${code}`))));
          }),
      ),
    );
  }
  const secs = ((performance.now() - started) / 1000).toFixed(1);
  console.log(`${total - failed}/${total} seeds passed in ${secs}s`);
  process.exit(failed > 0 ? 1 : 0);
}
