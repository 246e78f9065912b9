// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${x} is a placeholder under test, not a template
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type GlossaryEntry, scanProtected } from '../language/index.ts';
import { validateTranslation } from '../validators/validate.ts';
import { pseudoLocalize } from './pseudo-transform.ts';

describe('pseudoLocalize', () => {
  it('accents, brackets and pads by ~30% of the translatable letters', () => {
    expect(pseudoLocalize('Settings')).toBe('[Ŝéţţîñĝš ~~]');
    expect(pseudoLocalize('Settings', { accents: false })).toBe('[Settings ~~]');
  });
  it('is deterministic', () => {
    const s = 'Hello <b>{name}</b>, you have %d new {{thing}}';
    expect(pseudoLocalize(s)).toBe(pseudoLocalize(s));
  });
  it('keeps placeholders, tags, entities and URLs byte-identical', () => {
    const out = pseudoLocalize(
      'Hi %1$s, see <a href="https://x.io">docs</a> &amp; {count} {{ user }} ${x} at https://x.io/a',
    );
    expect(out).toBe(
      '[Ĥî %1$s, šéé <a href="https://x.io">ðöçš</a> &amp; {count} {{ user }} ${x} åţ https://x.io/a ~~~]',
    );
  });
  it('keeps neverTranslate terms and puts glossary targets in', () => {
    const glossary: GlossaryEntry[] = [
      { term: 'Scriptorium', target: null, neverTranslate: true },
      { term: 'API key', target: 'API-Schlüssel', neverTranslate: false },
    ];
    expect(pseudoLocalize('Your Scriptorium api key', { glossary })).toBe('[Ýöûŕ Scriptorium API-Schlüssel ~]');
  });
  it('leaves empty and blank strings alone', () => {
    expect(pseudoLocalize('')).toBe('');
    expect(pseudoLocalize('  ')).toBe('  ');
  });
  it('keeps ICU syntax and arguments, translating only literal text', () => {
    const src = "{n, plural, =0 {No files} one {# file} other {# files}} in <b>{folder}</b>, it''s {d, date, short}";
    const out = pseudoLocalize(src, { isIcu: true, targetLocale: 'en' });
    expect(out).toBe(
      "[{n, plural, =0 {Ñö ƒîļéš} one {# ƒîļé} other {# ƒîļéš}} îñ <b>{folder}</b>, îţ''š {d, date, short} ~~~~~~]",
    );
  });
  it('completes plural categories for the target locale with copies of other', () => {
    const src = '{n, plural, one {# file} other {# files}}';
    const out = pseudoLocalize(src, { isIcu: true, targetLocale: 'ru', accents: false });
    expect(out).toBe('[{n, plural, one {# file} other {# files} few {# files} many {# files}} ~~~]');
  });
  it('completes nested plurals, including inside the copied other case', () => {
    const src = '{a, plural, one {x} other {{b, plural, one {y} other {z}}}}';
    const out = pseudoLocalize(src, { isIcu: true, targetLocale: 'pl', accents: false });
    expect(
      validateTranslation({
        source: src,
        target: out,
        isIcu: true,
        sourceLocale: 'en',
        targetLocale: 'pl',
        glossary: [],
      }),
    ).toEqual([]);
  });
  it('treats an ICU source that does not parse as plain text', () => {
    expect(pseudoLocalize('Hi {name', { isIcu: true })).toBe('[Ĥî {ñåɱé ~~]');
  });
});

// Property: whatever the mix of words, placeholders, tags and glossary terms, the pseudo output passes every
// validator against its source and contains each protected token as often as the source.
const words = fc.constantFrom(
  'Open',
  'the',
  'file',
  'settings',
  'Save',
  'now',
  'über',
  'naïve',
  '日本語',
  '100',
  '!',
  ',',
);
const protectedTokens = fc.constantFrom('%s', '%1$d', '%.2f', '{{count}}', '${name}', '&amp;', 'https://a.io/x', '%%');
const glossaryTerms = fc.constantFrom('Scriptorium', 'API key');
const glossary: GlossaryEntry[] = [
  { term: 'Scriptorium', target: null, neverTranslate: true },
  { term: 'API key', target: 'API-Schlüssel', neverTranslate: false },
];

