// Ledger watch benchmark (`BENCH=ledger-watch make bench`): 1 primary and 2 federated test brokers
// (separate processes), ENTITIES entities of 10 attributes each, 4 validators on loopback watching them.
//   1. the first pass, which notarises every observation: time until all its records are final;
//   2. steady comparison passes (nothing changed): pass duration and RSS per node (targets ≤ 10 s, ≤ 300 MB),
//      after one settling pass whose peak RSS is reported apart;
//   3. 1% of the attributes tampered on a federated broker between passes (right after node 0 ended one): time
//      from the change to a finalized TAMPERED record for each, p50 and p99 (target: poll interval + 1 s);
//   4. an idle cluster (no brokers): blocks per second and CPU % of the 4 node processes.
// Writes bench/results/ledger-watch.json. BENCH_WATCH_ENTITIES scales the data (default 100000).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { LocalCluster, type LocalNode } from '@scriptorium/ledger-node/cluster';
import { attributeName, attributeValue, ENTITY_TYPE, entityId } from '@scriptorium/ledger-node/test-broker';
import type { Block } from '@scriptorium/ledger-protocol';
import { type BrokerProcess, startBroker } from './brokers.ts';

const here = import.meta.dirname;
const ENTITIES = Number(process.env.BENCH_WATCH_ENTITIES ?? 100_000);
const ATTRS = 10;
const POLL_MS = Number(process.env.BENCH_WATCH_POLL_MS ?? 10_000);
const TAMPER_FRACTION = 0.01;
const IDLE_SECONDS = Number(process.env.BENCH_WATCH_IDLE_SECONDS ?? 30);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const load = () => loadavg().map((x) => Math.round(x * 100) / 100);

/** A field of a /proc file in kB (`VmRSS:`, `Rss:`, …), 0 when absent. */
const procKb = (text: string, field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? 0);

/** RSS and its peak so far (MB), and CPU time (s) of a process, from /proc. */
function procStats(pid: number): { rssMb: number; peakRssMb: number; cpuSeconds: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  const ticks = Number(stat[11]) + Number(stat[12]);
  return {
    rssMb: Math.round(procKb(status, 'VmRSS') / 1024),
    peakRssMb: Math.round(procKb(status, 'VmHWM') / 1024),
    cpuSeconds: ticks / 100,
  };
}

/**
 * Where a node's resident memory is, at one moment: the JavaScript heap (used and reserved) and the Buffers
 * (from its /metrics), and from /proc the resident anonymous memory and the resident pages of files (the node
 * binary and libraries).
 */
