import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { validateTranslation } from './validate.ts';

// Review edits and provider replies reach the validators from the network: whatever the text, they answer a list.

const icuish = fc
  .array(
    fc.oneof(
      fc.string({ maxLength: 8 }),
      fc.constantFrom(
        '{',
        '}',
        "'",
        '#',
        '<b>',
        '</b>',
        '<',
        '>',
        ',',
        ' plural',
        ' select',
        ' other',
        '%s',
        '{{',
        '}}',
        '{n}',
        '=',
      ),
    ),
    { maxLength: 30 },
  )
  .map((parts) => parts.join(''));

const locale = fc.oneof(fc.constantFrom('en', 'ru', 'ar', 'ja', 'pl', 'pt-BR', 'zh-Hant'), fc.string({ maxLength: 6 }));
const glossary = fc.array(
  fc.record({
    term: fc.string({ maxLength: 6 }),
    target: fc.option(fc.string({ maxLength: 6 }), { nil: null }),
    neverTranslate: fc.boolean(),
  }),
  { maxLength: 3 },
);

describe('validateTranslation on arbitrary input', () => {
  it('never throws and returns well-formed issues', () => {
    fc.assert(
      fc.property(icuish, icuish, fc.boolean(), locale, glossary, (source, target, isIcu, targetLocale, g) => {
        const issues = validateTranslation({ source, target, isIcu, sourceLocale: 'en', targetLocale, glossary: g });
        for (const issue of issues) {
          expect(typeof issue.code).toBe('string');
          expect(typeof issue.message).toBe('string');
        }
      }),
      { numRuns: 1000, seed: 19 },
    );
  });
  it('accepts any text as its own translation when it has no glossary terms', () => {
    fc.assert(
      fc.property(icuish, fc.boolean(), (text, isIcu) => {
        const issues = validateTranslation({
          source: text,
          target: text,
          isIcu,
          sourceLocale: 'en',
          targetLocale: 'en',
          glossary: [],
        });
        // Only a broken source can be reported, never a difference between identical strings.
        expect(issues.every((i) => i.code === 'icu_syntax_source')).toBe(true);
      }),
      { numRuns: 500, seed: 23 },
    );
  });
});
