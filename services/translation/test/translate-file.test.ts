// POST /api/v1/translate/file on real PostgreSQL against the fake OpenAI-compatible upstream: the five formats,
// one metered call per file, bad files (400 with the line, 413), nothing metered for them, dry runs.
import { DOMParser } from '@xmldom/xmldom';
import { po as gettext } from 'gettext-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture } from '../src/files/testing.ts';
import { batch, bearer, type Harness, startHarness } from './harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({
    env: {
      RATE_LIMITS: JSON.stringify([
        { route: '/api/v1/translate', requestsPerMinute: 1000 },
        { route: '/api/v1/translate/file', requestsPerMinute: 1000 },
      ]),
    },
  });
});
afterAll(async () => h?.close());

const translateFile = (apiKey: string, body: Record<string, unknown>) =>
  h.app.inject({
    method: 'POST',
    url: '/api/v1/translate/file',
    headers: bearer(apiKey),
    payload: { sourceLocale: 'en', targetLocale: 'pl', tier: 'cheap', ...body },
  });

const metered = async (orgId: string) => {
  const [row] = await h.database.query<{ events: number; items: number; spent: number; reserved: number }>(
    `SELECT (SELECT count(*)::int FROM usage_events WHERE org_id = $1) AS events,
            (SELECT COALESCE(sum(items), 0)::int FROM usage_events WHERE org_id = $1) AS items,
            (SELECT COALESCE(sum(spent_micros), 0)::int FROM budget_usage WHERE scope = 'org:' || $1) AS spent,
            (SELECT COALESCE(sum(reserved_micros), 0)::int FROM budget_usage WHERE scope = 'org:' || $1) AS reserved`,
    [orgId],
  );
  return row!;
};

const xml = (text: string) =>
  new DOMParser({
    onError: (level, message) => {
      if (level !== 'warning') throw new Error(message);
    },
  }).parseFromString(text, 'text/xml');

