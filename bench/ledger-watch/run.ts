// Ledger watch benchmark (`BENCH=ledger-watch make bench`), in one run:
//   0. an idle cluster (no brokers): blocks per second and CPU % of the 4 node processes;
//   1. 1 primary and 2 federated test brokers (their own processes), ENTITIES × 10 attributes, 4 validators, once
//      polling (today's behaviour) and once subscribed, side by side: the first pass until every observation is
//      final; the requests per second the brokers serve to the validators while nothing changes, and each node's
//      RSS meanwhile; tamper → final TAMPERED p50/p99, for a burst (1 % of the attributes at once, written between
//      two passes when polling) and a trickle (single changes, 0.2 s apart);
//   2. the watcher alone at 1,000,000 entities (watcher-alone.ts, with the node's V8 flags): RSS of its state, and
//      the time from a notified change to its record;
//   3. the same tamper measurement against FIWARE Scorpio 5.0.3 (three brokers, NGSI-LD) at 10,000 entities.
// Writes bench/results/ledger-watch.json. BENCH_WATCH_ENTITIES scales part 1 (default 100000), BENCH_WATCH_MODES
// picks its modes (default "poll,subscribe"), BENCH_WATCH_PARTS picks parts (default "0,1,2,3"); the parts not run
// keep what the file holds of them, and each part carries its own time (`at`), so parts measured apart make one file.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalCluster, type LocalNode } from '@scriptorium/harness/local-cluster';
import { attributeName, attributeValue, BrokerWrites, entityId } from '@scriptorium/harness/test-broker';
import { NODE_RUNTIME_ENV, NODE_RUNTIME_FLAGS } from '@scriptorium/ledger-node';
import type { Block } from '@scriptorium/ledger-protocol';
import { ensureScorpioJar, startScorpio, type TestScorpio } from '@scriptorium/test-support/scorpio';
import { type BrokerProcess, startBroker } from './brokers.ts';

const here = import.meta.dirname;
const ENTITIES = Number(process.env.BENCH_WATCH_ENTITIES ?? 100_000);
const PARTS = new Set((process.env.BENCH_WATCH_PARTS ?? '0,1,2,3').split(','));
// Part 1's modes (default both, side by side); one alone measures only its own figures.
const MODES = (process.env.BENCH_WATCH_MODES ?? 'poll,subscribe').split(',') as Array<'poll' | 'subscribe'>;
const ATTRS = 10;
const POLL_MS = 10_000;
const TAMPER_FRACTION = 0.01;
const TRICKLE = 100;
const IDLE_SECONDS = 30;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const load = () => loadavg().map((x) => Math.round(x * 100) / 100);

/** A field of a /proc file in kB (`VmRSS:`, `Rss:`, …), 0 when absent. */
const procKb = (text: string, field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? 0);

/** RSS and its peak so far (MB), and CPU time (s) of a process, from /proc. */
function procStats(pid: number): { rssMb: number; peakRssMb: number; cpuSeconds: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return {
    rssMb: Math.round(procKb(status, 'VmRSS') / 1024),
    peakRssMb: Math.round(procKb(status, 'VmHWM') / 1024),
    cpuSeconds: (Number(stat[11]) + Number(stat[12])) / 100,
  };
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
const summary = (latencies: number[]) => {
  const sorted = [...latencies].sort((a, b) => a - b);
  return { count: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) ?? 0 };
};

interface WatchStatus {
  passes: number;
  lastPass?: { startedAt: number; durationMs: number };
  brokers: Array<{ subscription?: { state: string } }>;
}
const watchStatus = async (cluster: LocalCluster, node: LocalNode) =>
  ((await cluster.get(node, '/watch')).body as { watcher: WatchStatus }).watcher;

const RESULTS = join(here, '..', 'results', 'ledger-watch.json');
/** Each part's key in the results. */
const PART_KEYS: Record<string, string> = { '0': 'idle', '1': 'test_brokers', '2': 'watcher_alone_1m', '3': 'scorpio' };
const kept: Record<string, unknown> = {};
if (Object.keys(PART_KEYS).some((p) => !PARTS.has(p)))
  try {
    const before = JSON.parse(readFileSync(RESULTS, 'utf8')) as Record<string, unknown>;
    for (const [p, key] of Object.entries(PART_KEYS)) if (!PARTS.has(p) && key in before) kept[key] = before[key];
  } catch {
    // no earlier results: only the parts run now
  }
