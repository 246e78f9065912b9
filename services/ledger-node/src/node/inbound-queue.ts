// The bounded inbound queue in front of the consensus driver: POST /consensus puts admitted messages here
// (503 when full) and returns at once; the queue hands them to the driver one at a time, yielding to I/O
// every 20 ms so a burst never starves the HTTP server.

/** Longest a drain runs before it yields to the event loop. */
const SLICE_MS = 20;

export class InboundQueue<T> {
  private readonly items: Array<T | undefined> = [];
  private head = 0;
  private draining = false;
  private stopped = false;
  private readonly limit: number;
  private readonly handle: (item: T) => void;
  private readonly onDepth: (depth: number) => void;
  private readonly onError: (err: unknown) => void;

  /**
   * @param limit most items waiting; `push` refuses beyond it
   * @param handle called for each item, in order
   * @param onDepth told the depth after every change (a gauge)
   * @param onError told when `handle` throws (the queue goes on)
   */
  constructor(
    limit: number,
    handle: (item: T) => void,
    onDepth: (depth: number) => void,
    onError: (err: unknown) => void,
  ) {
    this.limit = limit;
    this.handle = handle;
    this.onDepth = onDepth;
    this.onError = onError;
  }

  get depth(): number {
    return this.items.length - this.head;
  }

  /** Queues an item; false (nothing queued) when the queue is full or stopped. */
  push(item: T): boolean {
    if (this.stopped || this.depth >= this.limit) return false;
    this.items.push(item);
    this.onDepth(this.depth);
    if (!this.draining) {
      this.draining = true;
      setImmediate(() => this.drain());
    }
    return true;
  }

  /** Drops what is waiting and refuses new items. */
  stop(): void {
    this.stopped = true;
    this.items.length = 0;
    this.head = 0;
  }

  private drain(): void {
    const started = performance.now();
    while (this.head < this.items.length && !this.stopped) {
      const item = this.items[this.head] as T;
      this.items[this.head++] = undefined;
      try {
        this.handle(item);
      } catch (err) {
        this.onError(err);
      }
      if (performance.now() - started > SLICE_MS) break;
    }
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items.splice(0, this.head);
      this.head = 0;
    }
    this.onDepth(this.depth);
    if (this.depth > 0 && !this.stopped) setImmediate(() => this.drain());
    else this.draining = false;
  }
}
