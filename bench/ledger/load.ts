// Load generator for the ledger benchmark, run as its own process: submits records by POST /mempool
// round-robin over the nodes and watches one node's chain to time submit-to-finality per record.
// Input: one JSON argument. Output: one JSON line on stdout.
import { Agent, request } from 'undici';

interface Options {
  urls: string[];
  token: string;
  /** throughput: as fast as `concurrency` allows; light/rate: one batch every intervalMs. */
  mode: 'throughput' | 'light' | 'rate';
  durationMs: number;
  batch: number;
  concurrency: number;
  intervalMs: number;
  drainMs: number;
  /** throughput mode: most records in flight (submitted, not final). */
  maxOutstanding: number;
}

const opts = JSON.parse(process.argv[2] ?? '{}') as Options;
const agent = new Agent({ connections: 32, keepAliveTimeout: 30_000 });
const headers = { authorization: `Bearer ${opts.token}`, 'content-type': 'application/json' };
const submittedAt = new Map<string, number>();
const latencies: number[] = [];
let finalized = 0;
let firstFinalAt = 0;
let lastFinalAt = 0;
let accepted = 0;
let seq = 0;
const runId = `${process.pid}-${Date.now()}`;

async function getJson(url: string): Promise<unknown> {
  const res = await request(url, { dispatcher: agent, headersTimeout: 30_000, bodyTimeout: 30_000 });
  return res.body.json();
}

async function submit(target: string): Promise<void> {
  const records = [];
  const now = performance.now();
  for (let i = 0; i < opts.batch; i++) {
    const id = `bench-${runId}-${seq++}`;
    records.push({
      id,
      entity: `urn:ngsi-ld:Sensor:${seq % 1000}`,
      attribute: 'temperature',
      value: seq % 97,
      verdict: 'OK',
    });
    submittedAt.set(id, now);
  }
  const res = await request(`${target}/mempool`, {
    method: 'POST',
    dispatcher: agent,
    headers,
    body: JSON.stringify({ records }),
  });
  const body = (await res.body.json()) as { accepted?: number };
  if (res.statusCode === 200) accepted += body.accepted ?? 0;
  else for (const r of records) submittedAt.delete(r.id);
}

let watching = true;
async function watch(): Promise<void> {
  const base = opts.urls[0] as string;
  let height = ((await getJson(`${base}/chain`)) as { height: number }).height;
  while (watching) {
    let tip: number;
    try {
      tip = ((await getJson(`${base}/chain`)) as { height: number }).height;
    } catch {
      continue; // a starved node answers late; keep watching
    }
    for (let h = height + 1; h <= tip && watching; h++) {
      let block: { records: Array<{ id: string }> };
      try {
        block = (await getJson(`${base}/blocks/${h}`)) as { records: Array<{ id: string }> };
      } catch {
        h--;
        continue;
      }
      const at = performance.now();
      for (const r of block.records) {
        const t = submittedAt.get(r.id);
        if (t === undefined) continue;
        submittedAt.delete(r.id);
        latencies.push(at - t);
        finalized++;
        if (!firstFinalAt) firstFinalAt = at;
        lastFinalAt = at;
      }
    }
    height = tip;
    await new Promise((r) => setTimeout(r, opts.mode === 'light' ? 5 : 10));
  }
}

function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

const watcher = watch();
const start = performance.now();
const end = start + opts.durationMs;
if (opts.mode === 'throughput') {
  let next = 0;
  await Promise.all(
    Array.from({ length: opts.concurrency }, async () => {
      while (performance.now() < end) {
        // Closed loop: keep at most maxOutstanding records submitted and not yet final, so the
        // figure is the cluster's sustained rate rather than the growth of a backlog.
        if (submittedAt.size >= opts.maxOutstanding) {
          await new Promise((r) => setTimeout(r, 5));
          continue;
        }
        const target = opts.urls[next++ % opts.urls.length] as string;
        await submit(target).catch(() => undefined);
      }
    }),
  );
} else if (opts.mode === 'rate') {
  // Open loop on a fixed schedule: batch k leaves at start + k × intervalMs, whatever the replies do.
  let k = 0;
  const inFlight = new Set<Promise<void>>();
  while (performance.now() < end) {
    const due = start + k * opts.intervalMs;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const p = submit(opts.urls[k++ % opts.urls.length] as string).catch(() => undefined);
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
  }
  await Promise.all(inFlight);
} else {
  let next = 0;
  while (performance.now() < end) {
    await submit(opts.urls[next++ % opts.urls.length] as string).catch(() => undefined);
    await new Promise((r) => setTimeout(r, opts.intervalMs));
  }
}
const submitEnd = performance.now();
const drainDeadline = submitEnd + opts.drainMs;
while (submittedAt.size > 0 && performance.now() < drainDeadline) await new Promise((r) => setTimeout(r, 20));
watching = false;
await watcher;
latencies.sort((a, b) => a - b);
const windowMs = Math.max(1, lastFinalAt - start);
process.stdout.write(
  `${JSON.stringify({
    mode: opts.mode,
    submitted: seq,
    accepted,
    finalized,
    unfinalized: submittedAt.size,
    submit_seconds: (submitEnd - start) / 1000,
    records_per_second: Math.round((finalized / windowMs) * 1000),
    latency_ms: {
      p50: Math.round(pct(latencies, 50) * 10) / 10,
      p99: Math.round(pct(latencies, 99) * 10) / 10,
      max: Math.round((latencies.at(-1) ?? 0) * 10) / 10,
    },
  })}\n`,
);
await agent.close();
