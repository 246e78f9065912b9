import {
  DEFAULT_KNOBS,
  FAKE_API_KEY,
  type FakeUpstream,
  startFakeAnthropic,
  startFakeOpenAI,
} from '@scriptorium/harness/translation-fakes';
import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { judgeTranslations } from '../src/judge/index.ts';
import {
  buildTranslationPrompt,
  createProvider,
  formatTranslationReply,
  type ProviderKind,
  type ProviderRequest,
  pseudoLocalize,
  translateMaxTokensOut,
  UpstreamError,
} from '../src/providers/index.ts';
import { countPromptTokens, countTokens } from '../src/tokens/index.ts';
import { validateBatch } from '../src/validators/index.ts';

// Providers against the fake upstreams: real HTTP on 127.0.0.1, the documented request and reply shapes.

/** The estimate a provider of `kind` makes before translating `r`. */
const estimateRequestTokens = (r: ProviderRequest, kind: ProviderKind) =>
  createProvider({ kind, baseUrl: 'http://127.0.0.1:9', apiKey: 'unused', timeoutMs: 1000 }).estimateTranslate(r);

const req: ProviderRequest = {
  sourceLocale: 'en',
  targetLocale: 'ru',
  model: 'model-x',
  style: { tone: 'friendly' },
  glossary: [
    { term: 'Scriptorium', target: null, neverTranslate: true },
    { term: 'settings', target: 'настройки', neverTranslate: false },
  ],
  items: [
    { id: 'title', text: 'Open Scriptorium settings', context: 'menu' },
    { id: 'count', text: 'You have {n, plural, one {# file} other {# files}}', isIcu: true },
    { id: 'html', text: 'Hello <b>%s</b>, {{count}} new' },
  ],
};

const SECRET_TEXT = 'Open Scriptorium settings';

async function upstreamError(p: Promise<unknown>): Promise<UpstreamError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(UpstreamError);
    const err = e as UpstreamError;
    expect(err.message).not.toContain(FAKE_API_KEY);
    expect(err.message).not.toContain(SECRET_TEXT);
    return err;
  }
  throw new Error('expected an UpstreamError');
}

