import { exponentialDelay } from '@scriptorium/backoff';

/** Exponential per-key retry delay: base × 2^failures, capped. */
export class ExponentialBackoff {
  readonly #failures = new Map<string, number>();
  readonly baseMs: number;
  readonly maxMs: number;
  constructor(baseMs = 200, maxMs = 300_000) {
    this.baseMs = baseMs;
    this.maxMs = maxMs;
  }
  /** The delay before the next retry of `key`, counting this failure. */
  next(key: string): number {
    const failures = this.#failures.get(key) ?? 0;
    this.#failures.set(key, failures + 1);
    return exponentialDelay(failures, this.baseMs, this.maxMs);
  }
  failures(key: string): number {
    return this.#failures.get(key) ?? 0;
  }
  forget(key: string): void {
    this.#failures.delete(key);
  }
}

export interface WorkQueueOptions {
  backoff?: ExponentialBackoff;
  /** Called whenever the number of waiting keys changes (for the queue-depth gauge). */
  onDepth?: (depth: number) => void;
}

/**
 * A work queue like client-go's: a key waits at most once (dedupe), is handled by one worker at a time
 * (a key added while it is processed runs again after), and failed keys retry with exponential backoff.
 *
 * @example
 * const q = new WorkQueue();
 * q.add('default/web');
 * await q.run(2, async (key) => reconcile(key)); // until q.shutDown()
 */
export class WorkQueue {
  readonly #queue: string[] = [];
  readonly #dirty = new Set<string>();
  readonly #processing = new Set<string>();
  readonly #timers = new Map<string, NodeJS.Timeout>();
  readonly #backoff: ExponentialBackoff;
  readonly #onDepth: (depth: number) => void;
  #waiters: Array<() => void> = [];
  #shuttingDown = false;

  constructor(options: WorkQueueOptions = {}) {
    this.#backoff = options.backoff ?? new ExponentialBackoff();
    this.#onDepth = options.onDepth ?? (() => {});
  }

  get length(): number {
    return this.#queue.length;
  }
  get shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  /** True when `key` will be handed to a worker again (it waits, or was added while being processed). */
  pending(key: string): boolean {
    return this.#dirty.has(key) && !this.#shuttingDown;
  }

  /** Queue `key` now (no-op when it already waits). */
  add(key: string): void {
    if (this.#shuttingDown || this.#dirty.has(key)) return;
    this.#dirty.add(key);
    if (this.#processing.has(key)) return; // requeued by done()
    this.#queue.push(key);
    this.#onDepth(this.#queue.length);
    this.#waiters.shift()?.();
  }

  /** Queue `key` after `ms` (the earliest of several pending delays wins). */
  addAfter(key: string, ms: number): void {
    if (this.#shuttingDown) return;
    if (ms <= 0) {
      this.add(key);
      return;
    }
    const pending = this.#timers.get(key);
    if (pending) {
      const due = (pending as NodeJS.Timeout & { dueAt?: number }).dueAt ?? 0;
      if (due <= Date.now() + ms) return;
      clearTimeout(pending);
    }
    const timer = setTimeout(() => {
      this.#timers.delete(key);
      this.add(key);
    }, ms) as NodeJS.Timeout & { dueAt?: number };
    timer.dueAt = Date.now() + ms;
    timer.unref();
    this.#timers.set(key, timer);
  }

  /** Queue `key` after its backoff delay; returns that delay. */
  addRateLimited(key: string): number {
    const delay = this.#backoff.next(key);
    this.addAfter(key, delay);
    return delay;
  }

  /** Clear the retry history of `key` (after a success). */
  forget(key: string): void {
    this.#backoff.forget(key);
  }

  retries(key: string): number {
    return this.#backoff.failures(key);
  }

  /** The next key, or undefined once the queue shuts down. */
  async get(): Promise<string | undefined> {
    for (;;) {
      if (this.#shuttingDown) return undefined;
      if (this.#queue.length > 0) break;
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
    const key = this.#queue.shift()!;
    this.#onDepth(this.#queue.length);
    this.#dirty.delete(key);
    this.#processing.add(key);
    return key;
  }

  /** Mark `key` handled; when it was added meanwhile, it goes back in the queue. */
  done(key: string): void {
    this.#processing.delete(key);
    if (this.#dirty.has(key) && !this.#shuttingDown) {
      this.#queue.push(key);
      this.#onDepth(this.#queue.length);
      this.#waiters.shift()?.();
    }
  }

  /**
   * Run `concurrency` workers until shutDown(). A handler that throws is retried with backoff;
   * one that resolves `{ requeueAfterMs }` runs again after that delay.
   */
  async run(
    concurrency: number,
    handler: (key: string) => Promise<{ requeueAfterMs?: number } | undefined>,
    onError: (key: string, err: unknown, retryInMs: number) => void = () => {},
  ): Promise<void> {
    const worker = async () => {
      for (;;) {
        const key = await this.get();
        if (key === undefined) return;
        try {
          const result = await handler(key);
          this.forget(key);
          if (result?.requeueAfterMs !== undefined) this.addAfter(key, result.requeueAfterMs);
        } catch (err) {
          if (!this.#shuttingDown) onError(key, err, this.addRateLimited(key));
        } finally {
          this.done(key);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, concurrency) }, worker));
  }

  /** Stop handing out keys; run() resolves once in-flight handlers finish. */
  shutDown(): void {
    this.#shuttingDown = true;
    for (const timer of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
    for (const wake of this.#waiters) wake();
    this.#waiters = [];
  }
}
