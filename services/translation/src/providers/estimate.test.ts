import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { countPromptTokens, countTokens, PROMPT_OVERHEAD_TOKENS } from '../tokens/index.ts';
import { createProvider } from './create-provider.ts';
import { translateMaxTokensOut } from './estimate.ts';
import { buildTranslationPrompt, formatTranslationReply } from './prompt.ts';
import { pseudoTranslate } from './pseudo.ts';
import { pseudoLocalize } from './pseudo-transform.ts';
import type { ProviderKind, ProviderRequest } from './types.ts';

/** The estimate a provider of `kind` makes before translating `r` (its output capped at `maxOutputTokens`). */
const estimateRequestTokens = (r: ProviderRequest, kind: ProviderKind, maxOutputTokens?: number) =>
  createProvider({
    kind,
    baseUrl: 'http://127.0.0.1:9',
    apiKey: 'unused',
    timeoutMs: 1000,
    ...(maxOutputTokens ? { maxOutputTokens } : {}),
  }).estimateTranslate(r);

describe('countTokens', () => {
  it('counts o200k_base tokens', () => {
    expect(countTokens('')).toBe(0);
    expect(countTokens('Hello, world')).toBe(3);
    expect(countTokens('Settings')).toBe(1);
  });
  it('counts special-token text as plain text instead of throwing', () => {
    expect(countTokens('<|endoftext|>')).toBeGreaterThan(1);
  });
  it('adds the chat framing to prompts', () => {
    expect(countPromptTokens({ system: 'Hello, world', user: 'Settings' })).toBe(4 + PROMPT_OVERHEAD_TOKENS);
  });
});

const req = (texts: string[]): ProviderRequest => ({
  sourceLocale: 'en',
  targetLocale: 'de',
  model: 'm',
  style: {},
  glossary: [],
  items: texts.map((text, i) => ({ id: `k${i}`, text })),
});

describe('estimateRequestTokens', () => {
  it('is exact for pseudo', () => {
    const r = req(['Open the settings', 'Hello {name}']);
    const actual = pseudoTranslate(r);
    expect(estimateRequestTokens(r, 'pseudo')).toEqual({ tokensIn: actual.tokensIn, maxTokensOut: actual.tokensOut });
  });
  it('bounds the same prompt for LLM kinds from above, tightly, and bounds the output', () => {
    const r = req(['Open the settings']);
    const e = estimateRequestTokens(r, 'openai');
    const exact = pseudoTranslate(r).tokensIn;
    expect(e.tokensIn).toBeGreaterThanOrEqual(exact);
    expect(e.tokensIn).toBeLessThanOrEqual(exact + 4);
    expect(e.maxTokensOut).toBe(16 + 12 + countTokens('k0') + 4 * countTokens('Open the settings'));
    expect(estimateRequestTokens(r, 'anthropic')).toEqual(e);
  });
  it('never counts fewer prompt tokens than the exact count of the prompt sent, and at most 2 more per item + 2', () => {
    // Texts from every script and punctuation the pieces could meet on (quotes, braces, brackets, slashes, newlines).
    const word = fc.oneof(
      fc.constantFrom('Open', 'the', "file's", '%s', '{name}', 'Übersicht', '日本語', '<b>x</b>', '"q"', '/', '\\n'),
      fc.constantFrom('{', '}', '[', ']', ',', ':', '"', "'", '/', '\n', '\t', ' ', '\\', '},{', '"}]'),
      fc.string({ unit: 'grapheme', maxLength: 12 }),
      fc.string({ unit: 'binary', maxLength: 8 }),
    );
    const text = fc.array(word, { minLength: 0, maxLength: 12 }).map((w) => w.join(''));
    const item = fc.record(
      {
        id: fc.oneof(fc.string({ minLength: 1, maxLength: 10 }), fc.constantFrom('a', '/x', '{', '"', '1')),
        text,
        isIcu: fc.boolean(),
        context: text,
        neighbors: fc.array(text, { maxLength: 2 }),
      },
      { requiredKeys: ['id', 'text'] },
    );
    fc.assert(
      fc.property(
        fc.uniqueArray(item, { minLength: 1, maxLength: 8, selector: (i) => i.id }),
        fc.record({ tone: fc.option(text, { nil: undefined }) }),
        fc.array(fc.record({ term: text, target: fc.option(text, { nil: null }), neverTranslate: fc.boolean() }), {
          maxLength: 2,
        }),
        (items, style, glossary) => {
          const r: ProviderRequest = { sourceLocale: 'en', targetLocale: 'ja', model: 'm', style, glossary, items };
          const exact = countPromptTokens(buildTranslationPrompt(r));
          const bound = estimateRequestTokens(r, 'openai').tokensIn;
          expect(bound).toBeGreaterThanOrEqual(exact);
          expect(bound).toBeLessThanOrEqual(exact + 2 * items.length + 2);
        },
      ),
      { numRuns: 120, seed: 11 },
    );
  });
  it('caps the output bound', () => {
    const long = req(['word '.repeat(5000)]);
    expect(estimateRequestTokens(long, 'openai').maxTokensOut).toBe(8192);
    expect(estimateRequestTokens(long, 'openai', 1000).maxTokensOut).toBe(1000);
  });
  it('bounds what the fakes answer (light pseudo), so a fake never cuts a reply short', () => {
    const text = fc.array(
      fc.constantFrom('Open', 'the', 'file', '%s', '{name}', 'Übersicht', '日本語', '<b>x</b>', '"q"'),
      {
        minLength: 1,
        maxLength: 40,
      },
    );
    fc.assert(
      fc.property(
        fc.array(
          text.map((w) => w.join(' ')),
          { minLength: 1, maxLength: 8 },
        ),
        (texts) => {
          const r = req(texts);
          const reply = formatTranslationReply(
            r.items.map((i) => ({ id: i.id, text: pseudoLocalize(i.text, { accents: false }) })),
          );
          expect(countTokens(reply)).toBeLessThanOrEqual(translateMaxTokensOut(r));
        },
      ),
      { numRuns: 200, seed: 5 },
    );
  });
});