const results: Record<string, unknown> = {
  machine: { cpus: cpus().length, model: cpus()[0]?.model ?? 'unknown', node: process.version },
  ...kept,
};
const now = () => new Date().toISOString();

// ---- 0. idle cluster (no brokers): blocks/s and CPU of the 4 nodes ---------------------------------------------
if (PARTS.has('0')) {
  const cluster = await LocalCluster.create({ size: 4, roundTimeoutMs: 2000, env: { LOG_LEVEL: 'warn' } });
  try {
    await cluster.startAll();
    await sleep(5000);
    const n0 = cluster.nodes[0] as LocalNode;
    const h0 = await cluster.height(n0);
    const cpu0 = cluster.nodes.map((n) => procStats(n.process?.pid as number).cpuSeconds);
    const t0 = performance.now();
    const loadBefore = load();
    await sleep(IDLE_SECONDS * 1000);
    const seconds = (performance.now() - t0) / 1000;
    const h1 = await cluster.height(n0);
    const cpu1 = cluster.nodes.map((n) => procStats(n.process?.pid as number).cpuSeconds);
    results.idle = {
      at: now(),
      seconds: Math.round(seconds),
      blocks_per_second: Math.round(((h1 - h0) / seconds) * 100) / 100,
      cpu_percent_of_one_core_4_nodes:
        Math.round((cpu1.reduce((a, c, i) => a + (c - (cpu0[i] as number)), 0) / seconds) * 1000) / 10,
      load_average: { before: loadBefore, after: load() },
    };
    console.log(`idle: ${JSON.stringify(results.idle)}`);
  } finally {
    await cluster.stopAll();
  }
}

/** The brokers one measurement runs against: their URLs, how to write to them, and what they answered. */
interface Brokers {
  urls: [string, string, string];
  api: 'ngsi-v2' | 'ngsi-ld';
  /** Requests answered so far by all three (undefined: the broker cannot tell). */
  requests(): Promise<number | undefined>;
  stop(): Promise<void>;
}

async function testBrokers(entities: number): Promise<Brokers> {
  const started: BrokerProcess[] = await Promise.all(
    [41_026, 41_027, 41_028].map((port) => startBroker(port, entities, ATTRS)),
  );
  return {
    urls: started.map((b) => b.url) as [string, string, string],
    api: 'ngsi-v2',
    async requests() {
      let n = 0;
      for (const b of started) n += ((await (await fetch(`${b.url}/_stats`)).json()) as { total: number }).total;
      return n;
    },
    async stop() {
      for (const b of started) b.stop();
      await sleep(500);
    },
  };
}

async function scorpioBrokers(entities: number): Promise<Brokers> {
  const found = ensureScorpioJar();
  if (!('jar' in found)) throw new Error(found.skip);
  const started: TestScorpio[] = await Promise.all(
    [0, 1, 2].map(() => startScorpio({ jar: found.jar, maxHeapMb: 1024, jvm: 'default' })),
  );
  // Side by side: each seed waits on its broker's answers more than on the CPU.
  await Promise.all(started.map((s) => new BrokerWrites(s.url, 'ngsi-ld').seed(entities, ATTRS)));
  return {
    urls: started.map((s) => s.url) as [string, string, string],
    api: 'ngsi-ld',
    requests: async () => undefined,
    async stop() {
      for (const s of started) await s.stop();
    },
  };
}

/** Every record of n0's chain from `from` on, block by block, to `see` (its arrival time). */
async function scanBlocks(
  cluster: LocalCluster,
  node: LocalNode,
  from: number,
  see: (record: { entity?: string; attribute?: string; verdict?: string }, at: number) => void,
): Promise<number> {
  const height = await cluster.height(node);
  for (let h = from; h <= height; h++) {
    const block = (await cluster.get(node, `/blocks/${h}`)).body as Block;
    const at = Date.now();
    for (const r of block.records) see(r as { entity?: string; attribute?: string; verdict?: string }, at);
  }
  return height;
}

