// The figures `make bench` guards against the best recorded run (bench/guard.ts; bench/README.md, ## regression
// guard), defined once for every part. A part not listed here runs unguarded. `tolerance` is the least noise assumed
// (a fraction of the best): the tolerance until three comparable runs are recorded, its floor after.
import { NODE_RUNTIME_ENV, NODE_RUNTIME_FLAGS } from '@scriptorium/ledger-node';
import type { GuardedPart } from './guard.ts';

/** What every validator process starts with (LocalCluster, the image; services/ledger-node/src/runtime-flags.ts). */
export const LEDGER_NODE_SETTINGS = {
  'validator node flags': NODE_RUNTIME_FLAGS.join(' '),
  'validator env': Object.entries(NODE_RUNTIME_ENV)
    .map(([k, v]) => `${k}=${v}`)
    .join(' '),
} as const;

const LEDGER_NODE = 'ledger node: speed and memory';
const N4 = 'clusters[validators=4]';

export const GUARDED_PARTS: readonly GuardedPart[] = [
  {
    part: 'ledger',
    group: LEDGER_NODE,
    resultsAt: ['at'],
    variantEnv: { BENCH_QUICK: '0' },
    settings: LEDGER_NODE_SETTINGS,
    figures: [
      {
        name: 'n4_saturation',
        label: 'N = 4 saturation (closed loop)',
        path: `${N4}.saturation.records_per_second`,
        better: 'higher',
        unit: 'records/s',
        kind: 'speed',
        tolerance: 0.15,
      },
      {
        name: 'n4_light_p50',
        label: 'N = 4 light load p50 submit → final',
        path: `${N4}.light_load.latency_ms.p50`,
        better: 'lower',
        unit: 'ms',
        kind: 'speed',
        tolerance: 0.25,
      },
      {
        name: 'n4_5000_p99',
        label: 'N = 4 p99 at 5,000/s offered',
        path: `${N4}.offered_5000_per_second.latency_ms.p99`,
        better: 'lower',
        unit: 'ms',
        kind: 'speed',
        tolerance: 1.0,
      },
      {
        name: 'catch_up',
        label: 'catch-up of a fresh follower',
        path: 'catch_up.blocks_per_second',
        better: 'higher',
        unit: 'blocks/s',
        kind: 'speed',
        tolerance: 0.3,
      },
    ],
  },
  {
    part: 'ledger-watch',
    group: LEDGER_NODE,
    resultsAt: ['test_brokers.at', 'watcher_alone_1m.at'],
    variantEnv: { BENCH_WATCH_ENTITIES: '100000' },
    settings: LEDGER_NODE_SETTINGS,
    figures: [
      {
        name: 'idle_rss_per_node',
        label: '100k entities subscribed: idle RSS, highest node',
        path: 'test_brokers.subscribe.idle.rss_mb_per_node[max]',
        at: 'test_brokers.at',
        better: 'lower',
        unit: 'MB',
        kind: 'memory',
        tolerance: 0.15,
      },
      {
        name: 'watcher_1m_rss',
        label: 'watcher alone at 1M entities: RSS after a steady pass',
        path: 'watcher_alone_1m.notified.rss_mb_after',
        at: 'watcher_alone_1m.at',
        better: 'lower',
        unit: 'MB',
        kind: 'memory',
        tolerance: 0.1,
      },
    ],
  },
  {
    part: 'translation',
    group: 'translation service: speed and memory',
    resultsAt: ['date'],
    variantEnv: { REPLICAS: '2', DURATION: '10', SERVICE_NODE_ARGS: '', SERVICE_ENV: '' },
    figures: [
      {
        name: 'requests_per_second',
        label: '64 connections: requests/s',
        path: 'throughput.requestsPerSecond',
        better: 'higher',
        unit: 'req/s',
        kind: 'speed',
        tolerance: 0.15,
      },
      {
        name: 'service_cpu_ms_per_request',
        label: 'service CPU per request',
        path: 'throughput.serviceCpuMsPerRequest',
        better: 'lower',
        unit: 'ms',
        kind: 'speed',
        tolerance: 0.15,
      },
      {
        name: 'service_rss',
        label: 'service RSS (all processes)',
        path: 'serviceMemoryMiB.rss',
        better: 'lower',
        unit: 'MiB',
        kind: 'memory',
        tolerance: 0.1,
      },
    ],
  },
];

export function guardedPart(name: string): GuardedPart | undefined {
  return GUARDED_PARTS.find((p) => p.part === name);
}
