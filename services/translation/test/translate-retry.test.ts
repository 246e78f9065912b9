// Provider output that fails the validators is retried once with the issues as feedback, then flagged.
// The fake upstream's `invalidReplies` knob makes its next N translate replies fail the validators.
// One case wraps the real provider to throw a programming error (the fake cannot produce one).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProviderRequest, TranslationProvider } from '../src/providers/index.ts';
import { bearer, type Harness, startHarness } from './harness.ts';

let crashNext = false;
const seen: ProviderRequest[] = [];
let h: Harness;
beforeAll(async () => {
  h = await startHarness({
    wrapProvider: (real): TranslationProvider => ({
      name: real.name,
      estimateTranslate: (req) => real.estimateTranslate(req),
      estimateComplete: (prompt) => real.estimateComplete(prompt),
      complete: (prompt, opts) => real.complete(prompt, opts),
      async translate(req, opts) {
        seen.push(req);
        if (crashNext) {
          crashNext = false;
          throw new TypeError('provider bug');
        }
        return real.translate(req, opts);
      },
    }),
  });
});
afterAll(async () => h?.close());

const payload = {
  sourceLocale: 'en',
  targetLocale: 'fr',
  tier: 'cheap',
  items: [
    { id: 'a', text: 'Hello {name}' },
    { id: 'b', text: 'Open <b>Settings</b>' },
  ],
  style: {},
  glossary: [],
};

describe('validator retry', () => {
  it('retries the failing items once, with the issues as feedback, and returns a clean result', async () => {
    const { apiKey } = await h.account();
    seen.length = 0;
    h.fake!.set({ invalidReplies: 1 });
    const res = await h.app.inject({ method: 'POST', url: '/api/v1/translate', headers: bearer(apiKey), payload });
    expect(res.statusCode).toBe(200);
    expect(seen).toHaveLength(2);
    const feedback = seen[1]!.feedback ?? [];
    expect(feedback.length).toBeGreaterThan(0);
    expect(new Set(feedback.map((i) => i.itemId))).toEqual(new Set(seen[1]!.items.map((i) => i.id)));
    const body = res.json();
    expect(body.issues).toEqual([]);
    expect(body.translations.find((t: { id: string }) => t.id === 'a').text).toContain('{name}');
    // Both calls are metered and counted in the token totals.
    const events = await h.database.query<{ n: number; tin: number }>(
      `SELECT count(*)::int AS n, sum(tokens_in)::int AS tin FROM usage_events WHERE kind = 'translate' AND api_key_id IS NOT NULL`,
    );
    expect(events[0]!.n).toBe(2);
    expect(body.tokensIn).toBe(events[0]!.tin);
  });

  it('flags the issues (added `issues` field) when the retry fails validation too', async () => {
    const { apiKey } = await h.account();
    seen.length = 0;
    h.fake!.set({ invalidReplies: 2 });
    const res = await h.app.inject({ method: 'POST', url: '/api/v1/translate', headers: bearer(apiKey), payload });
    expect(res.statusCode).toBe(200);
    expect(seen).toHaveLength(2);
    const body = res.json();
    expect(body.issues.length).toBeGreaterThan(0);
    for (const issue of body.issues) {
      expect(['a', 'b']).toContain(issue.itemId);
      expect(typeof issue.code).toBe('string');
      expect(typeof issue.message).toBe('string');
    }
    expect(body.translations.map((t: { id: string }) => t.id)).toEqual(['a', 'b']);
    h.fake!.set({ invalidReplies: 0 });
  });

  it('does not retry issues of the client’s own source (invalid ICU): flags them at once', async () => {
    const { apiKey } = await h.account();
    seen.length = 0;
    const res = await h.app.inject({
      method: 'POST',
      url: '/api/v1/translate',
      headers: bearer(apiKey),
      payload: { ...payload, items: [{ id: 'bad', text: '{count, plural, one {# file}', isIcu: true }] },
    });
    expect(res.statusCode).toBe(200);
    expect(seen).toHaveLength(1);
    expect(res.json().issues).toEqual([expect.objectContaining({ itemId: 'bad', code: 'icu_syntax_source' })]);
  });

  it('an unexpected error is a 500 {error} with nothing charged, logged without content', async () => {
    const { apiKey, orgId } = await h.account();
    crashNext = true;
    const res = await h.app.inject({ method: 'POST', url: '/api/v1/translate', headers: bearer(apiKey), payload });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ error: 'internal error' });
    const [b] = await h.database.query<{ spent: number; reserved: number }>(
      'SELECT spent_micros::int AS spent, reserved_micros::int AS reserved FROM budget_usage WHERE scope = $1',
      [`org:${orgId}`],
    );
    expect(b).toEqual({ spent: 0, reserved: 0 });
    const line = h.logs.find((l) => l.includes('unhandled error'));
    expect(line).toBeDefined();
    expect(line).not.toContain('Hello');
  });
});
