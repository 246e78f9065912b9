// The ledger cluster as the ledger benchmark runs it (bench/ledger/run.ts, bench/peers): N validator processes on
// loopback with the bench's node settings, warmed up; and the load generator (load.ts) as its own process.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { LocalCluster } from '@scriptorium/harness/local-cluster';
import type { LoadOptions, LoadResult } from './load-driver.ts';

/** Every validator's settings: no rate limit or mempool bound in the way of the load. */
export const LEDGER_BENCH_ENV = {
  LOG_LEVEL: 'warn',
  NODE_RATE_LIMIT__RPS: '1000000',
  NODE_RATE_LIMIT__BURST: '1000000',
  NODE_MEMPOOL__MAX_RECORDS: '500000',
  MAX_BODY_BYTES: String(32 * 1024 * 1024),
  NODE_SYNC__INTERVAL_MS: '1000',
  NODE_PEERS__ANNOUNCE_INTERVAL_MS: '5000',
  // Idle heartbeat blocks every 500 ms, as before the empty-block interval existed (the warm-up counts them).
  NODE_CONSENSUS__EMPTY_BLOCK_INTERVAL_MS: '500',
};

/**
 * Runs load.ts in its own process with `options` (LoadOptions and the cluster's token); `script`: another load
 * generator with the same input and output (bench/peers/comet-load.ts).
 */
export function runLoad(
  options: Partial<LoadOptions> & Record<string, unknown>,
  script = join(import.meta.dirname, 'load.ts'),
): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, JSON.stringify(options)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
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

/**
 * Creates and starts `size` validators and waits until every node has seen 3 heights past the highest at start.
 * `envFor(i)` adds to node i's environment (e.g. NODE_OPTIONS=--inspect for a profile). The caller calls stopAll.
 */
export async function startWarmCluster(size: number, envFor?: (index: number) => Record<string, string>) {
  const cluster = await LocalCluster.create({ size, roundTimeoutMs: 2000, env: LEDGER_BENCH_ENV });
  try {
    await Promise.all(cluster.nodes.map((node, i) => cluster.start(node, envFor?.(i) ?? {})));
    // Warm up: processes start at different times on two cores, so the first heights may need round
    // changes (with growing timeouts). Measure once every node has seen a few heartbeat blocks.
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
  } catch (err) {
    await cluster.stopAll();
    throw err;
  }
  return cluster;
}
