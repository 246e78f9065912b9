// The load loop of bench/ledger/load.ts, apart from the chain it loads: submits batches round-robin over the
// nodes (closed loop, fixed rate or light) and watches one node's chain to time submit-to-finality per record.
// bench/peers runs the same loop against CometBFT, so both chains are loaded and observed the same way.

export interface LoadOptions {
  urls: string[];
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

/** What the loop needs of a chain. */
export interface ChainClient {
  /** Submits the records `ids` to the node at `target`; returns those it accepted (ids not returned are dropped). */
  submit(target: string, ids: string[], seq: number): Promise<{ accepted: number; rejected: string[] }>;
  /** The height of the last final block on the watched node. */
  tip(): Promise<number>;
  /** The record ids in the final block at `height` on the watched node. */
  idsAt(height: number): Promise<string[]>;
}

export interface LoadResult {
  mode: string;
  submitted: number;
  accepted: number;
  finalized: number;
  unfinalized: number;
  submit_seconds: number;
  records_per_second: number;
  latency_ms: { p50: number; p99: number; max: number };
}

/** The p-th percentile of an ascending array (nearest rank below). */
export function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

export async function runLoadLoop(opts: LoadOptions, chain: ChainClient): Promise<LoadResult> {
  const submittedAt = new Map<string, number>();
  const latencies: number[] = [];
  let finalized = 0;
  let lastFinalAt = 0;
  let accepted = 0;
  let seq = 0;
  const runId = `${process.pid}-${Date.now()}`;

  async function submit(target: string): Promise<void> {
    const ids = [];
    const first = seq;
    const now = performance.now();
    for (let i = 0; i < opts.batch; i++) {
      const id = `bench-${runId}-${seq++}`;
      ids.push(id);
      submittedAt.set(id, now);
    }
    // A submission that fails outright leaves its records counted as unfinalized.
    const r = await chain.submit(target, ids, first);
    accepted += r.accepted;
    for (const id of r.rejected) submittedAt.delete(id);
  }

  let watching = true;
  async function watch(): Promise<void> {
    let height = await chain.tip();
    while (watching) {
      let tip: number;
      try {
        tip = await chain.tip();
      } catch {
        continue; // a starved node answers late; keep watching
      }
      for (let h = height + 1; h <= tip && watching; h++) {
        let ids: string[];
        try {
          ids = await chain.idsAt(h);
        } catch {
          h--;
          continue;
        }
        const at = performance.now();
        for (const id of ids) {
          const t = submittedAt.get(id);
          if (t === undefined) continue;
          submittedAt.delete(id);
          latencies.push(at - t);
          finalized++;
          lastFinalAt = at;
        }
      }
      height = tip;
      await new Promise((r) => setTimeout(r, opts.mode === 'light' ? 5 : 10));
    }
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
  return {
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
  };
}