describe.each([
  ['openai', startFakeOpenAI],
  ['anthropic', startFakeAnthropic],
] as const)('%s provider against its fake', (kind, start) => {
  let fake: FakeUpstream;
  const provider = () => createProvider({ kind, baseUrl: fake.url, apiKey: FAKE_API_KEY, timeoutMs: 2_000 });

  beforeAll(async () => {
    fake = await start();
  });
  afterAll(async () => {
    await fake.close();
  });
  beforeEach(() => {
    fake.set(DEFAULT_KNOBS);
  });

  it('translates every item and reports the upstream usage, within the estimate', async () => {
    const r = await provider().translate(req);
    expect(r.translations).toEqual(
      req.items.map((i) => ({
        id: i.id,
        text: pseudoLocalize(i.text, {
          isIcu: i.isIcu === true,
          targetLocale: 'ru',
          glossary: req.glossary,
          accents: false,
        }),
      })),
    );
    expect(r.model).toBe('model-x');
    const estimate = estimateRequestTokens(req, kind);
    // The estimate bounds the exact count the fakes report, a few tokens above it (2 per item + 2 at most).
    expect(r.tokensIn).toBeLessThanOrEqual(estimate.tokensIn);
    expect(r.tokensIn).toBeGreaterThanOrEqual(estimate.tokensIn - 2 * req.items.length - 2);
    expect(r.tokensOut).toBeGreaterThan(0);
    expect(r.tokensOut).toBeLessThanOrEqual(estimate.maxTokensOut);
    expect(
      validateBatch(
        r.translations.map((t, i) => ({
          ...t,
          source: req.items[i]!.text,
          target: t.text,
          isIcu: req.items[i]!.isIcu,
        })),
        req,
      ),
    ).toEqual([]);
  });

  it('sends the documented request', async () => {
    await provider().translate(req);
    const seen = fake.lastRequest!;
    const body = seen.body as Record<string, unknown>;
    expect(seen.method).toBe('POST');
    expect(seen.headers['content-type']).toBe('application/json');
    expect(body.model).toBe('model-x');
    expect(body.max_tokens).toBe(translateMaxTokensOut(req));
    expect(body.temperature).toBe(0);
    if (kind === 'openai') {
      expect(seen.path).toBe('/v1/chat/completions');
      expect(seen.headers.authorization).toBe(`Bearer ${FAKE_API_KEY}`);
      expect(body.response_format).toEqual({ type: 'json_object' });
      const messages = body.messages as { role: string; content: string }[];
      expect(messages.map((m) => m.role)).toEqual(['system', 'user']);
      expect(JSON.parse(messages[1]!.content).items[0]).toEqual({ id: 'title', text: SECRET_TEXT, context: 'menu' });
    } else {
      expect(seen.path).toBe('/v1/messages');
      expect(seen.headers['x-api-key']).toBe(FAKE_API_KEY);
      expect(seen.headers['anthropic-version']).toBe('2023-06-01');
      expect(typeof body.system).toBe('string');
      const messages = body.messages as { role: string; content: string }[];
      expect(messages.map((m) => m.role)).toEqual(['user']);
    }
  });

  it('passes the usage numbers the upstream reports', async () => {
    fake.set({ usage: { tokensIn: 1234, tokensOut: 56 } });
    const r = await provider().translate(req);
    expect([r.tokensIn, r.tokensOut]).toEqual([1234, 56]);
  });

  it('maps 500 to UpstreamError(status)', async () => {
    fake.set({ failStatus: 500 });
    const e = await upstreamError(provider().translate(req));
    expect([e.reason, e.upstreamStatus]).toEqual(['status', 500]);
  });

  it('maps 429 to UpstreamError(status) with retry-after', async () => {
    fake.set({ failStatus: 429, retryAfterSeconds: 7 });
    const e = await upstreamError(provider().translate(req));
    expect([e.reason, e.upstreamStatus, e.retryAfterSeconds]).toEqual(['status', 429, 7]);
    expect(e.message).toContain(kind === 'openai' ? 'rate_limit_exceeded' : 'rate_limit_error');
  });

  it('maps a wrong key to UpstreamError(status 401)', async () => {
    const p = createProvider({ kind, baseUrl: fake.url, apiKey: 'sk-wrong', timeoutMs: 2_000 });
    const e = await upstreamError(p.translate(req));
    expect(e.upstreamStatus).toBe(401);
    expect(e.message).not.toContain('sk-wrong');
  });

  it('times out', async () => {
    fake.set({ latencyMs: 1_500 });
    const p = createProvider({ kind, baseUrl: fake.url, apiKey: FAKE_API_KEY, timeoutMs: 100 });
    expect((await upstreamError(p.translate(req))).reason).toBe('timeout');
  });

  it("stops when the caller's signal aborts", async () => {
    fake.set({ latencyMs: 1_500 });
    const e = await upstreamError(provider().translate(req, { signal: AbortSignal.timeout(50) }));
    expect(e.reason).toBe('aborted');
  });

  it('maps malformed content and a non-JSON body to UpstreamError(malformed)', async () => {
    fake.set({ malformed: true });
    expect((await upstreamError(provider().translate(req))).reason).toBe('malformed');
    fake.set({ malformed: 'body' });
    expect((await upstreamError(provider().translate(req))).reason).toBe('malformed');
  });

  it('maps a reply missing an id to UpstreamError(missing_items)', async () => {
    fake.set({ omitItems: 1 });
    expect((await upstreamError(provider().translate(req))).reason).toBe('missing_items');
  });

  it('maps a dropped connection to UpstreamError(network)', async () => {
    fake.set({ dropConnection: true });
    expect((await upstreamError(provider().translate(req))).reason).toBe('network');
  });

  it('maps a reply cut at max_tokens to UpstreamError(malformed)', async () => {
    fake.set({ transform: 'pseudo' });
    const p = createProvider({ kind, baseUrl: fake.url, apiKey: FAKE_API_KEY, timeoutMs: 2_000, maxOutputTokens: 20 });
    const e = await upstreamError(p.translate(req));
    expect([e.reason, e.message]).toEqual(['malformed', 'upstream reply was cut at max_tokens']);
  });

  it('judges through the GEMBA-MQM prompt', async () => {
    const before = fake.requestCount;
    const r = await judgeTranslations(provider(), {
      sourceLocale: 'en',
      targetLocale: 'de',
      model: 'judge-x',
      glossary: [],
      items: [
        { id: 'ok', source: 'Save', target: 'Speichern' },
        { id: 'bad', source: 'Hello %s', target: 'Hallo' },
      ],
    });
    expect(fake.requestCount).toBe(before + 1);
    expect(r.judge).toBe('llm');
    expect(r.model).toBe('judge-x');
    expect(r.errors).toEqual([
      { itemId: 'bad', category: 'accuracy', severity: 'major', description: 'placeholder %s missing' },
    ]);
    expect(r.scores.accuracy).toBe(2.5);
    expect(r.issues.map((i) => i.code)).toEqual(['placeholder_missing']);
    expect(r.tokensIn).toBeGreaterThan(100);
    expect(r.tokensOut).toBe(
      countTokens(
        JSON.stringify({
          errors: [{ id: 'bad', category: 'accuracy', severity: 'major', description: 'placeholder %s missing' }],
        }),
      ),
    );
  });

  it('maps a judge reply that is not MQM JSON to UpstreamError', async () => {
    fake.set({ malformed: true });
    const e = await upstreamError(
      judgeTranslations(provider(), {
        sourceLocale: 'en',
        targetLocale: 'de',
        model: 'j',
        glossary: [],
        items: [{ id: 'a', source: 'x', target: 'y' }],
      }),
    );
    expect(e.reason).toBe('malformed');
  });
});

