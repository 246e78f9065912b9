// Token bucket per request source: `rps` tokens per second, up to `burst`. Buckets idle for a
// minute are dropped so the map stays bounded by the number of active sources.

export interface RateLimiter {
  /** True when the source may proceed (consumes one token). */
  take(source: string): boolean;
  /** True when the source has a token left (consumes none). */
  peek(source: string): boolean;
}

export function createRateLimiter(
  rps: number,
  burst: number,
  now: () => number = () => performance.now(),
): RateLimiter {
  const buckets = new Map<string, { tokens: number; at: number }>();
  let lastSweep = now();
  const refill = (b: { tokens: number; at: number }, t: number) =>
    Math.min(burst, b.tokens + ((t - b.at) / 1000) * rps);
  return {
    peek(source) {
      const b = buckets.get(source);
      return !b || refill(b, now()) >= 1;
    },
    take(source) {
      const t = now();
      if (t - lastSweep > 60_000) {
        for (const [key, b] of buckets) if (t - b.at > 60_000) buckets.delete(key);
        lastSweep = t;
      }
      let b = buckets.get(source);
      if (!b) {
        b = { tokens: burst, at: t };
        buckets.set(source, b);
      } else {
        b.tokens = refill(b, t);
        b.at = t;
      }
      if (b.tokens < 1) return false;
      b.tokens -= 1;
      return true;
    },
  };
}
