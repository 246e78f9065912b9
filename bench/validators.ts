// The validators of the ledger benchmarks that put load on a chain (ledger, ledger-witness, ledger-backup, peers): N
// `ledger-node` processes on loopback (the harness's LocalCluster) with one set of node settings, their warm-up, and
// bench/ledger/load.ts run as its own process against them.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { LocalCluster, type LocalClusterOptions } from '@scriptorium/harness/local-cluster';
import type { LoadOptions, LoadResult } from './ledger/load-driver.ts';

/**
 * No rate, mempool or body limit in the way of the load; sync and peer announcements at the node's defaults; idle
 * heartbeat blocks every 500 ms, as before the empty-block interval existed (the warm-up counts them).
 */
export const BENCH_NODE_ENV: Record<string, string> = {
  LOG_LEVEL: 'warn',
  NODE_RATE_LIMIT__RPS: '1000000',
  NODE_RATE_LIMIT__BURST: '1000000',
  NODE_MEMPOOL__MAX_RECORDS: '500000',
  MAX_BODY_BYTES: String(32 * 1024 * 1024),
  NODE_SYNC__INTERVAL_MS: '1000',
  NODE_PEERS__ANNOUNCE_INTERVAL_MS: '5000',
  NODE_CONSENSUS__EMPTY_BLOCK_INTERVAL_MS: '500',
};

/** A cluster with the benchmarks' settings (`options.env` on top) and 2 s rounds, not started yet. */
export function benchCluster(options: LocalClusterOptions): Promise<LocalCluster> {
  return LocalCluster.create({ roundTimeoutMs: 2000, ...options, env: { ...BENCH_NODE_ENV, ...options.env } });
}

/**
 * Starts every validator (`env` added, or `env(i)` to node i: a profiler's flag on one) and waits until each has seen three heights more than the highest at start:
 * processes start at different times on two cores, so the first heights may need round changes (with growing
 * timeouts), which a measurement must not include.
 */
export async function startWarm(
  cluster: LocalCluster,
  env: Record<string, string> | ((index: number) => Record<string, string>) = {},
): Promise<void> {
  if (typeof env === 'function') await Promise.all(cluster.nodes.map((node, i) => cluster.start(node, env(i))));
  else await cluster.startAll(env);
  const heights = await Promise.all(cluster.nodes.map((x) => cluster.height(x).catch(() => 0)));
  const warm = Math.max(...heights) + 3;
  await Promise.all(
    cluster.nodes.map((x) =>
      cluster.waitFor(
        `${x.nodeId} warm`,
        () => cluster.height(x),
        (h) => h >= warm,
        180_000,
      ),
    ),
  );
}

/** What the load process needs of a cluster: every validator's URL and the cluster's token. */
export function loadTarget(cluster: LocalCluster): { urls: string[]; token: string } {
  return { urls: cluster.nodes.map((x) => x.url), token: cluster.token };
}

export type { LoadOptions, LoadResult } from './ledger/load-driver.ts';

/**
 * Runs bench/ledger/load.ts with `options` as its own process; resolves with its result. `script`: another load
 * generator with the same input and output (bench/peers/comet-load.ts, for CometBFT).
 */
export function runLoad(
  options: Partial<LoadOptions> & Record<string, unknown>,
  script = join(import.meta.dirname, 'ledger', 'load.ts'),
): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, JSON.stringify(options)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.on('exit', (code) =>
      code === 0
        ? resolve(JSON.parse(out.trim().split('\n').at(-1) as string))
        : reject(new Error(`load exited ${code}`)),
    );
  });
}
