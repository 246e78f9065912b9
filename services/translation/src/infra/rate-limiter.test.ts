import { describe, expect, it } from 'vitest';
import { checkRateLimit, MemoryRateLimitStore } from './rate-limiter.ts';

describe('fixed-window rate limit (memory store)', () => {
  it('allows `limit` hits per window, then refuses with the seconds left in the window', async () => {
    const store = new MemoryRateLimitStore();
    const t0 = 1_800_000_000_000; // a window boundary for 60 s windows
    for (let i = 0; i < 3; i++) {
      const d = await checkRateLimit(store, 'b', 3, 60_000, t0 + i);
      expect(d).toMatchObject({ allowed: true, remaining: 2 - i });
    }
    const refused = await checkRateLimit(store, 'b', 3, 60_000, t0 + 20_500);
    expect(refused).toMatchObject({ allowed: false, remaining: 0, retryAfterSeconds: 40 });
    expect((await checkRateLimit(store, 'other', 3, 60_000, t0 + 20_500)).allowed).toBe(true);
    expect((await checkRateLimit(store, 'b', 3, 60_000, t0 + 60_000)).allowed).toBe(true);
  });

  it('never answers Retry-After 0', async () => {
    const store = new MemoryRateLimitStore();
    const d = await checkRateLimit(store, 'b', 0 + 1, 60_000, 1_800_000_059_999);
    expect(d.retryAfterSeconds).toBe(1);
  });
});