/** One cluster watching `brokers` in `mode`: first pass, idle requests and RSS, tamper burst and trickle. */
async function measure(
  mode: 'poll' | 'subscribe',
  brokers: Brokers,
  entities: number,
): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = { mode, api: brokers.api, entities, attributes_per_entity: ATTRS };
  const [primary, fedA, fedB] = brokers.urls;
  const cluster = await LocalCluster.create({
    size: 4,
    roundTimeoutMs: 2000,
    env: {
      LOG_LEVEL: 'warn',
      NODE_BROKER__PRIMARY_URL: primary,
      NODE_BROKER__FEDERATED_URLS: `${fedA},${fedB}`,
      NODE_BROKER__API: brokers.api,
      NODE_BROKER__MODE: mode,
      NODE_BROKER__POLL_INTERVAL_MS: String(POLL_MS),
      NODE_MEMPOOL__MAX_RECORDS: '200000',
      NODE_RATE_LIMIT__RPS: '1000000',
      NODE_RATE_LIMIT__BURST: '1000000',
      MAX_BODY_BYTES: String(64 * 1024 * 1024),
    },
  });
  const n0 = cluster.nodes[0] as LocalNode;
  try {
    const t0 = performance.now();
    await cluster.startAll();
    // ---- the first pass, until every observation is final
    const expected = 2 * entities * ATTRS;
    let finalized = 0;
    let scanned = 0;
    while (finalized < expected) {
      scanned = await scanBlocks(cluster, n0, scanned + 1, () => {
        finalized++;
      });
      if (performance.now() - t0 > 3_600_000) throw new Error(`first pass: ${finalized}/${expected} after an hour`);
      await sleep(1000);
    }
    const firstSeconds = (performance.now() - t0) / 1000;
    out.first_pass = {
      records: finalized,
      seconds_until_all_final: Math.round(firstSeconds),
      records_per_second: Math.round(finalized / firstSeconds),
      load_average_after: load(),
    };
    console.log(`${mode} ${brokers.api} first pass: ${JSON.stringify(out.first_pass)}`);
    if (mode === 'subscribe')
      while (
        !(await Promise.all(cluster.nodes.map((n) => watchStatus(cluster, n)))).every((w) =>
          w.brokers.every((b) => b.subscription?.state === 'active'),
        )
      )
        await sleep(500);
    // ---- idle: settle (two poll intervals, or 20 s), then the requests the brokers serve and each node's RSS
    await sleep(mode === 'poll' ? 2 * POLL_MS : 20_000);
    const idleSeconds = mode === 'poll' ? 60 : 150;
    const peak = cluster.nodes.map(() => 0);
    const sampler = setInterval(() => {
      cluster.nodes.forEach((n, i) => {
        peak[i] = Math.max(peak[i] as number, procStats(n.process?.pid as number).rssMb);
      });
    }, 500);
    const loadBefore = load();
    const r0 = await brokers.requests();
    const i0 = performance.now();
    await sleep(idleSeconds * 1000);
    const r1 = await brokers.requests();
    const seconds = (performance.now() - i0) / 1000;
    clearInterval(sampler);
    out.idle = {
      seconds: Math.round(seconds),
      broker_requests_per_second:
        r0 === undefined || r1 === undefined ? null : Math.round(((r1 - r0) / seconds) * 100) / 100,
      rss_mb_per_node: peak,
      load_average: { before: loadBefore, after: load() },
    };
    console.log(`${mode} ${brokers.api} idle: ${JSON.stringify(out.idle)}`);
    // ---- tamper burst: 1 % of the attributes at once on a federated broker
    const writes = new BrokerWrites(fedA, brokers.api);
    const count = Math.max(1, Math.round(entities * ATTRS * TAMPER_FRACTION));
    const targets = Array.from({ length: count }, (_, k) => ({ i: (k * 7919) % entities, j: k % ATTRS }));
    const key = (i: number, j: number) => `${entityId(i)}\u0000${attributeName(j)}`;
    const burst = new Map(targets.map((t) => [key(t.i, t.j), 0]));
    let height = await cluster.height(n0);
    if (mode === 'poll') {
      // Between passes, as before: right after node 0 ended one.
      const passes = (await watchStatus(cluster, n0)).passes;
      while ((await watchStatus(cluster, n0)).passes === passes) await sleep(50);
    }
    const w0 = Date.now();
    await writes.setMany(targets.map(({ i, j }) => ({ i, j, value: `tampered-${String(attributeValue(i, j))}` })));
    const written = Date.now();
    for (const k of burst.keys()) burst.set(k, written);
    const burstLatencies: number[] = [];
    while (burst.size > 0) {
      height = await scanBlocks(cluster, n0, height + 1, (r, at) => {
        const k = `${r.entity}\u0000${r.attribute}`;
        if (r.verdict === 'TAMPERED' && burst.has(k)) {
          burstLatencies.push(at - (burst.get(k) as number));
          burst.delete(k);
        }
      });
      if (Date.now() - w0 > 600_000) throw new Error(`burst: ${burst.size} not final after 10 min`);
      await sleep(100);
    }
    out.tamper_burst = {
      attributes: count,
      write_seconds: Math.round((written - w0) / 100) / 10,
      change_to_final_ms: summary(burstLatencies),
      load_average: load(),
    };
    console.log(`${mode} ${brokers.api} burst: ${JSON.stringify(out.tamper_burst)}`);
    // ---- tamper trickle: single changes 0.2 s apart (the other attribute of the burst's first entities)
    const trickle = new Map<string, number>();
    const trickleLatencies: number[] = [];
    const seen = (r: { entity?: string; attribute?: string; verdict?: string }, at: number) => {
      const k = `${r.entity}\u0000${r.attribute}`;
      if (r.verdict === 'TAMPERED' && trickle.has(k)) {
        trickleLatencies.push(at - (trickle.get(k) as number));
        trickle.delete(k);
      }
    };
    const t1 = Date.now();
    for (let k = 0; k < TRICKLE; k++) {
      const i = (k * 104_729 + 17) % entities;
      const j = (k % (ATTRS - 1)) + 1;
      await writes.set(i, j, -100_000 - k);
      trickle.set(key(i, j), Date.now());
      height = await scanBlocks(cluster, n0, height + 1, seen);
      await sleep(200);
    }
    while (trickle.size > 0) {
      height = await scanBlocks(cluster, n0, height + 1, seen);
      if (Date.now() - t1 > 600_000) throw new Error(`trickle: ${trickle.size} not final after 10 min`);
      await sleep(50);
    }
    out.tamper_trickle = { changes: TRICKLE, change_to_final_ms: summary(trickleLatencies), load_average: load() };
    console.log(`${mode} ${brokers.api} trickle: ${JSON.stringify(out.tamper_trickle)}`);
  } finally {
    await cluster.stopAll();
  }
  return out;
}

