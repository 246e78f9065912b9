// Provider output that fails the validators is retried once with the issues as feedback, then flagged.
// The provider is the real OpenAI-compatible one talking to the fake upstream, wrapped to drop a placeholder
// from chosen replies (the fake itself always answers valid translations).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProviderRequest, TranslationProvider } from '../src/providers/index.ts';
import { bearer, type Harness, startHarness } from './harness.ts';

let corruptNext = 0;
let crashNext = false;
const seen: ProviderRequest[] = [];
let h: Harness;
beforeAll(async () => {
  h = await startHarness({
    wrapProvider: (real): TranslationProvider => ({
      name: real.name,
      complete: (prompt, opts) => real.complete(prompt, opts),
      async translate(req, opts) {
        seen.push(req);
        if (crashNext) {
          crashNext = false;
          throw new TypeError('provider bug');
        }
        const result = await real.translate(req, opts);
        if (corruptNext > 0) {
          corruptNext--;
          return {
            ...result,
            translations: result.translations.map((t) => ({ ...t, text: t.text.replace('{name}', '') })),
          };
        }
        return result;
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
    { id: 'b', text: 'Goodbye' },
  ],
  style: {},
  glossary: [],
};

describe('validator retry', () => {
  it('retries only the failing item, with the issues as feedback, and returns a clean result', async () => {
    const { apiKey } = await h.account();
    seen.length = 0;
    corruptNext = 1;
    const res = await h.app.inject({ method: 'POST', url: '/api/v1/translate', headers: bearer(apiKey), payload });
    expect(res.statusCode).toBe(200);
    expect(seen).toHaveLength(2);
    expect(seen[1]!.items.map((i) => i.id)).toEqual(['a']);
    expect(seen[1]!.feedback?.[0]).toMatchObject({ itemId: 'a', code: 'placeholder_missing' });
    const body = res.json();
    expect(body.issues).toEqual([]);
    expect(body.translations.find((t: { id: string }) => t.id === 'a').text).toContain('{name}');
    // Both calls are counted.
    const events = await h.database.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM usage_events WHERE kind = 'translate'`,
    );
    expect(events[0]!.n).toBe(2);
  });

  it('flags the issues (added `issues` field) when the retry fails validation too', async () => {
    const { apiKey } = await h.account();
    seen.length = 0;
    corruptNext = 2;
    const res = await h.app.inject({ method: 'POST', url: '/api/v1/translate', headers: bearer(apiKey), payload });
    expect(res.statusCode).toBe(200);
    expect(seen).toHaveLength(2);
    const body = res.json();
    expect(body.issues).toEqual([expect.objectContaining({ itemId: 'a', code: 'placeholder_missing' })]);
    expect(body.translations.map((t: { id: string }) => t.id)).toEqual(['a', 'b']);
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