describe('POST /api/v1/translate/file', () => {
  it.each([
    ['json', 'nested.json'],
    ['arb', 'app_en.arb'],
    ['xliff', 'app.xlf'],
    ['xliff', 'app.xliff2.xlf'],
    ['po', 'messages.pot'],
    ['android', 'strings.xml'],
  ])('200 for %s (%s): the file in the same format, one metered call, issues per key', async (format, name) => {
    const { apiKey, orgId } = await h.account();
    const before = h.fake!.requestCount;
    const res = await translateFile(apiKey, { format, content: fixture(name) });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual([
      'content',
      'format',
      'fromMemory',
      'issues',
      'model',
      'tokensIn',
      'tokensOut',
    ]);
    expect(body).toMatchObject({ format, issues: [], fromMemory: 0 });
    expect(body.tokensIn).toBeGreaterThan(0);
    expect(body.tokensOut).toBeGreaterThan(0);
    if (format === 'json' || format === 'arb') JSON.parse(body.content);
    else if (format === 'po') expect(gettext.parse(body.content).headers.Language).toBe('pl');
    else xml(body.content);
    expect(body.content).not.toBe(fixture(name));
    expect(h.fake!.requestCount - before).toBe(1);
    const m = await metered(orgId);
    expect(m.events).toBe(1);
    expect(m.reserved).toBe(0);
    expect(m.spent).toBeGreaterThan(0);
    expect(res.headers.ratelimitremaining).toBeDefined();
  });

  it('a large file goes to the provider in several requests under ONE reservation and one usage event', async () => {
    const { apiKey, orgId } = await h.account({ plan: 'enterprise' });
    const content = JSON.stringify(
      Object.fromEntries(Array.from({ length: 120 }, (_, i) => [`key${i}`, `Save file ${i}`])),
    );
    const before = h.fake!.requestCount;
    const res = await translateFile(apiKey, { format: 'json', content });
    expect(res.statusCode, res.body).toBe(200);
    expect(Object.keys(JSON.parse(res.json().content))).toHaveLength(120);
    expect(h.fake!.requestCount - before).toBe(3);
    expect(await metered(orgId)).toMatchObject({ events: 1, items: 120, reserved: 0 });
  });

  it('bad files: 400 with the line and the reason, 413 above the limit; nothing metered, the service stays up', async () => {
    const { apiKey, orgId } = await h.account();
    const xlf = fixture('app.xlf');
    const cases: [string, string, number, RegExp][] = [
      ['xliff', xlf.slice(0, xlf.indexOf('</trans-unit>')), 400, /^xliff file does not parse: line \d+: /],
      [
        'android',
        '<resources>\n  <string name="a">x</string>\n  <string name="b">y',
        400,
        /^android file does not parse: line 3: /,
      ],
      ['json', '{\n  "a": "x",\n  "b": \n}', 400, /^json file does not parse: line 4: invalid JSON/],
      ['arb', '{"a": "x",}', 400, /^arb file does not parse: line 1: /],
      [
        'po',
        'msgid ""\nmsgstr ""\n"Plural-Forms: nplurals=2; plural=(n !=;\\n"\n',
        400,
        /^po file does not parse: line 3: Plural-Forms/,
      ],
      ['json', JSON.stringify({ big: 'x'.repeat(2 * 1024 * 1024) }), 413, /larger than 2097152 bytes/],
      [
        'json',
        JSON.stringify(Object.fromEntries(Array.from({ length: 20_001 }, (_, i) => [`k${i}`, 'a']))),
        413,
        /more than 20000 strings/,
      ],
    ];
    const before = h.fake!.requestCount;
    for (const [format, content, status, error] of cases) {
      const res = await translateFile(apiKey, { format, content });
      expect(res.statusCode, `${format}: ${res.body}`).toBe(status);
      expect(Object.keys(res.json())).toEqual(['error']);
      expect(res.json().error).toMatch(error);
    }
    const huge = await h.app.inject({
      method: 'POST',
      url: '/api/v1/translate/file',
      headers: { ...bearer(apiKey), 'content-type': 'application/json' },
      payload: JSON.stringify({
        format: 'json',
        content: '"'.repeat(4 * 1024 * 1024),
        sourceLocale: 'en',
        targetLocale: 'de',
        tier: 'cheap',
      }),
    });
    expect(huge.statusCode).toBe(413);
    expect(
      await h.app
        .inject({
          method: 'POST',
          url: '/api/v1/translate/file',
          headers: bearer(apiKey),
          payload: { format: 'yaml', content: 'a: b', sourceLocale: 'en', targetLocale: 'de', tier: 'cheap' },
        })
        .then((r) => r.statusCode),
    ).toBe(400);
    expect(h.fake!.requestCount).toBe(before);
    expect(await metered(orgId)).toEqual({ events: 0, items: 0, spent: 0, reserved: 0 });
    const ok = await translateFile(apiKey, { format: 'json', content: '{"a": "Open"}' });
    expect(ok.statusCode).toBe(200);
  });

  it('401 without a key; 402 when the budget is reached and 502 on an upstream failure, nothing charged', async () => {
    const content = fixture('nested.json');
    const anonymous = await h.app.inject({
      method: 'POST',
      url: '/api/v1/translate/file',
      payload: { format: 'json', content },
    });
    expect(anonymous.statusCode).toBe(401);
    const poor = await h.account({ dailyBudgetMicros: 10 });
    const before = h.fake!.requestCount;
    const refused = await translateFile(poor.apiKey, { format: 'json', content });
    expect(refused.statusCode).toBe(402);
    expect(h.fake!.requestCount).toBe(before);
    expect(await metered(poor.orgId)).toMatchObject({ spent: 0, reserved: 0 });
    const { apiKey, orgId } = await h.account();
    h.fake!.set({ failStatus: 500 });
    const failed = await translateFile(apiKey, { format: 'json', content });
    h.fake!.set({ failStatus: null });
    expect(failed.statusCode).toBe(502);
    expect(await metered(orgId)).toMatchObject({ spent: 0, reserved: 0 });
  });

  it('a translation that breaks a plural or an inline code comes back as an issue of its key, the file still valid', async () => {
    const { apiKey } = await h.account();
    // Every reply drops the inline codes and the plural categories (an upstream that got it wrong, twice).
    const wrong = await startHarness({
      wrapProvider: (p) => ({
        ...p,
        async translate(req, opts) {
          const r = await p.translate(req, opts);
          return {
            ...r,
            translations: r.translations.map((t) => ({
              ...t,
              text: t.text.includes('plural') ? '{count, plural, other {%d piosenek}}' : t.text.replace(/<[^>]+>/g, ''),
            })),
          };
        },
      }),
    });
    try {
      const account = await wrong.account();
      const res = await wrong.app.inject({
        method: 'POST',
        url: '/api/v1/translate/file',
        headers: bearer(account.apiKey),
        payload: {
          format: 'android',
          content: fixture('strings.xml'),
          sourceLocale: 'en',
          targetLocale: 'pl',
          tier: 'cheap',
        },
      });
      expect(res.statusCode, res.body).toBe(200);
      const codes = res.json().issues.map((i: { itemId: string; code: string }) => `${i.itemId}:${i.code}`);
      expect(codes).toContain('songs_found:icu_plural_category_missing');
      expect(codes).toContain('songs_found:plural_form_missing');
      expect(codes).toContain('welcome:tag_missing');
      const items = Array.from(xml(res.json().content).getElementsByTagName('item'))
        .filter((i) => i.getAttribute('quantity'))
        .map((i) => i.getAttribute('quantity'));
      expect(items).toEqual(['one', 'few', 'many', 'other']);
    } finally {
      await wrong.close();
    }
    expect(apiKey).toBeTruthy();
  });

  it('dryRun on both routes: the estimate and price, no provider call, nothing metered', async () => {
    const { apiKey, orgId } = await h.account();
    const before = h.fake!.requestCount;
    const file = await translateFile(apiKey, { format: 'po', content: fixture('messages.pot'), dryRun: true });
    expect(file.statusCode, file.body).toBe(200);
    expect(file.json()).toMatchObject({
      dryRun: true,
      model: 'model-cheap',
      items: 8,
      fromMemory: 0,
      providerRequests: 1,
    });
    expect(file.json().estimate.tokensIn).toBeGreaterThan(0);
    expect(file.json().priceMicros).toBeGreaterThan(0);
    const single = await h.app.inject({
      method: 'POST',
      url: '/api/v1/translate',
      headers: bearer(apiKey),
      payload: batch(3, { dryRun: true }),
    });
    expect(single.statusCode).toBe(200);
    expect(single.json()).toMatchObject({ dryRun: true, items: 3, fromMemory: 0, providerRequests: 1 });
    expect(h.fake!.requestCount).toBe(before);
    expect(await metered(orgId)).toEqual({ events: 0, items: 0, spent: 0, reserved: 0 });
    expect(single.headers.ratelimitremaining).toBeDefined();
  });
});
