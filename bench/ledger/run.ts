// Ledger benchmark: N validators as separate processes on loopback, load from a separate process.
// Measures finalized records/s and submit-to-finality latency (p50/p99) for N = 4, 7, 10; the
// catch-up speed of a fresh node (blocks/s); and Merkle proofs verified per second.
// Then runs the core benchmark (bench/ledger/core.ts). Writes bench/results/ledger.json.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import type { LocalNode } from '@scriptorium/harness/local-cluster';
import { type Block, nobleSha256, proofFor, verifyProof } from '@scriptorium/ledger-protocol';
import { benchCluster, loadTarget, runLoad, startWarm } from '../validators.ts';

const here = import.meta.dirname;
const quick = process.env.BENCH_QUICK === '1';
const sizes = (process.env.BENCH_LEDGER_SIZES ?? '4,7,10').split(',').map(Number);

const results: Record<string, unknown> = {
  machine: {
    cpus: cpus().length,
    model: cpus()[0]?.model ?? 'unknown',
    node: process.version,
    load_average_at_start: loadavg(),
  },
  at: new Date().toISOString(),
  clusters: [] as unknown[],
};

let catchup: Record<string, number> | undefined;
let sampleBlock: Block | undefined;

for (const n of sizes) {
  const cluster = await benchCluster({ size: n });
  try {
    await startWarm(cluster);
    const base = { ...loadTarget(cluster), concurrency: 1, maxOutstanding: 0 };
    // The node's own view: mean time from a record entering node 0's mempool to its block being final there.
    const first = cluster.nodes[0] as LocalNode;
    const finality = async () => {
      const m = String((await cluster.get(first, '/metrics')).body);
      const sum = Number(/scriptorium_ledger_finality_latency_seconds_sum ([\d.e+-]+)/.exec(m)?.[1] ?? 0);
      const count = Number(/scriptorium_ledger_finality_latency_seconds_count (\d+)/.exec(m)?.[1] ?? 0);
      return { sum, count };
    };
    const meanSince = async (before: { sum: number; count: number }) => {
      const after = await finality();
      const n = after.count - before.count;
      return n > 0 ? Math.round(((after.sum - before.sum) / n) * 10_000) / 10 : null;
    };
    const f0 = await finality();
    const light = await runLoad({
      ...base,
      mode: 'light',
      durationMs: quick ? 3000 : 6000,
      batch: 10,
      intervalMs: 100,
      drainMs: 10_000,
    });
    const lightNodeMean = await meanSince(f0);
    const f1 = await finality();
    // Latency at a fixed offered load (the target rate at N = 4: 5,000 records/s).
    const rate = await runLoad({
      ...base,
      mode: 'rate',
      durationMs: quick ? 5000 : 10_000,
      batch: 250,
      intervalMs: 50,
      drainMs: 20_000,
    });
    const rateNodeMean = await meanSince(f1);
    // Sustained rate with a bounded backlog (closed loop).
    const heavy = await runLoad({
      ...base,
      mode: 'throughput',
      durationMs: quick ? 5000 : 10_000,
      batch: 500,
      concurrency: 4,
      intervalMs: 0,
      drainMs: 30_000,
      maxOutstanding: 20_000,
    });
    const entry = {
      validators: n,
      light_load: { ...light, node0_mean_mempool_to_final_ms: lightNodeMean },
      offered_5000_per_second: { ...rate, node0_mean_mempool_to_final_ms: rateNodeMean },
      saturation: heavy,
    };
    (results.clusters as unknown[]).push(entry);
    console.log(
      `N=${n}: light (100 records/s) p50 ${light.latency_ms.p50} ms p99 ${light.latency_ms.p99} ms | saturation ${heavy.records_per_second} records/s finalized (${heavy.finalized}/${heavy.accepted}) | offered 5,000/s: ${rate.records_per_second} finalized/s, p50 ${rate.latency_ms.p50} ms p99 ${rate.latency_ms.p99} ms`,
    );

    if (n === sizes[0]) {
      // Catch-up of a fresh follower by pull sync.
      const target = await cluster.height(cluster.nodes[0] as LocalNode);
      const fresh = await cluster.addNode();
      const t0 = performance.now();
      await cluster.start(fresh);
      await cluster.waitFor(
        'fresh node caught up',
        () => cluster.height(fresh),
        (h) => h >= target,
        300_000,
      );
      const seconds = (performance.now() - t0) / 1000;
      catchup = {
        blocks: target,
        seconds: Math.round(seconds * 100) / 100,
        blocks_per_second: Math.round(target / seconds),
      };
      console.log(`catch-up: ${target} blocks in ${catchup.seconds} s = ${catchup.blocks_per_second} blocks/s`);
      // The largest block, for the proof benchmark.
      for (let h = target; h > Math.max(0, target - 50); h--) {
        const b = (await cluster.get(cluster.nodes[0] as LocalNode, `/blocks/${h}`)).body as Block;
        if (!sampleBlock || b.records.length > sampleBlock.records.length) sampleBlock = b;
      }
    }
  } catch (err) {
    // A run that cannot finish on this machine is recorded as such, and the others still run.
    (results.clusters as unknown[]).push({ validators: n, error: (err as Error).message });
    console.log(`N=${n}: failed: ${(err as Error).message}`);
  } finally {
    await cluster.stopAll();
  }
}
results.catch_up = catchup;

// Proof verification speed (offline verifier, as `ledger-node verify-proof` and the console use it).
if (sampleBlock && sampleBlock.records.length > 0) {
  const proofs = sampleBlock.records.slice(0, 2000).map((_, i) => proofFor(sampleBlock as Block, i));
  const measure = (useNode: boolean) => {
    let count = 0;
    const t0 = performance.now();
    while (performance.now() - t0 < 1500) {
      for (const p of proofs) {
        if (!p) continue;
        const input = { record: p.record, proof: p.proof, merkle_root: p.merkle_root };
        const ok = verifyProof(useNode ? input : { ...input, sha256: nobleSha256 });
        if (!ok) throw new Error('proof failed to verify');
        count++;
      }
    }
    return Math.round(count / ((performance.now() - t0) / 1000));
  };
  results.proofs = {
    block_records: sampleBlock.records.length,
    per_second_noble: measure(false),
    per_second_node_crypto: measure(true),
  };
  console.log(`proofs verified/s (block of ${sampleBlock.records.length}): ${JSON.stringify(results.proofs)}`);
}

const core = join(here, 'core.ts');
if (existsSync(core)) {
  console.log('running bench/ledger/core.ts (the core benchmark)');
  const r = spawnSync(process.execPath, [core], { stdio: 'inherit' });
  results.core_exit_code = r.status;
}

mkdirSync(join(here, '..', 'results'), { recursive: true });
writeFileSync(join(here, '..', 'results', 'ledger.json'), `${JSON.stringify(results, null, 2)}\n`);
console.log('wrote bench/results/ledger.json');
