// Per-IP rate limits of the operations routes and the app page: 429 with Retry-After in whole seconds and
// RateLimitRemaining, counted in PostgreSQL (shared by replicas), the worker secret checked only after the limit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, type Harness, startHarness, WORKER_SECRET } from './harness.ts';

let h: Harness;
let clock = Date.parse('2026-11-22T10:00:15Z');
beforeAll(async () => {
  h = await startHarness({
    now: () => clock,
    env: {
      RATE_LIMITS: JSON.stringify([
        { route: '/api/worker', requestsPerMinute: 3 },
        { route: '/api/retention', requestsPerMinute: 2 },
        { route: '/', requestsPerMinute: 2 },
      ]),
    },
  });
});
afterAll(async () => h?.close());

const from = (n: number) => ({ remoteAddress: `10.1.0.${n}` });

describe('rate limits on the operations routes and GET /', () => {
  it('/api/worker: per IP, counted before the secret (a wrong secret uses up the window), 429 with Retry-After', async () => {
    const post = (n: number, secret: string) =>
      h.app.inject({ method: 'POST', url: '/api/worker', headers: bearer(secret), ...from(n) });
    const wrong = await post(1, 'not-the-worker-secret-0123456789abcdef');
    expect(wrong.statusCode).toBe(401);
    expect(wrong.headers.ratelimitremaining).toBe('2');
    const ok = await post(1, WORKER_SECRET);
    expect(ok.statusCode).toBe(200);
    expect(ok.headers.ratelimitremaining).toBe('1');
    expect((await post(1, 'still-not-the-worker-secret-0123456789')).statusCode).toBe(401);
    const limited = await post(1, WORKER_SECRET);
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toEqual({ error: 'rate limit exceeded' });
    expect(limited.headers['retry-after']).toBe('45'); // the window ends at 10:01:00, now is 10:00:15
    expect(limited.headers.ratelimitremaining).toBe('0');
    // Another client IP has its own window.
    expect((await post(2, WORKER_SECRET)).statusCode).toBe(200);
  });

  it('/api/retention and GET /: their own limits, per IP; a new window frees them', async () => {
    const retention = (n: number) =>
      h.app.inject({ method: 'POST', url: '/api/retention', headers: bearer(WORKER_SECRET), ...from(n) });
    const page = (n: number) => h.app.inject({ method: 'GET', url: '/', ...from(n) });
    expect((await retention(3)).headers.ratelimitremaining).toBe('1');
    expect((await retention(3)).statusCode).toBe(200);
    const r = await retention(3);
    expect(r.statusCode).toBe(429);
    expect(r.headers['retry-after']).toMatch(/^[1-9]\d*$/);
    const first = await page(3);
    expect(first.statusCode).toBe(200); // a separate bucket from retention's, same IP
    expect(first.headers.ratelimitremaining).toBe('1');
    expect(first.headers['content-security-policy']).toContain("default-src 'none'");
    expect((await page(3)).statusCode).toBe(200);
    const p = await page(3);
    expect(p.statusCode).toBe(429);
    expect(p.json()).toEqual({ error: 'rate limit exceeded' });
    expect(p.headers['retry-after']).toMatch(/^[1-9]\d*$/);
    expect(p.headers.ratelimitremaining).toBe('0');
    expect((await page(4)).statusCode).toBe(200);
    clock += 60_000;
    expect((await page(3)).statusCode).toBe(200);
    expect((await retention(3)).statusCode).toBe(200);
  });

  it('the counters live in PostgreSQL: a second replica on the same database shares them', async () => {
    const { app: other, close } = await h.replica({ poolMax: 2, now: () => clock });
    try {
      const get = (app: typeof other) => app.inject({ method: 'GET', url: '/', ...from(9) });
      expect((await get(h.app)).statusCode).toBe(200);
      expect((await get(other)).statusCode).toBe(200);
      expect((await get(h.app)).statusCode).toBe(429);
      expect((await get(other)).statusCode).toBe(429);
    } finally {
      await close();
    }
    const rows = await h.database.query<{ bucket: string }>(
      `SELECT bucket FROM rate_limit_windows WHERE bucket LIKE '%10.1.0.9'`,
    );
    expect(rows.map((r) => r.bucket)).toEqual(['page:ip:10.1.0.9']);
  });
});
