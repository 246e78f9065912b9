// POST /api/v1/translate on real PostgreSQL against the fake OpenAI-compatible upstream (a real local HTTP server).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addFineTunedModel, batch, bearer, type Harness, startHarness } from './harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({
    env: { RATE_LIMITS: JSON.stringify([{ route: '/api/v1/translate', requestsPerMinute: 1000 }]) },
  });
});
afterAll(async () => h?.close());

const spend = async (orgId: string) => {
  const [row] = await h.database.query<{ spent: number; reserved: number }>(
    `SELECT COALESCE(sum(spent_micros), 0)::int AS spent, COALESCE(sum(reserved_micros), 0)::int AS reserved
       FROM budget_usage WHERE scope = $1`,
    [`org:${orgId}`],
  );
  return row!;
};

describe('POST /api/v1/translate', () => {
  it('200: translations for every item, the model and the provider-reported token counts; usage is charged', async () => {
    const { apiKey, orgId } = await h.account();
    h.fake!.set({ usage: { tokensIn: 120, tokensOut: 40 } });
    const res = await h.app.inject({
      method: 'POST',
      url: '/api/v1/translate',
      headers: bearer(apiKey),
      payload: batch(3),
    });
    h.fake!.set({ usage: null });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['issues', 'model', 'tokensIn', 'tokensOut', 'translations']);
    expect(body.translations.map((t: { id: string }) => t.id)).toEqual(['s0', 's1', 's2']);
    for (const t of body.translations) expect(Object.keys(t).sort()).toEqual(['id', 'text']);
    expect(body).toMatchObject({ tokensIn: 120, tokensOut: 40, issues: [] });
    expect(typeof body.model).toBe('string');
    expect(Number(res.headers.ratelimitremaining)).toBe(999);
    // 120 in at 1.00/M + 40 out at 2.00/M = 120 + 80 micro-units, and nothing left reserved.
    expect(await spend(orgId)).toEqual({ spent: 200, reserved: 0 });
    const [q] = await h.database.query<{ used: number; reserved: number }>(
      'SELECT used_tokens::int AS used, reserved_tokens::int AS reserved FROM quota_usage WHERE org_id = $1',
      [orgId],
    );
    expect(q).toEqual({ used: 160, reserved: 0 });
  });

  it('sends the tier’s configured model upstream', async () => {
    const { apiKey } = await h.account();
    await h.app.inject({
      method: 'POST',
      url: '/api/v1/translate',
      headers: bearer(apiKey),
      payload: batch(1, { tier: 'top' }),
    });
    expect((h.fake!.lastRequest!.body as { model: string }).model).toBe('model-top');
  });

  it('400 with {error} for a body that breaks the schema', async () => {
    const { apiKey } = await h.account();
    for (const payload of [
      { ...batch(1), tier: 'premium' },
      { ...batch(1), items: [] },
      { ...batch(1), sourceLocale: 'not a locale' },
      { ...batch(1), style: undefined },
      { ...batch(1), glossary: [{ term: 'x', target: 1, neverTranslate: true }] },
      {
        ...batch(1),
        items: [
          { id: 'same', text: 'a' },
          { id: 'same', text: 'b' },
        ],
      },
    ]) {
      const res = await h.app.inject({ method: 'POST', url: '/api/v1/translate', headers: bearer(apiKey), payload });
      expect(res.statusCode).toBe(400);
      expect(Object.keys(res.json())).toEqual(['error']);
    }
    const bad = await h.app.inject({
      method: 'POST',
      url: '/api/v1/translate',
      headers: { ...bearer(apiKey), 'content-type': 'application/json' },
      payload: '{"items": [',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({ error: 'invalid JSON body' });
  });

  it('401 without, with a malformed and with an unknown or revoked key', async () => {
    const { apiKey } = await h.account();
    const cases = [
      {},
      { authorization: 'Bearer nope' },
      { authorization: `Basic ${apiKey}` },
      bearer(`sk_live_${'A'.repeat(43)}`),
    ];
    for (const headers of cases) {
      const res = await h.app.inject({ method: 'POST', url: '/api/v1/translate', headers, payload: batch() });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ error: 'missing or invalid credentials' });
    }
    await h.database.query('UPDATE api_keys SET revoked_at = now()');
    const revoked = await h.app.inject({
      method: 'POST',
      url: '/api/v1/translate',
      headers: bearer(apiKey),
      payload: batch(),
    });
    expect(revoked.statusCode).toBe(401);
    await h.database.query('UPDATE api_keys SET revoked_at = NULL');
  });

  it('402 when the daily budget cap is reached, and nothing is charged', async () => {
    const { apiKey, orgId } = await h.account({ dailyBudgetMicros: 10 });
    const res = await h.app.inject({
      method: 'POST',
      url: '/api/v1/translate',
      headers: bearer(apiKey),
      payload: batch(),
    });
    expect(res.statusCode).toBe(402);
    expect(res.json()).toEqual({ error: 'daily budget cap reached' });
    expect(await spend(orgId)).toEqual({ spent: 0, reserved: 0 });
  });

  it('402 when the plan quota is reached', async () => {
    await h.database.query(
      `INSERT INTO plans (id, name, quota_tokens, period_days, daily_budget_micros) VALUES ('tiny', 'Tiny', 50, 30, 1000000)`,
    );
    const { apiKey } = await h.account({ plan: 'tiny' });
    const res = await h.app.inject({
      method: 'POST',
      url: '/api/v1/translate',
      headers: bearer(apiKey),
      payload: batch(),
    });
    expect(res.statusCode).toBe(402);
    expect(res.json()).toEqual({ error: 'plan quota reached' });
  });

  it('modelOverride: the organization’s fine-tuned model is used; another organization’s or an unknown one is 403', async () => {
    const a = await h.account();
    const b = await h.account();
    await addFineTunedModel(h.database, 'ft-a', a.orgId);
    const ok = await h.app.inject({
      method: 'POST',
      url: '/api/v1/translate',
      headers: bearer(a.apiKey),
      payload: batch(1, { modelOverride: 'ft-a' }),
    });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().model).toBe('ft-a');
    expect((h.fake!.lastRequest!.body as { model: string }).model).toBe('ft:ft-a');
    for (const modelOverride of ['ft-a', 'does-not-exist']) {
      const res = await h.app.inject({
        method: 'POST',
        url: '/api/v1/translate',
        headers: bearer(b.apiKey),
        payload: batch(1, { modelOverride }),
      });
      expect(res.statusCode).toBe(403);
      expect(res.json()).toEqual({ error: 'modelOverride is not a model this organization may use' });
    }
  });

  it('502 on upstream failure status, dropped connection, malformed reply and timeout; the reservation is released', async () => {
    const { apiKey, orgId } = await h.account();
    const knobs = [
      { failStatus: 500 },
      { failStatus: 429, retryAfterSeconds: 3 },
      { dropConnection: true },
      { malformed: true },
      { latencyMs: 3000 },
    ];
    for (const k of knobs) {
      h.fake!.set(k);
      const res = await h.app.inject({
        method: 'POST',
        url: '/api/v1/translate',
        headers: bearer(apiKey),
        payload: batch(2),
      });
      h.fake!.set({ failStatus: null, retryAfterSeconds: null, dropConnection: false, malformed: false, latencyMs: 0 });
      expect(res.statusCode, JSON.stringify(k)).toBe(502);
      expect(res.json()).toEqual({ error: 'upstream provider error' });
      expect(res.headers['retry-after']).toBeUndefined();
    }
    expect(await spend(orgId)).toEqual({ spent: 0, reserved: 0 });
    const events = await h.database.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM usage_events WHERE org_id = $1 AND outcome = 'upstream_error' AND cost_micros = 0`,
      [orgId],
    );
    expect(events[0]!.n).toBe(knobs.length);
  });

  it('ICU messages, tags and neverTranslate terms come back valid (no issues flagged)', async () => {
    const { apiKey } = await h.account();
    const payload = batch(1, {
      items: [
        { id: 'icu', text: '{count, plural, one {# file in Scriptorium} other {# files in Scriptorium}}', isIcu: true },
        { id: 'tag', text: 'Click <b>Save</b> to keep {name}' },
      ],
      glossary: [{ term: 'Scriptorium', target: null, neverTranslate: true }],
    });
    const res = await h.app.inject({ method: 'POST', url: '/api/v1/translate', headers: bearer(apiKey), payload });
    expect(res.statusCode).toBe(200);
    expect(res.json().issues).toEqual([]);
    expect(res.json().translations[0].text).toContain('Scriptorium');
  });
});