async function memoryBreakdown(cluster: LocalCluster, node: LocalNode): Promise<Record<string, number>> {
  const text = String((await cluster.get(node, '/metrics')).body);
  const metric = (name: string) =>
    Number(new RegExp(`^scriptorium_ledger_${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
  const rollup = readFileSync(`/proc/${node.process?.pid}/smaps_rollup`, 'utf8');
  const mb = (bytes: number) => Math.round(bytes / 2 ** 20);
  return {
    rss_mb: Math.round(procKb(rollup, 'Rss') / 1024),
    anonymous_mb: Math.round(procKb(rollup, 'Anonymous') / 1024),
    file_mb: Math.round((procKb(rollup, 'Rss') - procKb(rollup, 'Anonymous')) / 1024),
    heap_used_mb: mb(metric('nodejs_heap_size_used_bytes')),
    heap_total_mb: mb(metric('nodejs_heap_size_total_bytes')),
    external_mb: mb(metric('nodejs_external_memory_bytes')),
  };
}

interface WatchStatus {
  passes: number;
  lastPass?: {
    startedAt: number;
    durationMs: number;
    submitted: { ok: number; tampered: number };
    waitedMs: number;
    parsedPages: number;
    parsedEntities: number;
  };
}

async function watchStatus(cluster: LocalCluster, node: LocalNode): Promise<WatchStatus> {
  return ((await cluster.get(node, '/watch')).body as { watcher: WatchStatus }).watcher;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

const results: Record<string, unknown> = {
  machine: { cpus: cpus().length, model: cpus()[0]?.model ?? 'unknown', node: process.version },
  at: new Date().toISOString(),
  entities: ENTITIES,
  attributes_per_entity: ATTRS,
  federated_brokers: 2,
  validators: 4,
  poll_interval_ms: POLL_MS,
};

// ---- 4. idle cluster first (no brokers): blocks/s and CPU of the 4 nodes -------------------------------
{
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
    const cpuPercent = (cpu1.reduce((a, c, i) => a + (c - (cpu0[i] as number)), 0) / seconds) * 100;
    results.idle = {
      seconds: Math.round(seconds),
      blocks_per_second: Math.round(((h1 - h0) / seconds) * 100) / 100,
      cpu_percent_of_one_core_4_nodes: Math.round(cpuPercent * 10) / 10,
      load_average: { before: loadBefore, after: load() },
    };
    console.log(`idle: ${JSON.stringify(results.idle)}`);
  } finally {
    await cluster.stopAll();
  }
}

// ---- brokers and a watching cluster -------------------------------------------------------------------
const brokers = await Promise.all([41_026, 41_027, 41_028].map((port) => startBroker(port, ENTITIES, ATTRS)));
const [primary, fedA, fedB] = brokers as [BrokerProcess, BrokerProcess, BrokerProcess];
const expectedFirstPass = 2 * ENTITIES * ATTRS;
const cluster = await LocalCluster.create({
  size: 4,
  roundTimeoutMs: 2000,
  env: {
    LOG_LEVEL: 'warn',
    NODE_BROKER__PRIMARY_URL: primary.url,
    NODE_BROKER__FEDERATED_URLS: `${fedA.url},${fedB.url}`,
    NODE_BROKER__POLL_INTERVAL_MS: String(POLL_MS),
    NODE_MEMPOOL__MAX_RECORDS: '200000',
    NODE_RATE_LIMIT__RPS: '1000000',
    NODE_RATE_LIMIT__BURST: '1000000',
    MAX_BODY_BYTES: String(64 * 1024 * 1024),
  },
});
try {
  const t0 = performance.now();
  await cluster.startAll();
  const n0 = cluster.nodes[0] as LocalNode;
  // ---- 1. first pass: until every observation is on the chain ------------------------------------------
  let finalized = 0;
  let scanned = 0;
  while (finalized < expectedFirstPass) {
    const height = await cluster.height(n0);
    for (let h = scanned + 1; h <= height; h++)
      finalized += ((await cluster.get(n0, `/blocks/${h}`)).body as Block).records.length;
    scanned = height;
    if (performance.now() - t0 > 3_600_000)
      throw new Error(`first pass: ${finalized}/${expectedFirstPass} after an hour`);
    await sleep(1000);
  }
  const firstPassSeconds = (performance.now() - t0) / 1000;
  results.first_pass = {
    records: finalized,
    seconds_until_all_final: Math.round(firstPassSeconds),
    records_per_second: Math.round(finalized / firstPassSeconds),
    // The high-water mark of each node's RSS from its start to the end of the first pass (not a target).
    peak_rss_mb: cluster.nodes.map((n) => procStats(n.process?.pid as number).peakRssMb),
    load_average_after: load(),
  };
  console.log(`first pass: ${JSON.stringify(results.first_pass)}`);

  // ---- 2. steady passes ---------------------------------------------------------------------------------
  // The pass in flight when the first pass turned final, and the next, still carry the burst's memory (the
  // trimmer gives it back within seconds): their peak RSS is reported apart ("settling"), and the target's
  // figure is the peak over the two passes after them.
  const passesAt = await Promise.all(cluster.nodes.map(async (n) => (await watchStatus(cluster, n)).passes));
  const SETTLING_PASSES = 1;
  const STEADY_PASSES = 2;
  const steady: Array<{
    node: string;
    pass_seconds: number;
    rss_mb: number;
    rss_mb_settling: number;
    submitted: number;
  }> = [];
  const passesNow = [...passesAt];
  const peakSettling = cluster.nodes.map(() => 0);
  const peakSteady = cluster.nodes.map(() => 0);
  const sampler = setInterval(() => {
    cluster.nodes.forEach((n, i) => {
      const rss = procStats(n.process?.pid as number).rssMb;
      const done = (passesNow[i] as number) - (passesAt[i] as number);
      if (done <= SETTLING_PASSES) peakSettling[i] = Math.max(peakSettling[i] as number, rss);
      else if (done <= SETTLING_PASSES + STEADY_PASSES) peakSteady[i] = Math.max(peakSteady[i] as number, rss);
    });
  }, 250);
  const loadSteady = load();
  for (;;) {
    const statuses = await Promise.all(cluster.nodes.map((n) => watchStatus(cluster, n)));
    statuses.forEach((s, i) => {
      passesNow[i] = s.passes;
    });
    if (statuses.every((s, i) => s.passes >= (passesAt[i] as number) + SETTLING_PASSES + STEADY_PASSES + 1)) {
      statuses.forEach((s, i) => {
        const n = cluster.nodes[i] as LocalNode;
        steady.push({
          node: n.nodeId,
          pass_seconds: Math.round((s.lastPass?.durationMs ?? 0) / 100) / 10,
          rss_mb: peakSteady[i] as number,
          rss_mb_settling: peakSettling[i] as number,
          submitted: (s.lastPass?.submitted.ok ?? 0) + (s.lastPass?.submitted.tampered ?? 0),
        });
      });
      break;
    }
    await sleep(500);
  }
  clearInterval(sampler);
  const memory = Object.fromEntries(
    await Promise.all(cluster.nodes.map(async (n) => [n.nodeId, await memoryBreakdown(cluster, n)] as const)),
  );
  results.steady_pass = { per_node: steady, memory_after: memory, load_average: { before: loadSteady, after: load() } };
  console.log(`steady pass: ${JSON.stringify(results.steady_pass)}`);

  // ---- 3. 1% tampered on a federated broker --------------------------------------------------------------
  const count = Math.max(1, Math.round(ENTITIES * ATTRS * TAMPER_FRACTION));
  const targets: Array<{ i: number; j: number }> = [];
  for (let k = 0; k < count; k++) targets.push({ i: (k * 7919) % ENTITIES, j: k % ATTRS });
  const pending = new Map(targets.map((t) => [`${entityId(t.i)}\u0000${attributeName(t.j)}`, 0]));
  const startHeight = await cluster.height(n0);
  // "Between passes": the changes are written as soon as node 0 has finished a pass (polled every 50 ms), so the
  // next pass of node 0 sees them; a change made while a pass is reading its page waits for the pass after.
  const passesBefore = (await watchStatus(cluster, n0)).passes;
  while ((await watchStatus(cluster, n0)).passes === passesBefore) await sleep(50);
  // Write the changes through the broker's own batch API, 500 entities per request.
  const changeAt = Date.now();
  for (let s = 0; s < targets.length; s += 500) {
    const entities = targets.slice(s, s + 500).map(({ i, j }) => ({
      id: entityId(i),
      type: ENTITY_TYPE,
      [attributeName(j)]: { type: 'Text', value: `tampered-${String(attributeValue(i, j))}` },
    }));
    const res = await fetch(`${fedA.url}/v2/op/update`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ actionType: 'update', entities }),
    });
    if (res.status !== 204) throw new Error(`tamper batch: ${res.status}`);
  }
  const changeDone = Date.now();
  for (const key of pending.keys()) pending.set(key, changeDone);
  const latencies: number[] = [];
  // Each node's first pass that started after the change: when it started and how long it took (a federated
  // broker's records are submitted once its whole listing is read, so these bound the detection).
  const firstPassAfter = new Map<
    string,
    {
      started_after_change_ms: number;
      seconds: number;
      tampered: number;
      parsed_pages: number;
      parsed_entities: number;
    }
  >();
  const trackPasses = async () => {
    for (const n of cluster.nodes) {
      if (firstPassAfter.has(n.nodeId)) continue;
      const last = (await watchStatus(cluster, n)).lastPass;
      if (last && last.startedAt >= changeDone)
        firstPassAfter.set(n.nodeId, {
          started_after_change_ms: last.startedAt - changeDone,
          seconds: Math.round(last.durationMs / 100) / 10,
          tampered: last.submitted.tampered,
          parsed_pages: last.parsedPages,
          parsed_entities: last.parsedEntities,
        });
    }
  };
  let scannedTo = startHeight;
  while (pending.size > 0) {
    await trackPasses();
    const height = await cluster.height(n0);
    for (let h = scannedTo + 1; h <= height; h++) {
      const block = (await cluster.get(n0, `/blocks/${h}`)).body as Block;
      const now = Date.now();
      for (const r of block.records) {
        const rec = r as { entity?: string; attribute?: string; verdict?: string };
        const key = `${rec.entity}\u0000${rec.attribute}`;
        if (rec.verdict === 'TAMPERED' && pending.has(key)) {
          latencies.push(now - (pending.get(key) as number));
          pending.delete(key);
        }
      }
    }
    scannedTo = height;
    if (Date.now() - changeAt > 600_000) throw new Error(`tamper detection: ${pending.size} not recorded after 10 min`);
    await sleep(100);
  }
  for (let i = 0; i < 300 && firstPassAfter.size < cluster.nodes.length; i++) {
    await trackPasses();
    await sleep(100);
  }
  latencies.sort((a, b) => a - b);
  results.tamper = {
    tampered_attributes: count,
    write_seconds: Math.round((changeDone - changeAt) / 100) / 10,
    change_to_final_ms: { p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: latencies.at(-1) },
    target_ms: POLL_MS + 1000,
    first_pass_after_change: Object.fromEntries(firstPassAfter),
    load_average: load(),
  };
  console.log(`tamper: ${JSON.stringify(results.tamper)}`);
} finally {
  await cluster.stopAll();
  for (const b of brokers) b.stop();
}

mkdirSync(join(here, '..', 'results'), { recursive: true });
writeFileSync(join(here, '..', 'results', 'ledger-watch.json'), `${JSON.stringify(results, null, 2)}\n`);
console.log('wrote bench/results/ledger-watch.json');
