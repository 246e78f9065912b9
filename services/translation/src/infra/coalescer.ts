// Group commit: calls submitted while a batch is in flight wait and go together in the next one. No timer: under
// light load a call goes out on the next turn of the event loop (alone, through the single path); under load the
// batch grows to whatever arrived during one round trip, so the number of statements per request falls as load rises.

export interface CoalescerOptions<A, R> {
  /** Runs a batch of two or more calls as one statement; results in the same order as `args`. */
  batch(args: A[]): Promise<R[]>;
  /** Runs one call alone (a batch of one, and every call of a failed batch, one by one). */
  single(args: A): Promise<R>;
  /** Batches in flight at once (each holds one database connection). */
  maxInFlight: number;
  /** Calls per batch. */
  maxBatch: number;
  /** Called with the size and the calls of each batch sent (metrics). */
  onBatch?(size: number, args: A[]): void;
  /** Called when a batch statement failed and its calls run one by one. */
  onFallback?(error: unknown, size: number): void;
}

interface Pending<A, R> {
  args: A;
  resolve(result: R): void;
  reject(error: unknown): void;
}

/**
 * Coalesces concurrent calls into batches.
 * @example const c = new Coalescer({ batch: runMany, single: runOne, maxInFlight: 2, maxBatch: 256 }); await c.submit(x);
 */
export class Coalescer<A, R> {
  readonly #opts: CoalescerOptions<A, R>;
  #queue: Pending<A, R>[] = [];
  #inFlight = 0;
  #scheduled = false;

  constructor(opts: CoalescerOptions<A, R>) {
    if (opts.maxInFlight < 1 || opts.maxBatch < 1) throw new RangeError('maxInFlight and maxBatch must be ≥ 1');
    this.#opts = opts;
  }

  /** Calls waiting for a batch (not yet sent). */
  get queued(): number {
    return this.#queue.length;
  }

  submit(args: A): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.#queue.push({ args, resolve, reject });
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#scheduled || this.#queue.length === 0 || this.#inFlight >= this.#opts.maxInFlight) return;
    this.#scheduled = true;
    // After the current I/O callbacks: every request parsed in this turn joins the same batch.
    setImmediate(() => {
      this.#scheduled = false;
      this.#flush();
    });
  }

  #flush(): void {
    while (this.#queue.length > 0 && this.#inFlight < this.#opts.maxInFlight) {
      const batch = this.#queue.splice(0, this.#opts.maxBatch);
      this.#inFlight++;
      this.#opts.onBatch?.(
        batch.length,
        batch.map((p) => p.args),
      );
      void this.#run(batch).finally(() => {
        this.#inFlight--;
        this.#schedule();
      });
    }
  }

  async #run(batch: Pending<A, R>[]): Promise<void> {
    if (batch.length > 1) {
      let results: R[] | undefined;
      try {
        results = await this.#opts.batch(batch.map((p) => p.args));
      } catch (error) {
        this.#opts.onFallback?.(error, batch.length);
        // The statement failed as a whole (one bad call, a lost connection): nothing of it was applied, so each call
        // runs again on its own below and one bad call cannot fail the others.
      }
      if (results) {
        if (results.length === batch.length) {
          for (let i = 0; i < batch.length; i++) batch[i]!.resolve(results[i] as R);
        } else {
          // Applied, but the answer does not line up with the calls: never apply them twice.
          const error = new Error(`batch of ${batch.length} answered ${results.length} results`);
          for (const p of batch) p.reject(error);
        }
        return;
      }
    }
    await Promise.all(
      batch.map(async (p) => {
        try {
          p.resolve(await this.#opts.single(p.args));
        } catch (error) {
          p.reject(error);
        }
      }),
    );
  }
}
