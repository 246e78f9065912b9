// BENCH=ledger-witness: what witnessing costs the chain, and how soon a finalized block is witnessed. N = 4 validator
// processes on loopback at 5,000 records/s offered (bench/ledger/load.ts, open loop), in pairs of runs on fresh
// clusters: without witnesses, then with two witnesses (`ledger-node witness` processes, threshold 2), alternating
// BENCH_PAIRS times (3) so the shared machine's load spreads over both. For each run: finalized records/s and
// submit-to-finality p50/p99 (the load process's, on node 0's chain); with witnesses also, per block finalized during
// the run, the time from its finality on node 0 to node 0 holding a checkpoint covering it cosigned by both witnesses
// (polled every 10 ms from GET /checkpoint/witnesses, so up to 10 ms late; the runs without witnesses are polled the
// same way, so both carry the poller's requests). The load average is read at the start and
// the end of every run. Targets (the issue): throughput and p99 within 5 % of the runs without witnesses; finality →
// cosigned checkpoint p99 ≤ 2 s. Writes bench/results/ledger-witness.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import type { LocalCluster, LocalNode } from '@scriptorium/harness/local-cluster';
import { LocalWitness, witnessLogOf } from '@scriptorium/harness/local-witness';
import { defaultOrigin, type WitnessStatusBody } from '@scriptorium/ledger-protocol';
import { benchCluster, loadTarget, runLoad, startWarm } from '../validators.ts';

const here = import.meta.dirname;
const PAIRS = Number(process.env.BENCH_PAIRS ?? 3);
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 10_000);
const CHAIN = 'bench-witness';

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : (s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] as number);
};
const round1 = (x: number) => Math.round(x * 10) / 10;