describe('OpenAI reasoning models', () => {
  it('sends max_completion_tokens and no temperature when configured', async () => {
    const fake = await startFakeOpenAI();
    try {
      const p = createProvider({
        kind: 'openai',
        baseUrl: fake.url,
        apiKey: FAKE_API_KEY,
        timeoutMs: 2_000,
        openaiTokenLimit: 'max_completion_tokens',
      });
      await p.translate(req);
      const body = fake.lastRequest!.body as Record<string, unknown>;
      expect(body.max_completion_tokens).toBe(translateMaxTokensOut(req));
      expect(body.max_tokens).toBeUndefined();
      expect(body.temperature).toBeUndefined();
    } finally {
      await fake.close();
    }
  });
});

describe('OpenAI-compatible server that reports no usage', () => {
  it('counts the exact prompt and reply with the tokenizer instead', async () => {
    const fake = await startFakeOpenAI({ omitUsage: true });
    try {
      const p = createProvider({ kind: 'openai', baseUrl: fake.url, apiKey: FAKE_API_KEY, timeoutMs: 2_000 });
      const r = await p.translate(req);
      expect(r.tokensIn).toBe(countPromptTokens(buildTranslationPrompt(req)));
      expect(r.tokensIn).toBeLessThanOrEqual(estimateRequestTokens(req, 'openai').tokensIn);
      expect(r.tokensOut).toBe(countTokens(formatTranslationReply(r.translations)));
    } finally {
      await fake.close();
    }
  });
});

describe('unreachable upstream', () => {
  it('maps a refused connection to UpstreamError(network)', async () => {
    const fake = await startFakeOpenAI();
    const url = fake.url;
    await fake.close();
    const p = createProvider({ kind: 'openai', baseUrl: url, apiKey: FAKE_API_KEY, timeoutMs: 2_000 });
    expect((await upstreamError(p.translate(req))).reason).toBe('network');
  });
});

