// Gives the memory of an allocation burst back to the OS.
//
// Node 24's JavaScript engine keeps every heap page a garbage collection frees in a pool for later reuse, resident, and
// releases the pool only on a "last resort" collection (or a memory-pressure notification, which Node does not
// expose). A burst of allocation, such as a watcher's first pass over 100k entities (2M records built, gossiped
// and applied), therefore leaves a node's RSS at its peak for good: measured at 20k entities, 65 MiB of heap
// and 164 MiB of resident 256 KiB heap pages. The trimmer watches the gap between the RSS and what the JavaScript
// heap and the Buffers account for, and when it has grown by more than `slackBytes` over the lowest gap seen, runs one
// last-resort collection (a pause of 0.1–0.3 s on a 100 MiB heap), which unmaps the pooled pages.
//
// The collection needs the `gc` function of --expose-gc (NODE_RUNTIME_FLAGS); without it (a node started inside
// another process, as tests do) the trimmer does nothing.

/** The options of the engine's gc() (--expose-gc) that the trimmer uses. */
type GcFunction = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

export interface MemoryReading {
  rss: number;
  heapTotal: number;
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
  /** Called after each collection. */
  onTrim?: (trim: MemoryTrim) => void;
}

export const DEFAULT_TRIM_SLACK_BYTES = 8 * 1024 * 1024;
export const DEFAULT_TRIM_INTERVAL_MS = 2_000;

/** RSS beyond what the JavaScript heap and the Buffers hold: the binary, code, malloc, and the pooled pages. */
export const unaccountedBytes = (m: MemoryReading): number => m.rss - m.heapTotal - m.external;

export class MemoryTrimmer {
  private readonly gc: GcFunction | undefined;
  private readonly read: () => MemoryReading;
  private readonly slackBytes: number;
  private readonly intervalMs: number;
  private readonly onTrim: ((trim: MemoryTrim) => void) | undefined;
  /** The lowest gap seen: what the process needs besides the heap when no pages are pooled. */
  private floor = Number.POSITIVE_INFINITY;
  private timer: NodeJS.Timeout | undefined;

  constructor(options: MemoryTrimOptions = {}) {
    this.gc = 'gc' in options ? options.gc : (globalThis as { gc?: GcFunction }).gc;
    this.read = options.read ?? (() => process.memoryUsage());
    this.slackBytes = options.slackBytes ?? DEFAULT_TRIM_SLACK_BYTES;
    this.intervalMs = options.intervalMs ?? DEFAULT_TRIM_INTERVAL_MS;
    this.onTrim = options.onTrim;
  }

  /** Whether collections can run at all (--expose-gc). */
  get enabled(): boolean {
    return this.gc !== undefined;
  }

  /** Collects when the gap has grown by more than the slack; the trim, if one ran. */
  check(): MemoryTrim | undefined {
    if (!this.gc) return undefined;
    const before = this.read();
    const gap = unaccountedBytes(before);
    if (gap < this.floor) this.floor = gap;
    if (gap - this.floor <= this.slackBytes) return undefined;
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
