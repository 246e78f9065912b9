// The watcher alone, in one process, against three test broker processes: no node, no consensus. Records
// are "finalized" at once (applied to the watcher's memory as a finalized block would be), so the first pass
// notarises everything and the next passes are steady. Prints each pass's duration and the process's heap
// and RSS. For profiling: node --cpu-prof / --heap-prof bench/ledger-watch/watcher-alone.ts.
// Also each pass's peak RSS and reserved heap, sampled every 100 ms.
//   BENCH_WATCH_ENTITIES (default 100000), BENCH_WATCH_PASSES (default 3),
//   BENCH_WATCH_PROFILE=FILE writes a CPU profile of the passes after the first (the steady ones) to FILE.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { loadavg } from 'node:os';
import { getHeapSpaceStatistics } from 'node:v8';
import { Watcher } from '@scriptorium/ledger-node/broker';
import { startBroker } from './brokers.ts';

const ENTITIES = Number(process.env.BENCH_WATCH_ENTITIES ?? 100_000);
const PASSES = Number(process.env.BENCH_WATCH_PASSES ?? 3);
const PROFILE = process.env.BENCH_WATCH_PROFILE;
const mb = (n: number) => Math.round(n / 1024 / 1024);

const brokers = await Promise.all([41_126, 41_127, 41_128].map((p) => startBroker(p, ENTITIES, 10)));
const [primary, fedA, fedB] = brokers as [(typeof brokers)[0], (typeof brokers)[0], (typeof brokers)[0]];
const endpoint = (url: string, role: 'primary' | 'federated') => ({
  url,
  role,
  api: 'ngsi-v2' as const,
  service: undefined,
  servicePath: undefined,
  authToken: undefined,
});
let height = 0;
let submitted = 0;
const watcher: Watcher = new Watcher(
  {
    primary: endpoint(primary.url, 'primary'),
    federated: [endpoint(fedA.url, 'federated'), endpoint(fedB.url, 'federated')],
    ca: undefined,
    pollIntervalMs: 1_000_000,
    mode: 'poll',
    sweepIntervalMs: 1_000_000,
    notifyUrl: 'http://127.0.0.1:9',
    subscriptionCheckMs: 1_000_000,
  },
  {
    submit: (records) => {
      submitted += records.length;
      watcher.applyFinalized(records, ++height);
      return records.length;
    },
    room: () => Number.MAX_SAFE_INTEGER,
  },
);
try {
  const session = new Session();
  for (let i = 0; i < PASSES; i++) {
    if (i === 1 && PROFILE) {
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.start');
    }
    const t0 = performance.now();
    const before = submitted;
    // The pass's peaks, sampled every 100 ms: what a steady pass costs on top of what it keeps.
    const peak = { rss: 0, heapTotal: 0, external: 0 };
    const sampler = setInterval(() => {
      const m = process.memoryUsage();
      peak.rss = Math.max(peak.rss, m.rss);
      peak.heapTotal = Math.max(peak.heapTotal, m.heapTotal);
      peak.external = Math.max(peak.external, m.external);
    }, 100);
    await watcher.pass();
    clearInterval(sampler);
    const ms = performance.now() - t0;
    globalThis.gc?.();
    const m = process.memoryUsage();
    console.log(
      JSON.stringify({
        pass: i,
        seconds: Math.round(ms / 100) / 10,
        submitted: submitted - before,
        heap_used_mb: mb(m.heapUsed),
        heap_total_mb: mb(m.heapTotal),
        external_mb: mb(m.external),
        array_buffers_mb: mb(m.arrayBuffers),
        rss_mb: mb(m.rss),
        peak_rss_mb: mb(peak.rss),
        peak_heap_total_mb: mb(peak.heapTotal),
        peak_external_mb: mb(peak.external),
        spaces: Object.fromEntries(
          getHeapSpaceStatistics().map((sp) => [sp.space_name, [mb(sp.space_used_size), mb(sp.space_size)]]),
        ),
        load: loadavg().map((x) => Math.round(x * 10) / 10),
      }),
    );
  }
  if (PROFILE) {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(PROFILE, JSON.stringify(profile));
  }
} finally {
  await watcher.stop();
  for (const b of brokers) b.stop();
}
