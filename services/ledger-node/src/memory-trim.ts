// Gives the memory of an allocation burst back to the OS, once the burst is over.
//
// Node 24's JavaScript engine keeps every heap page a garbage collection frees in a pool for later reuse, resident, and
// releases the pool only on a "last resort" collection (or a memory-pressure notification, which Node does not
// expose). It also grows the young generation with the allocation rate (up to 64 MiB a semi-space, 128 MiB
// committed) and keeps it. A burst of allocation, such as a watcher's first pass over 100k entities (2M records
// built, gossiped and applied), therefore leaves a node's RSS at its peak for good: measured at 20k entities, 65 MiB of
// heap and 164 MiB of resident 256 KiB heap pages. The trimmer watches what the process holds beyond its live heap
// and its Buffers, and when that has grown by more than `slackBytes` over the lowest seen AND the event loop was idle
// since the last check, runs one last-resort collection (a pause of 0.1–0.3 s on a 100 MiB heap), which unmaps the
// pooled pages and shrinks the young generation back to 1 MiB.
//
// Why only when idle: under load the pooled pages and a large young generation are what keep the allocation fast (a
// young generation capped at 8 MiB and a collection every few seconds cost the consensus path ~40 % of its
// throughput); memory is given back when the burst is over, not taxed while it runs.
//
// The collection needs the `gc` function of --expose-gc (NODE_RUNTIME_FLAGS); without it (a node started inside
// another process, as tests do) the trimmer does nothing.

/** The options of the engine's gc() (--expose-gc) that the trimmer uses. */
type GcFunction = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

export interface MemoryReading {
  rss: number;
  heapUsed: number;
  external: number;
}

export interface MemoryTrim {
  /** RSS before and after the collection, in bytes. */
  rssBefore: number;
  rssAfter: number;
  /** The collection's duration, in milliseconds. */
  ms: number;
}

export interface MemoryTrimOptions {
  /** The engine's gc() (default: the global of --expose-gc, if present). */
  gc?: GcFunction | undefined;
  /** The process's memory (default: process.memoryUsage()). */
  read?: () => MemoryReading;
  /** How far the gap may grow over its lowest value before a collection (default 8 MiB). */
  slackBytes?: number;
  /** How often start() checks (default 2 s). */
  intervalMs?: number;
  /** The event loop's utilization (0–1) since the previous call (default: performance.eventLoopUtilization). */
  busy?: () => number;
  /** A collection runs only when the loop was busy less than this since the last check (default 0.1). */
  idleBelow?: number;
  /** Called after each collection. */
  onTrim?: (trim: MemoryTrim) => void;
}

export const DEFAULT_TRIM_SLACK_BYTES = 8 * 1024 * 1024;
export const DEFAULT_TRIM_INTERVAL_MS = 2_000;
export const DEFAULT_TRIM_IDLE_BELOW = 0.1;

/**
 * RSS beyond the live JavaScript heap and the Buffers: the binary, code, malloc, the pooled pages and the committed
 * but unused heap (a grown young generation among it).
 */
export const unaccountedBytes = (m: MemoryReading): number => m.rss - m.heapUsed - m.external;

/** The event loop's utilization since the previous call, from the process's own accounting. */
function loopUtilization(): () => number {
  let last = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const since = performance.eventLoopUtilization(now, last);
    last = now;
    // Before the loop has run (no time counted yet) nothing says it is idle.
    return Number.isFinite(since.utilization) ? since.utilization : 1;
  };
}

export class MemoryTrimmer {
  private readonly gc: GcFunction | undefined;
  private readonly read: () => MemoryReading;
  private readonly slackBytes: number;
  private readonly intervalMs: number;
  private readonly onTrim: ((trim: MemoryTrim) => void) | undefined;
  private readonly busy: () => number;
  private readonly idleBelow: number;
  /** The lowest gap seen: what the process needs besides the heap when no pages are pooled. */
  private floor = Number.POSITIVE_INFINITY;
  private timer: NodeJS.Timeout | undefined;

  constructor(options: MemoryTrimOptions = {}) {
    this.gc = 'gc' in options ? options.gc : (globalThis as { gc?: GcFunction }).gc;
    this.read = options.read ?? (() => process.memoryUsage());
    this.slackBytes = options.slackBytes ?? DEFAULT_TRIM_SLACK_BYTES;
    this.intervalMs = options.intervalMs ?? DEFAULT_TRIM_INTERVAL_MS;
    this.onTrim = options.onTrim;
    this.busy = options.busy ?? loopUtilization();
    this.idleBelow = options.idleBelow ?? DEFAULT_TRIM_IDLE_BELOW;
  }

  /** Whether collections can run at all (--expose-gc). */
  get enabled(): boolean {
    return this.gc !== undefined;
  }

  /** Collects when the gap has grown by more than the slack and the loop was idle; the trim, if one ran. */
  check(): MemoryTrim | undefined {
    if (!this.gc) return undefined;
    // Read every time, so that the window is always "since the last check".
    const busy = this.busy();
    const before = this.read();
    const gap = unaccountedBytes(before);
    if (gap < this.floor) this.floor = gap;
    if (gap - this.floor <= this.slackBytes) return undefined;
    // Still busy: the burst is not over, and a collection now would tax it. The next idle check collects.
    if (busy >= this.idleBelow) return undefined;
    const t0 = performance.now();
    this.gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    const ms = performance.now() - t0;
    const after = this.read();
    // The gap right after a last-resort collection is the process's true need: the floor from now on.
    this.floor = unaccountedBytes(after);
    const trim = { rssBefore: before.rss, rssAfter: after.rss, ms };
    this.onTrim?.(trim);
    return trim;
  }

  start(): void {
    if (!this.gc || this.timer) return;
    this.timer = setInterval(() => this.check(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