/** Polls node 0's witnessing: when each height was first seen final, and when first covered by a witnessed checkpoint. */
function watchWitnessing(cluster: LocalCluster, node: LocalNode) {
  const finalAt = new Map<number, number>();
  const witnessedAt = new Map<number, number>();
  let on = true;
  let seen = -1;
  let covered = 0;
  const loop = (async () => {
    while (on) {
      try {
        const s = (await cluster.get(node, '/checkpoint/witnesses')).body as WitnessStatusBody;
        const now = performance.now();
        for (let h = seen + 1; h < s.size; h++) finalAt.set(h, now);
        seen = Math.max(seen, s.size - 1);
        for (let h = covered; h < s.witnessed_size; h++) witnessedAt.set(h, now);
        covered = Math.max(covered, s.witnessed_size);
      } catch {
        // a starved node answers late
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  return {
    async stop(from: number, waitForCover: boolean) {
      // Let the last blocks be covered before stopping.
      const deadline = performance.now() + (waitForCover ? 10_000 : 0);
      while (performance.now() < deadline && covered <= seen) await new Promise((r) => setTimeout(r, 20));
      on = false;
      await loop;
      const latencies: number[] = [];
      for (const [h, at] of finalAt)
        if (h >= from && witnessedAt.has(h)) latencies.push((witnessedAt.get(h) as number) - at);
      return {
        blocks: latencies.length,
        uncovered: [...finalAt.keys()].filter((h) => h >= from && !witnessedAt.has(h)).length,
        latencies,
      };
    },
  };
}

async function oneRun(withWitnesses: boolean) {
  const cluster = await benchCluster({ size: 4, chainId: CHAIN });
  const witnesses: LocalWitness[] = [];
  const load = { start: loadavg()[0] as number, end: 0 };
  try {
    let env: Record<string, string> = {};
    if (withWitnesses) {
      const log = witnessLogOf(
        defaultOrigin(CHAIN),
        cluster.nodes.map((n) => n.keys.publicKey),
      );
      for (const i of [1, 2])
        witnesses.push(
          await LocalWitness.start({
            name: `witness.bench/w${i}`,
            dir: join(cluster.dir, `witness-${i}`),
            logs: [log],
            logLevel: 'warn',
          }),
        );
      env = {
        NODE_WITNESS__WITNESSES: JSON.stringify(
          witnesses.map((w, i) => ({ name: `w${i + 1}`, url: w.url, key: w.verifierKey })),
        ),
        NODE_WITNESS__THRESHOLD: '2',
      };
    }
    await startWarm(cluster, env);
    const first = cluster.nodes[0] as LocalNode;
    const from = (await cluster.height(first)) + 1;
    const watcher = watchWitnessing(cluster, first);
    const rate = await runLoad({
      ...loadTarget(cluster),
      concurrency: 1,
      maxOutstanding: 0,
      mode: 'rate',
      durationMs: DURATION_MS,
      batch: 250,
      intervalMs: 50,
      drainMs: 20_000,
    });
    const polled = await watcher.stop(from, withWitnesses);
    const witnessed = withWitnesses ? polled : undefined;
    load.end = loadavg()[0] as number;
    return {
      witnesses: withWitnesses ? 2 : 0,
      finalized_per_second: rate.records_per_second,
      latency_ms: rate.latency_ms,
      unfinalized: rate.unfinalized,
      ...(witnessed
        ? {
            finality_to_witnessed_ms: {
              blocks: witnessed.blocks,
              uncovered: witnessed.uncovered,
              p50: round1(pct(witnessed.latencies, 50)),
              p99: round1(pct(witnessed.latencies, 99)),
              max: round1(Math.max(...witnessed.latencies)),
            },
          }
        : {}),
      load_average: load,
      at: new Date().toISOString(),
    };
  } finally {
    await cluster.stopAll();
    for (const w of witnesses) await w.stop();
  }
}

const runs: Array<Awaited<ReturnType<typeof oneRun>>> = [];
for (let i = 0; i < PAIRS; i++) {
  for (const withWitnesses of [false, true]) {
    const r = await oneRun(withWitnesses);
    runs.push(r);
    const w = 'finality_to_witnessed_ms' in r ? r.finality_to_witnessed_ms : undefined;
    console.log(
      `pair ${i + 1} ${withWitnesses ? 'with 2 witnesses' : 'without       '}: ${r.finalized_per_second}/s, p50 ${r.latency_ms.p50} ms, p99 ${r.latency_ms.p99} ms` +
        (w ? `; finality → cosigned checkpoint p50 ${w.p50} ms, p99 ${w.p99} ms (${w.blocks} blocks)` : '') +
        `; load ${r.load_average.start.toFixed(1)} → ${r.load_average.end.toFixed(1)}`,
    );
  }
}
const median = (xs: number[]) => pct(xs, 50);
const without = runs.filter((r) => r.witnesses === 0);
const withW = runs.filter((r) => r.witnesses === 2);
const summary = {
  without: {
    finalized_per_second: median(without.map((r) => r.finalized_per_second)),
    p99_ms: median(without.map((r) => r.latency_ms.p99)),
    p50_ms: median(without.map((r) => r.latency_ms.p50)),
  },
  with_witnesses: {
    finalized_per_second: median(withW.map((r) => r.finalized_per_second)),
    p99_ms: median(withW.map((r) => r.latency_ms.p99)),
    p50_ms: median(withW.map((r) => r.latency_ms.p50)),
    finality_to_witnessed_p50_ms: median(withW.map((r) => r.finality_to_witnessed_ms?.p50 ?? Number.NaN)),
    finality_to_witnessed_p99_ms: median(withW.map((r) => r.finality_to_witnessed_ms?.p99 ?? Number.NaN)),
  },
};
const ratio = {
  throughput: round1((summary.with_witnesses.finalized_per_second / summary.without.finalized_per_second) * 100) / 100,
  p99: round1((summary.with_witnesses.p99_ms / summary.without.p99_ms) * 100) / 100,
};
const result = {
  machine: { cpus: cpus().length, model: cpus()[0]?.model ?? 'unknown', node: process.version },
  offered_records_per_second: 5000,
  duration_ms: DURATION_MS,
  pairs: PAIRS,
  runs,
  summary,
  ratio_with_to_without: ratio,
  targets: { throughput_and_p99_within: 0.05, finality_to_witnessed_p99_ms: 2000 },
};
console.log(
  `\nmedians: without ${summary.without.finalized_per_second}/s p99 ${summary.without.p99_ms} ms; with 2 witnesses ${summary.with_witnesses.finalized_per_second}/s p99 ${summary.with_witnesses.p99_ms} ms (ratios ${ratio.throughput}, ${ratio.p99}); finality → cosigned checkpoint p50 ${summary.with_witnesses.finality_to_witnessed_p50_ms} ms, p99 ${summary.with_witnesses.finality_to_witnessed_p99_ms} ms`,
);
mkdirSync(join(here, '..', 'results'), { recursive: true });
writeFileSync(join(here, '..', 'results', 'ledger-witness.json'), `${JSON.stringify(result, null, 2)}\n`);
