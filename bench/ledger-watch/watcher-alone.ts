// The watcher alone, in one process, against three test broker processes: no node, no consensus. Records are
// "finalized" at once (applied to the watcher's memory as a finalized block would be), so the first pass notarises
// everything and the next passes are steady. The watcher runs in subscribe mode: after its passes, changes made on a
// federated broker are notified to it (through a bare HTTP transport to Watcher.notify, the node's route minus
// fastify) and the time from the change to its record is measured.
//
// Run with the node's V8 flags and allocator settings (run.ts does): the RSS figures are a validator's. After each
// pass a last-resort collection gives pooled heap pages back, as the node's memory trimmer does.
//   BENCH_WATCH_ENTITIES (default 100000), BENCH_WATCH_PASSES (default 3), BENCH_WATCH_NOTIFIED (default 30),
//   BENCH_WATCH_OUT=FILE writes the figures as JSON, BENCH_WATCH_PROFILE=FILE a CPU profile of the steady passes.
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { Session } from 'node:inspector/promises';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { entityId } from '@scriptorium/harness/test-broker';
import { type ObservationRecord, Watcher } from '@scriptorium/ledger-node/broker';
import { startBroker } from './brokers.ts';

const ENTITIES = Number(process.env.BENCH_WATCH_ENTITIES ?? 100_000);
const PASSES = Number(process.env.BENCH_WATCH_PASSES ?? 3);
const NOTIFIED = Number(process.env.BENCH_WATCH_NOTIFIED ?? 30);
const PROFILE = process.env.BENCH_WATCH_PROFILE;
const mb = (n: number) => Math.round(n / 1024 / 1024);
const load = () => loadavg().map((x) => Math.round(x * 10) / 10);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
type Gc = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;
const gc = (globalThis as { gc?: Gc }).gc;

const brokers = await Promise.all([41_126, 41_127, 41_128].map((p) => startBroker(p, ENTITIES, 10)));
const [primary, fedA, fedB] = brokers as [(typeof brokers)[0], (typeof brokers)[0], (typeof brokers)[0]];
const endpoint = (url: string, role: 'primary' | 'federated') => ({ url, role, api: 'ngsi-v2' as const });

// The node's notification route as a bare transport: channel, secret header and body to Watcher.notify.
let watcher: Watcher | undefined;
const transport = createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    const token = req.headers['scriptorium-notify-token'];
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      parsed = undefined;
    }
    const result = watcher?.notify(
      decodeURIComponent((req.url ?? '').split('/').pop() ?? ''),
      typeof token === 'string' ? token : undefined,
      parsed,
    );
    res.writeHead(result === 'accepted' ? 204 : result === 'unauthorized' ? 401 : 400).end();
  });
});
await new Promise<void>((r) => transport.listen(0, '127.0.0.1', () => r()));

let height = 0;
let submitted = 0;
const waiting = new Map<string, (at: number) => void>();
watcher = new Watcher(
  {
    primary: endpoint(primary.url, 'primary'),
    federated: [endpoint(fedA.url, 'federated'), endpoint(fedB.url, 'federated')],
    ca: undefined,
    pollIntervalMs: 1_000_000_000,
    mode: 'subscribe',
    sweepIntervalMs: 1_000_000_000,
    notifyUrl: `http://127.0.0.1:${(transport.address() as AddressInfo).port}`,
    subscriptionCheckMs: 5000,
  },
  {
    submit: (records: ObservationRecord[]) => {
      submitted += records.length;
      (watcher as Watcher).applyFinalized(records, ++height);
      const now = performance.now();
      for (const r of records) waiting.get(r.entity)?.(now);
      return records.length;
    },
    room: () => Number.MAX_SAFE_INTEGER,
  },
  { nodeKey: 'bench-watcher-alone' },
);

const passes: Array<Record<string, unknown>> = [];
const results: Record<string, unknown> = { entities: ENTITIES, attributes_per_entity: 10, federated_brokers: 2 };
try {
  const session = new Session();
  // The first pass is the subscribe mode's first sweep, started by start(); the next ones are run here.
  watcher.start();
  for (let i = 0; i < PASSES; i++) {
    if (i === 1 && PROFILE) {
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.start');
    }
    const t0 = performance.now();
    const before = submitted;
    const peak = { rss: 0, heapTotal: 0 };
    const sampler = setInterval(() => {
      const m = process.memoryUsage();
      peak.rss = Math.max(peak.rss, m.rss);
      peak.heapTotal = Math.max(peak.heapTotal, m.heapTotal);
    }, 100);
    if (i === 0) while (watcher.status().passes < 1) await sleep(100);
    else await watcher.pass('full');
    clearInterval(sampler);
    const ms = performance.now() - t0;
    gc?.({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    const m = process.memoryUsage();
    const line = {
      pass: i,
      seconds: Math.round(ms / 100) / 10,
      submitted: submitted - before,
      rss_mb: mb(m.rss),
      heap_used_mb: mb(m.heapUsed),
      heap_total_mb: mb(m.heapTotal),
      external_mb: mb(m.external),
      array_buffers_mb: mb(m.arrayBuffers),
      peak_rss_mb: mb(peak.rss),
      watcher_state_mb: mb(watcher.stateBytes()),
      load: load(),
    };
    passes.push(line);
    console.log(JSON.stringify(line));
  }
  if (PROFILE) {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(PROFILE, JSON.stringify(profile));
  }
  results.passes = passes;
  // Notified changes, one at a time: change an attribute of a federated entity, time its record.
  while (!watcher.status().brokers.every((b) => b.subscription?.state === 'active')) await sleep(200);
  const latencies: number[] = [];
  for (let k = 0; k < NOTIFIED; k++) {
    const n = (k * 7919 + 13) % ENTITIES;
    const id = entityId(n);
    const recorded = new Promise<number>((resolve) => waiting.set(id, resolve));
    const t0 = performance.now();
    const res = await fetch(`${fedA.url}/v2/entities/${encodeURIComponent(id)}/attrs?type=Sensor`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ temperature: { type: 'Number', value: -1 - k } }),
    });
    if (res.status !== 204) throw new Error(`change: ${res.status}`);
    latencies.push((await recorded) - t0);
    waiting.delete(id);
  }
  latencies.sort((a, b) => a - b);
  const at = (p: number) =>
    Math.round(latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? 0);
  gc?.({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  results.notified = {
    changes: NOTIFIED,
    change_to_record_ms: { p50: at(0.5), p99: at(0.99), max: Math.round(latencies.at(-1) ?? 0) },
    rss_mb_after: mb(process.memoryUsage().rss),
    load: load(),
  };
  console.log(JSON.stringify({ notified: results.notified }));
  if (process.env.BENCH_WATCH_OUT) writeFileSync(process.env.BENCH_WATCH_OUT, JSON.stringify(results));
} finally {
  await watcher.stop();
  transport.close();
  for (const b of brokers) b.stop();
}
