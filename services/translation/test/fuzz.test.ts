// Fuzzes the JSON body parsing of POST /api/v1/translate through app.inject() with bounded fast-check runs:
// whatever the body, the answer is a documented status with an {error} body, never a 500.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batch, bearer, type Harness, startHarness } from './harness.ts';

let h: Harness;
let apiKey: string;
beforeAll(async () => {
  h = await startHarness({
    env: { RATE_LIMITS: JSON.stringify([{ route: '/api/v1/translate', requestsPerMinute: 100_000 }]) },
  });
  apiKey = (await h.account({ plan: 'enterprise' })).apiKey;
});
afterAll(async () => h?.close());

async function post(payload: string, contentType = 'application/json') {
  const res = await h.app.inject({
    method: 'POST',
    url: '/api/v1/translate',
    headers: { ...bearer(apiKey), 'content-type': contentType },
    payload,
  });
  expect([200, 400, 402, 403, 413, 415, 502], `${res.statusCode} for ${payload.slice(0, 200)}`).toContain(
    res.statusCode,
  );
  const body = res.json();
  if (res.statusCode === 200) expect(Array.isArray(body.translations)).toBe(true);
  else {
    expect(Object.keys(body)).toEqual(['error']);
    expect(typeof body.error).toBe('string');
  }
  return res.statusCode;
}

describe('fuzz: translate body parsing', () => {
  it('arbitrary JSON values', async () => {
    await fc.assert(
      fc.asyncProperty(fc.json({ maxDepth: 4 }), async (json) => {
        await post(json);
      }),
      { numRuns: 150, seed: 4242 },
    );
  });

  it('arbitrary bytes as a JSON body', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 300 }), async (text) => {
        await post(text);
      }),
      { numRuns: 150, seed: 7 },
    );
  });

  it('valid batches with fields replaced by arbitrary values', async () => {
    const keys = [
      'sourceLocale',
      'targetLocale',
      'tier',
      'modelOverride',
      'items',
      'style',
      'glossary',
      '__proto__',
      'constructor',
    ];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...keys),
        fc.jsonValue({ maxDepth: 3 }),
        fc.integer({ min: 1, max: 3 }),
        async (key, value, n) => {
          const body = JSON.stringify(batch(n)).replace(/}$/, `,${JSON.stringify(key)}:${JSON.stringify(value)}}`);
          await post(body);
        },
      ),
      { numRuns: 120, seed: 99 },
    );
  });

  it('items with arbitrary strings (unicode, ICU-like, tags) never crash the pipeline', async () => {
    const icuish = fc.stringMatching(/^[a-z {}#<>/,]{0,40}$/);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.oneof(fc.string({ maxLength: 60 }), icuish), fc.boolean()), {
          minLength: 1,
          maxLength: 5,
        }),
        async (items) => {
          const body = batch(1, { items: items.map(([text, isIcu], i) => ({ id: `i${i}`, text, isIcu })) });
          const status = await post(JSON.stringify(body));
          expect([200, 502]).toContain(status);
        },
      ),
      { numRuns: 60, seed: 3 },
    );
  });
});