describe('OpenAI-compatible server without auth (Ollama, vLLM)', () => {
  it('works without an API key and without response_format when jsonMode is off', async () => {
    const fake = await startFakeOpenAI({ apiKey: null });
    try {
      const p = createProvider({ kind: 'openai', baseUrl: `${fake.url}/`, timeoutMs: 2_000, jsonMode: false });
      const r = await p.translate(req);
      expect(r.translations).toHaveLength(3);
      expect(fake.lastRequest?.headers.authorization).toBeUndefined();
      expect((fake.lastRequest!.body as Record<string, unknown>).response_format).toBeUndefined();
    } finally {
      await fake.close();
    }
  });
});

describe('invalidReplies knob', () => {
  it('spoils the next N translate replies so the validators flag every item, then answers correctly', async () => {
    const fake = await startFakeOpenAI({ invalidReplies: 2 });
    try {
      const p = createProvider({ kind: 'openai', baseUrl: fake.url, apiKey: FAKE_API_KEY, timeoutMs: 2_000 });
      const r2: ProviderRequest = {
        ...req,
        items: [...req.items, { id: 'plain', text: 'Just words' }],
      };
      const check = async () => {
        const r = await p.translate(r2);
        const issues = validateBatch(
          r.translations.map((t, i) => ({
            id: t.id,
            source: r2.items[i]!.text,
            target: t.text,
            isIcu: r2.items[i]!.isIcu,
          })),
          r2,
        );
        return [...new Set(issues.map((i) => i.itemId))];
      };
      expect(await check()).toEqual(['title', 'count', 'html', 'plain']);
      expect(await check()).toEqual(['title', 'count', 'html', 'plain']);
      expect(await check()).toEqual([]);
    } finally {
      await fake.close();
    }
  });
});

describe('round-trip property', () => {
  it('random batches come back complete, valid, and with usage within the estimate', async () => {
    const fake = await startFakeAnthropic();
    try {
      const p = createProvider({ kind: 'anthropic', baseUrl: fake.url, apiKey: FAKE_API_KEY, timeoutMs: 5_000 });
      const word = fc.constantFrom(
        'Open',
        'file',
        'Scriptorium',
        'settings',
        '%s',
        '{{n}}',
        '<b>x</b>',
        'naïve',
        '日本',
        '"q"',
        '\\',
      );
      const text = fc.array(word, { minLength: 1, maxLength: 8 }).map((w) => w.join(' '));
      const icuText = text.filter((t) => !t.includes('{{')); // mustache is not ICU
      const icu = fc.tuple(icuText, icuText).map(([a, b]) => `{n, plural, one {# ${a}} other {# ${b}}}`);
      const item = fc.oneof(
        text.map((t) => ({ text: t, isIcu: false })),
        icu.map((t) => ({ text: t, isIcu: true })),
      );
      await fc.assert(
        fc.asyncProperty(
          fc.array(item, { minLength: 1, maxLength: 6 }),
          fc.constantFrom('de', 'ru', 'ar', 'ja'),
          async (items, targetLocale) => {
            const batch: ProviderRequest = {
              ...req,
              targetLocale,
              items: items.map((i, n) => ({ id: `i${n}`, ...i })),
            };
            const r = await p.translate(batch);
            expect(r.translations.map((t) => t.id)).toEqual(batch.items.map((i) => i.id));
            // The reservation bound is never below the reported count, and at most 2 tokens per item + 2 above it.
            const bound = estimateRequestTokens(batch, 'anthropic').tokensIn;
            expect(r.tokensIn).toBeLessThanOrEqual(bound);
            expect(r.tokensIn).toBeGreaterThanOrEqual(bound - 2 * batch.items.length - 2);
            const checked = r.translations.map((t, n) => ({
              id: t.id,
              source: batch.items[n]!.text,
              target: t.text,
              isIcu: batch.items[n]!.isIcu,
            }));
            expect(validateBatch(checked, batch)).toEqual([]);
          },
        ),
        { numRuns: 25, seed: 29 },
      );
    } finally {
      await fake.close();
    }
  });
});
