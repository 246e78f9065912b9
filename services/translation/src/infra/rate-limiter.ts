// Fixed-window rate limits. The PostgreSQL store is shared by every replica (one atomic upsert per hit);
// the in-memory store is for a single process (PGlite, `make dev`).
import type { RateLimitStore, RateLimits } from '../context.ts';
import type { Database } from '../db/index.ts';
import type { RateLimitDecision } from '../domain/metering.ts';

/**
 * Counts one request against `limit` per `windowMs` in `bucket`.
 * @example const d = await checkRateLimit(store, 'translate:key:abc', 600, 60_000, Date.now());
 */
export async function checkRateLimit(
  store: RateLimitStore,
  bucket: string,
  limit: number,
  windowMs: number,
  now: number,
): Promise<RateLimitDecision> {
  const windowStart = now - (now % windowMs);
  const count = await store.hit(bucket, windowStart, windowMs);
  return decideRateLimit(count, limit, windowStart, windowMs, now);
}

/** The decision for the `count`-th hit of the window starting at `windowStart`. */
export function decideRateLimit(
  count: number,
  limit: number,
  windowStart: number,
  windowMs: number,
  now: number,
): RateLimitDecision {
  const retryAfterSeconds = Math.max(1, Math.ceil((windowStart + windowMs - now) / 1000));
  return { allowed: count <= limit, limit, remaining: Math.max(0, limit - count), retryAfterSeconds };
}

const HIT_SQL = `
INSERT INTO rate_limit_windows (bucket, window_start, window_ms, count) VALUES ($1, $2, $3, 1)
ON CONFLICT (bucket, window_start) DO UPDATE SET count = rate_limit_windows.count + 1
RETURNING count`;

export class PostgresRateLimitStore implements RateLimitStore {
  readonly #database: Database;
  constructor(database: Database) {
    this.#database = database;
  }
  async hit(bucket: string, windowStart: number, windowMs: number): Promise<number> {
    const [row] = await this.#database.query<{ count: number }>(
      HIT_SQL,
      [bucket, windowStart, windowMs],
      'rate_limit_hit',
    );
    return Number(row?.count ?? 0);
  }
}

export class MemoryRateLimitStore implements RateLimitStore {
  readonly #windows = new Map<string, { windowStart: number; windowMs: number; count: number }>();
  #lastSweep = 0;

  async hit(bucket: string, windowStart: number, windowMs: number): Promise<number> {
    this.#sweep(windowStart);
    const w = this.#windows.get(bucket);
    if (w && w.windowStart === windowStart) {
      w.count++;
      return w.count;
    }
    this.#windows.set(bucket, { windowStart, windowMs, count: 1 });
    return 1;
  }

  #sweep(now: number): void {
    if (now - this.#lastSweep < 60_000) return;
    this.#lastSweep = now;
    for (const [bucket, w] of this.#windows) if (w.windowStart + w.windowMs < now) this.#windows.delete(bucket);
  }
}

export function createRateLimits(opts: {
  store: RateLimitStore;
  perMinute: Record<string, number>;
  now: () => number;
}): RateLimits {
  return {
    store: opts.store,
    shared: opts.store instanceof PostgresRateLimitStore,
    perMinute: (route, fallback) => opts.perMinute[route] ?? fallback,
    async check(rules, subject) {
      const now = opts.now();
      let remaining = Number.POSITIVE_INFINITY;
      let retryAfterSeconds = 0;
      for (const rule of rules) {
        const d = await checkRateLimit(opts.store, `${rule.name}:${subject}`, rule.limit, rule.windowMs, now);
        remaining = Math.min(remaining, d.remaining);
        if (!d.allowed) retryAfterSeconds = Math.max(retryAfterSeconds, d.retryAfterSeconds);
      }
      return { remaining, retryAfterSeconds };
    },
  };
}