const plainText = fc
  .array(
    fc.oneof(
      { weight: 4, arbitrary: words },
      { weight: 2, arbitrary: protectedTokens },
      { weight: 1, arbitrary: glossaryTerms },
    ),
    {
      maxLength: 12,
    },
  )
  .map((parts) => parts.join(' '));

const withTags = fc
  .tuple(plainText, fc.constantFrom('b', 'i', 'a title="API key"', 'span'), plainText, plainText)
  .map(([a, tag, inner, b]) => `${a} <${tag}>${inner}</${tag.split(' ')[0]}> ${b}<br/>`);

const icuLiteral = fc
  .array(
    fc.oneof(
      { weight: 4, arbitrary: words },
      fc.constantFrom('%s', '%1$d', '<br/>', '&amp;', 'Scriptorium', 'API key'),
    ),
    {
      minLength: 1,
      maxLength: 4,
    },
  )
  .map((w) => w.join(' '));
const icuMessage: fc.Arbitrary<string> = fc.letrec<{ msg: string }>((tie) => ({
  msg: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    icuLiteral,
    fc.tuple(icuLiteral, fc.constantFrom('name', 'count', 'user')).map(([l, a]) => `${l} {${a}}`),
    // Plural cases carry the same placeholders (as real messages do): a case the target does not use is dropped.
    fc.tuple(tie('msg'), words).map(([m, w]) => `{n, plural, one {# ${m}} other {# ${m} ${w}}}`),
    fc.tuple(tie('msg'), tie('msg')).map(([m, o]) => `{g, select, male {${m}} other {${o}}}`),
    fc.tuple(icuLiteral, tie('msg')).map(([l, m]) => `<b>${l}</b> ${m}`),
  ),
})).msg;

describe('pseudoLocalize properties', () => {
  const locales = fc.constantFrom('de', 'ru', 'ar', 'ja', 'pl', 'fr');

  it('plain and tagged strings keep every protected token and pass the validators', () => {
    fc.assert(
      fc.property(fc.oneof(plainText, withTags), locales, fc.boolean(), (source, targetLocale, accents) => {
        const target = pseudoLocalize(source, { glossary, targetLocale, accents });
        const tokens = (s: string) =>
          scanProtected(s, { icu: false })
            .map((t) => t.text)
            .sort();
        expect(tokens(target)).toEqual(tokens(source));
        expect(
          validateTranslation({ source, target, isIcu: false, sourceLocale: 'en', targetLocale, glossary }),
        ).toEqual([]);
      }),
      { numRuns: 300, seed: 42 },
    );
  });

  it('ICU messages keep their syntax and arguments and get the target plural categories', () => {
    fc.assert(
      fc.property(icuMessage, locales, (source, targetLocale) => {
        const target = pseudoLocalize(source, { glossary, targetLocale, isIcu: true });
        expect(
          validateTranslation({ source, target, isIcu: true, sourceLocale: 'en', targetLocale, glossary }),
        ).toEqual([]);
      }),
      { numRuns: 200, seed: 7 },
    );
  });
});

describe('pseudoLocalize on hostile input', () => {
  it('stays linear on long pathological strings', () => {
    const glossary: GlossaryEntry[] = [{ term: 'word', target: 'Wort', neverTranslate: false }];
    for (const s of [
      `<a${' '.repeat(50_000)}`,
      '%0'.repeat(25_000),
      'a.'.repeat(25_000),
      'word '.repeat(10_000),
      '{'.repeat(50_000),
    ]) {
      const target = pseudoLocalize(s, { glossary });
      expect(target.length).toBeGreaterThan(s.length);
      expect(
        validateTranslation({ source: s, target, isIcu: false, sourceLocale: 'en', targetLocale: 'de', glossary }),
      ).toEqual([]);
    }
  });
  it('does not grow exponentially with nested plurals', () => {
    let msg = 'x';
    for (let i = 0; i < 12; i++) msg = `{n${i}, plural, one {a} other {${msg}}}`;
    const out = pseudoLocalize(msg, { isIcu: true, targetLocale: 'ar', accents: false });
    expect(out.length).toBeLessThan(16 * msg.length + 4096 + 100);
    expect(
      validateTranslation({
        source: msg,
        target: out,
        isIcu: true,
        sourceLocale: 'en',
        targetLocale: 'en',
        glossary: [],
      }),
    ).toEqual([]);
  });
});