// ---- 1. poll and subscribe side by side, the test brokers at ENTITIES ------------------------------------------
if (PARTS.has('1')) {
  const sideBySide: Record<string, unknown> = {};
  for (const mode of MODES) {
    const brokers = await testBrokers(ENTITIES);
    try {
      sideBySide[mode] = await measure(mode, brokers, ENTITIES);
    } finally {
      await brokers.stop();
    }
  }
  const rate = (m: string) =>
    (sideBySide[m] as { idle: { broker_requests_per_second: number } }).idle.broker_requests_per_second;
  if (MODES.length === 2)
    sideBySide.idle_requests_fewer_by = Math.round(rate('poll') / Math.max(rate('subscribe'), 0.001));
  results.test_brokers = { at: now(), ...sideBySide };
}

// ---- 2. the watcher alone at a million entities -----------------------------------------------------------------
if (PARTS.has('2')) {
  const file = join(tmpdir(), `watcher-alone-${process.pid}.json`);
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, [...NODE_RUNTIME_FLAGS, join(here, 'watcher-alone.ts')], {
      stdio: 'inherit',
      env: { ...process.env, ...NODE_RUNTIME_ENV, BENCH_WATCH_ENTITIES: '1000000', BENCH_WATCH_OUT: file },
    });
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`watcher-alone exited ${code}`))));
  });
  results.watcher_alone_1m = { at: now(), ...JSON.parse(readFileSync(file, 'utf8')) };
  rmSync(file, { force: true });
}

// ---- 3. FIWARE Scorpio at 10,000 entities ------------------------------------------------------------------------
if (PARTS.has('3')) {
  const brokers = await scorpioBrokers(10_000);
  try {
    results.scorpio = { at: now(), ...(await measure('subscribe', brokers, 10_000)) };
  } finally {
    await brokers.stop();
  }
}

mkdirSync(join(here, '..', 'results'), { recursive: true });
writeFileSync(RESULTS, `${JSON.stringify(results, null, 2)}\n`);
console.log('wrote bench/results/ledger-watch.json');
