// judge, playground, worker, retention, the OpenAPI document, rate limits and fastify's own errors (GET / and its
// assets: web-serving.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batch, bearer, type Harness, startHarness, WORKER_SECRET } from './harness.ts';

let h: Harness;
let clock = Date.parse('2026-11-22T10:00:20Z');
beforeAll(async () => {
  h = await startHarness({
    now: () => clock,
    random: () => 0,
    env: {
      RATE_LIMITS: JSON.stringify([
        { route: '/api/v1/translate', requestsPerMinute: 2 },
        { route: '/api/v1/judge', requestsPerMinute: 2 },
        { route: '/api/v1/playground', requestsPerMinute: 3 },
      ]),
      PLAYGROUND__REQUESTS_PER_DAY: '100',
      PLAYGROUND__DAILY_BUDGET_MICROS: '100000',
      JOBS__BACKOFF_BASE_MS: '10000',
    },
  });
});
afterAll(async () => h?.close());

describe('rate limits', () => {
  it('translate: 429 with Retry-After in whole seconds and RateLimitRemaining, per key; a new window frees it', async () => {
    const a = await h.account();
    const b = await h.account();
    const post = (key: string) =>
      h.app.inject({ method: 'POST', url: '/api/v1/translate', headers: bearer(key), payload: batch() });
    expect((await post(a.apiKey)).headers.ratelimitremaining).toBe('1');
    expect((await post(a.apiKey)).headers.ratelimitremaining).toBe('0');
    const events = async () =>
      (
        await h.database.query<{ n: number }>('SELECT count(*)::int AS n FROM usage_events WHERE org_id = $1', [
          a.orgId,
        ])
      )[0]!.n;
    const before = await events();
    const limited = await post(a.apiKey);
    expect(limited.statusCode).toBe(429);
    expect(await events()).toBe(before); // refused before any reservation or upstream call
    expect(limited.json()).toEqual({ error: 'rate limit exceeded' });
    expect(limited.headers['retry-after']).toBe('40'); // window ends at 10:01:00, now is 10:00:20
    expect(limited.headers.ratelimitremaining).toBe('0');
    expect((await post(b.apiKey)).statusCode).toBe(200);
    clock += 40_000;
    expect((await post(a.apiKey)).statusCode).toBe(200);
  });

  it('the counters live in PostgreSQL (shared by replicas)', async () => {
    const rows = await h.database.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM rate_limit_windows WHERE bucket LIKE 'translate:key:%'`,
    );
    expect(rows[0]!.n).toBeGreaterThan(0);
  });
});

describe('POST /api/v1/judge', () => {
  const body = {
    sourceLocale: 'en',
    targetLocale: 'de',
    items: [{ id: 'x', source: 'Save {name}', target: 'Speichern {name}' }],
  };

  it('200: scores 0–5 per dimension from the LLM judge', async () => {
    const { apiKey } = await h.account();
    const res = await h.app.inject({ method: 'POST', url: '/api/v1/judge', headers: bearer(apiKey), payload: body });
    expect(res.statusCode).toBe(200);
    const r = res.json();
    expect(Object.keys(r.scores).sort()).toEqual(['accuracy', 'fluency', 'localeConventions', 'style', 'terminology']);
    for (const v of Object.values(r.scores) as number[]) expect(v >= 0 && v <= 5).toBe(true);
    expect(r.overall >= 0 && r.overall <= 5).toBe(true);
    expect(r.judge).toBe('llm');
    expect(res.headers.ratelimitremaining).toBe('1');
  });

  it('falls back to the labelled heuristic judge when the upstream fails or the budget is spent', async () => {
    const { apiKey } = await h.account();
    h.fake!.set({ failStatus: 500 });
    const res = await h.app.inject({ method: 'POST', url: '/api/v1/judge', headers: bearer(apiKey), payload: body });
    h.fake!.set({ failStatus: null });
    expect(res.statusCode).toBe(200);
    expect(res.json().judge).toBe('heuristic');
    const poor = await h.account({ dailyBudgetMicros: 1 });
    const broke = await h.app.inject({
      method: 'POST',
      url: '/api/v1/judge',
      headers: bearer(poor.apiKey),
      payload: body,
    });
    expect(broke.statusCode).toBe(200);
    expect(broke.json().judge).toBe('heuristic');
  });

  it('401 and 429', async () => {
    expect((await h.app.inject({ method: 'POST', url: '/api/v1/judge', payload: body })).statusCode).toBe(401);
    const { apiKey } = await h.account();
    for (let i = 0; i < 2; i++)
      await h.app.inject({ method: 'POST', url: '/api/v1/judge', headers: bearer(apiKey), payload: body });
    const limited = await h.app.inject({
      method: 'POST',
      url: '/api/v1/judge',
      headers: bearer(apiKey),
      payload: body,
    });
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  });
});

describe('POST /api/v1/playground', () => {
  const ip = (n: number) => ({ remoteAddress: `10.0.0.${n}` });

  it('200: a translation and a score, without credentials', async () => {
    const res = await h.app.inject({
      method: 'POST',
      url: '/api/v1/playground',
      payload: { source: 'Hello {name}', targetLocale: 'de' },
      ...ip(1),
    });
    expect(res.statusCode).toBe(200);
    const r = res.json();
    expect(typeof r.translation).toBe('string');
    expect(r.translation).toContain('{name}');
    expect(r.score >= 0 && r.score <= 5).toBe(true);
    expect(res.headers.ratelimitremaining).toBe('2');
  });

  it('413 above 500 characters (counted as characters, not UTF-16 units), before rate limits and metering', async () => {
    const before = h.fake!.requestCount;
    const tooLong = await h.app.inject({
      method: 'POST',
      url: '/api/v1/playground',
      payload: { source: 'a'.repeat(501), targetLocale: 'de' },
      ...ip(2),
    });
    expect(tooLong.statusCode).toBe(413);
    expect(tooLong.json()).toEqual({ error: 'source is longer than 500 characters' });
    expect(tooLong.headers.ratelimitremaining).toBeUndefined();
    const huge = await h.app.inject({
      method: 'POST',
      url: '/api/v1/playground',
      payload: { source: 'a'.repeat(100_000), targetLocale: 'de' },
      ...ip(2),
    });
    expect(huge.statusCode).toBe(413);
    expect(Object.keys(huge.json())).toEqual(['error']);
    expect(h.fake!.requestCount).toBe(before);
    const emoji = await h.app.inject({
      method: 'POST',
      url: '/api/v1/playground',
      payload: { source: '😀'.repeat(500), targetLocale: 'de' },
      ...ip(2),
    });
    expect(emoji.statusCode).toBe(200);
  });

  it('429 per IP with Retry-After', async () => {
    for (let i = 0; i < 3; i++) {
      await h.app.inject({
        method: 'POST',
        url: '/api/v1/playground',
        payload: { source: 'Hi', targetLocale: 'de' },
        ...ip(3),
      });
    }
    const limited = await h.app.inject({
      method: 'POST',
      url: '/api/v1/playground',
      payload: { source: 'Hi', targetLocale: 'de' },
      ...ip(3),
    });
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    const other = await h.app.inject({
      method: 'POST',
      url: '/api/v1/playground',
      payload: { source: 'Hi', targetLocale: 'de' },
      ...ip(4),
    });
    expect(other.statusCode).toBe(200);
  });

  it('402 when the global daily playground budget is spent', async () => {
    await h.database.query(`UPDATE budget_usage SET spent_micros = 100000 WHERE scope = 'playground'`);
    const res = await h.app.inject({
      method: 'POST',
      url: '/api/v1/playground',
      payload: { source: 'Hi', targetLocale: 'de' },
      ...ip(5),
    });
    expect(res.statusCode).toBe(402);
    expect(res.json()).toEqual({ error: 'the playground daily budget is spent; try again tomorrow' });
  });

  it('502 when the upstream fails', async () => {
    await h.database.query(`UPDATE budget_usage SET spent_micros = 0 WHERE scope = 'playground'`);
    h.fake!.set({ failStatus: 503 });
    const res = await h.app.inject({
      method: 'POST',
      url: '/api/v1/playground',
      payload: { source: 'Hi', targetLocale: 'de' },
      ...ip(6),
    });
    h.fake!.set({ failStatus: null });
    expect(res.statusCode).toBe(502);
  });
});

describe('POST /api/worker', () => {
  it('401 without or with a wrong secret', async () => {
    for (const headers of [{}, bearer('wrong'), bearer(`${WORKER_SECRET}x`), { authorization: WORKER_SECRET }]) {
      const res = await h.app.inject({ method: 'POST', url: '/api/worker', headers });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ error: 'missing or invalid credentials' });
    }
  });

  it('200: judges sampled batches; a score under the threshold opens review items; payloads are scrubbed', async () => {
    // random() is 0, so every batch of an organization with a sample rate > 0 is sampled.
    const { apiKey, orgId } = await h.account({ judgeSampleRate: 1, reviewThreshold: 5.1 });
    clock += 60_000;
    const t = await h.app.inject({
      method: 'POST',
      url: '/api/v1/translate',
      headers: bearer(apiKey),
      payload: batch(2),
    });
    expect(t.statusCode).toBe(200);
    const res = await h.app.inject({ method: 'POST', url: '/api/worker', headers: bearer(WORKER_SECRET) });
    expect(res.statusCode).toBe(200);
    const counts = res.json();
    expect(Object.keys(counts).sort()).toEqual(['failed', 'processed']);
    expect(counts.processed).toBeGreaterThanOrEqual(2); // the judge job and the usage rollup
    const reviews = await h.database.query<{ item_id: string; status: string; target_text: string }>(
      'SELECT item_id, status, target_text FROM review_items WHERE org_id = $1 ORDER BY item_id',
      [orgId],
    );
    expect(reviews.map((r) => [r.item_id, r.status])).toEqual([
      ['s0', 'open'],
      ['s1', 'open'],
    ]);
    const payloads = await h.database.query<{ payload: unknown }>(`SELECT payload FROM jobs WHERE status = 'done'`);
    for (const p of payloads) expect(p.payload).toEqual({});
    // Drained: a second run has nothing to do.
    expect((await h.app.inject({ method: 'POST', url: '/api/worker', headers: bearer(WORKER_SECRET) })).json()).toEqual(
      {
        processed: 0,
        failed: 0,
      },
    );
  });

  it('retries a failing job with exponential backoff and marks it dead after max attempts', async () => {
    await h.database.query(
      `INSERT INTO jobs (kind, payload, max_attempts) VALUES ('usage-rollup', '{"day": "nope"}', 3)`,
    );
    const work = async () =>
      (await h.app.inject({ method: 'POST', url: '/api/worker', headers: bearer(WORKER_SECRET) })).json();
    const job = async () =>
      (
        await h.database.query<{ status: string; attempts: number; last_error: string; delay_s: number }>(
          `SELECT status, attempts, last_error, round(extract(epoch FROM run_at - now()))::int AS delay_s
             FROM jobs WHERE kind = 'usage-rollup' AND dedupe_key IS NULL`,
        )
      )[0]!;
    const due = () => h.database.query(`UPDATE jobs SET run_at = now() WHERE dedupe_key IS NULL AND status = 'queued'`);
    expect(await work()).toEqual({ processed: 0, failed: 1 });
    expect(await job()).toMatchObject({ status: 'queued', attempts: 1, delay_s: 10 }); // base 10 s · 2^0
    expect(await work()).toEqual({ processed: 0, failed: 0 }); // not due yet
    await due();
    expect(await work()).toEqual({ processed: 0, failed: 1 });
    expect(await job()).toMatchObject({ status: 'queued', attempts: 2, delay_s: 20 }); // 10 s · 2^1
    await due();
    expect(await work()).toEqual({ processed: 0, failed: 1 });
    const dead = await job();
    expect(dead).toMatchObject({ status: 'dead', attempts: 3 });
    expect(dead.last_error).toContain('malformed payload');
    await due();
    expect(await work()).toEqual({ processed: 0, failed: 0 });
  });

  it('releases metering reservations orphaned by a dead process, and only those', async () => {
    /** The counter rows of an organization's metered calls (as the metering module names them). */
    const reservation = (orgId: string) => ({
      orgId,
      period: '2026-11-01',
      quotaTokens: 1000000,
      scope: `org:${orgId}`,
      day: '2026-11-22',
      capMicros: 1000000,
    });
    const dead = await h.account();
    const live = await h.account();
    for (const { orgId } of [dead, live]) {
      // A reservation whose process never settles it (the process died after its admission).
      const admission = { ...reservation(orgId), bucket: null, windowStart: 0, windowMs: 0, limit: 0 };
      const [r] = await h.database.query<{ r: string }>(`SELECT result AS r FROM meter($1::json, '[]')`, [
        JSON.stringify([{ ...admission, tokens: 100, costMicros: 50 }]),
      ]);
      expect(r!.r).toBe('ok');
    }
    await h.database.query(`UPDATE quota_usage SET reserved_at = now() - interval '1 hour' WHERE org_id = $1`, [
      dead.orgId,
    ]);
    await h.database.query(`UPDATE budget_usage SET reserved_at = now() - interval '1 hour' WHERE scope = $1`, [
      `org:${dead.orgId}`,
    ]);
    expect(
      (await h.app.inject({ method: 'POST', url: '/api/worker', headers: bearer(WORKER_SECRET) })).statusCode,
    ).toBe(200);
    const reserved = async (orgId: string) =>
      (
        await h.database.query<{ q: number; b: number }>(
          `SELECT (SELECT reserved_tokens::int FROM quota_usage WHERE org_id = $1 AND period_start = '2026-11-01') AS q,
                  (SELECT reserved_micros::int FROM budget_usage WHERE scope = 'org:' || $1 AND day = '2026-11-22') AS b`,
          [orgId],
        )
      )[0];
    expect(await reserved(dead.orgId)).toEqual({ q: 0, b: 0 });
    expect(await reserved(live.orgId)).toEqual({ q: 100, b: 50 });
    // A settlement arriving after its reservation was released never drives the counter below zero.
    const usage = { apiKeyId: null, kind: 'translate', model: 'm', items: 1, tokensIn: 5, tokensOut: 5, outcome: 'ok' };
    const settlement = { ...reservation(dead.orgId), ...usage, reservedTokens: 100, tokens: 10 };
    await h.database.query(`SELECT * FROM meter('[]', $1::json)`, [
      JSON.stringify([{ ...settlement, reservedCostMicros: 50, costMicros: 5 }]),
    ]);
    expect(await reserved(dead.orgId)).toEqual({ q: 0, b: 0 });
  });

  it('rolls usage events up per UTC day (idempotent)', async () => {
    const { orgId } = await h.account();
    await h.database.query(
      `INSERT INTO usage_events (org_id, kind, model, items, tokens_in, tokens_out, cost_micros, outcome, created_at) VALUES
         ($1, 'translate', 'm', 2, 10, 5, 7, 'ok', '2026-11-20T01:00:00Z'),
         ($1, 'translate', 'm', 3, 20, 5, 9, 'ok', '2026-11-20T23:59:00Z'),
         ($1, 'translate', 'm', 3, 99, 9, 9, 'ok', '2026-11-21T00:00:00Z')`,
      [orgId],
    );
    for (let i = 0; i < 2; i++) {
      await h.database.query(`INSERT INTO jobs (kind, payload) VALUES ('usage-rollup', '{"day": "2026-11-20"}')`);
      expect(
        await (await h.app.inject({ method: 'POST', url: '/api/worker', headers: bearer(WORKER_SECRET) })).json(),
      ).toEqual({
        processed: 1,
        failed: 0,
      });
    }
    const rows = await h.database.query(
      `SELECT requests, tokens_in::int AS tokens_in, tokens_out::int AS tokens_out, cost_micros::int AS cost
         FROM usage_daily WHERE org_id = $1 AND day = '2026-11-20'`,
      [orgId],
    );
    expect(rows).toEqual([{ requests: 2, tokens_in: 30, tokens_out: 10, cost: 16 }]);
  });
});

describe('POST /api/retention', () => {
  it('401 without the worker secret; 200 with the deleted counts per category', async () => {
    expect((await h.app.inject({ method: 'POST', url: '/api/retention' })).statusCode).toBe(401);
    await h.database.query(
      `INSERT INTO audit_log (actor_kind, action, at) VALUES ('system', 'old', now() - interval '400 days'), ('system', 'new', now())`,
    );
    await h.database.query(
      `INSERT INTO rate_limit_windows (bucket, window_start, window_ms, count) VALUES ('old', 0, 60000, 1)`,
    );
    const res = await h.app.inject({ method: 'POST', url: '/api/retention', headers: bearer(WORKER_SECRET) });
    expect(res.statusCode).toBe(200);
    const { deleted } = res.json();
    expect(Object.keys(deleted).sort()).toEqual(
      [
        'auditLog',
        'billingEvents',
        'expiredInvites',
        'expiredSessions',
        'finishedJobs',
        'meteringCounters',
        'memoryEntries',
        'memoryFileAnswers',
        'rateLimitWindows',
        'reviewItems',
        'usageDaily',
        'usageEvents',
      ].sort(),
    );
    expect(deleted.auditLog).toBe(1);
    expect(deleted.rateLimitWindows).toBeGreaterThanOrEqual(1);
    const left = await h.database.query<{ action: string }>(
      `SELECT action FROM audit_log WHERE action IN ('old', 'new')`,
    );
    expect(left.map((r) => r.action)).toEqual(['new']);
  });
});

describe('OpenAPI document', () => {
  it('is OpenAPI 3.1, version 1.0.0, with every field and status of the document for these routes', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0.0');
    const statuses = (path: string, method = 'post') => Object.keys(doc.paths[path][method].responses).sort();
    expect(statuses('/api/v1/translate')).toEqual(expect.arrayContaining(['200', '401', '402', '429', '502']));
    expect(statuses('/api/v1/judge')).toEqual(expect.arrayContaining(['200', '401', '429']));
    expect(statuses('/api/v1/playground')).toEqual(expect.arrayContaining(['200', '402', '413', '429']));
    expect(statuses('/api/worker')).toEqual(['200', '401', '429']);
    expect(statuses('/api/retention')).toEqual(['200', '401', '429']);
    expect(statuses('/', 'get')).toEqual(['200', '429']);
    for (const [path, method] of [
      ['/api/worker', 'post'],
      ['/api/retention', 'post'],
      ['/', 'get'],
    ] as const) {
      const { responses } = doc.paths[path][method];
      expect(responses['429'].headers['Retry-After'].schema.type).toBe('integer');
      expect(responses['200'].headers.RateLimitRemaining.schema.type).toBe('integer');
    }
    const batchSchema = doc.paths['/api/v1/translate'].post.requestBody.content['application/json'].schema;
    expect(Object.keys(batchSchema.properties).sort()).toEqual(
      ['dryRun', 'glossary', 'items', 'modelOverride', 'sourceLocale', 'style', 'targetLocale', 'tier'].sort(),
    );
    expect(batchSchema.required.sort()).toEqual(['glossary', 'items', 'sourceLocale', 'style', 'targetLocale', 'tier']);
    expect(batchSchema.properties.tier.enum).toEqual(['cheap', 'top']);
    const item = batchSchema.properties.items.items;
    expect(Object.keys(item.properties).sort()).toEqual(['context', 'examples', 'id', 'isIcu', 'neighbors', 'text']);
    expect(item.required.sort()).toEqual(['id', 'text']);
    const g = batchSchema.properties.glossary.items;
    expect(JSON.stringify(g.properties.target)).toContain('"null"');
    expect(g.required.sort()).toEqual(['neverTranslate', 'target', 'term']);
    // 200 is the TranslateResult, or with dryRun the estimate.
    const answers = doc.paths['/api/v1/translate'].post.responses['200'].content['application/json'].schema.anyOf;
    expect(answers).toHaveLength(2);
    const [result, dryRun] = answers;
    expect(dryRun.properties.dryRun.const).toBe(true);
    expect(Object.keys(result.properties)).toEqual(
      expect.arrayContaining(['translations', 'model', 'tokensIn', 'tokensOut']),
    );
    expect(result.properties.tokensIn.type).toBe('integer');
    expect(doc.paths['/api/v1/translate'].post.responses['429'].headers['Retry-After'].schema.type).toBe('integer');
    const pg = doc.paths['/api/v1/playground'].post.requestBody.content['application/json'].schema;
    expect(pg.properties.source.maxLength).toBe(500);
    expect(pg.properties.sourceLocale.default).toBe('en');
    expect(pg.required.sort()).toEqual(['source', 'targetLocale']);
    expect(doc.components.schemas.Error).toMatchObject({
      properties: { error: { type: 'string' } },
      required: ['error'],
    });
    expect(doc.paths['/api/v1/translate'].post.security).toEqual([{ apiKey: [] }]);
    expect(doc.paths['/api/worker'].post.security).toEqual([{ workerSecret: [] }]);
  });
});

describe('fastify’s own errors are {error: string}', () => {
  it('404, 415, 413 and 400', async () => {
    const notFound = await h.app.inject({ method: 'GET', url: '/nope' });
    expect(notFound.statusCode).toBe(404);
    expect(Object.keys(notFound.json())).toEqual(['error']);
    const { apiKey } = await h.account();
    const xml = await h.app.inject({
      method: 'POST',
      url: '/api/v1/translate',
      headers: { ...bearer(apiKey), 'content-type': 'application/xml' },
      payload: '<x/>',
    });
    expect(xml.statusCode).toBe(415);
    expect(Object.keys(xml.json())).toEqual(['error']);
    const text = await h.app.inject({
      method: 'POST',
      url: '/api/v1/translate',
      headers: { ...bearer((await h.account()).apiKey), 'content-type': 'text/plain' },
      payload: 'hello',
    });
    expect(text.statusCode).toBe(415);
    const big = await h.app.inject({
      method: 'POST',
      url: '/api/v1/translate',
      headers: { ...bearer((await h.account()).apiKey), 'content-type': 'application/json' },
      payload: JSON.stringify({ x: 'a'.repeat(1_100_000) }),
    });
    expect(big.statusCode).toBe(413);
    expect(Object.keys(big.json())).toEqual(['error']);
  });

  it('probes: /healthz and /readyz', async () => {
    expect((await h.app.inject({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' });
    expect((await h.app.inject({ method: 'GET', url: '/readyz' })).json()).toEqual({ status: 'ready' });
  });
});
