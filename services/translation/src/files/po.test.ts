import { po as gettext } from 'gettext-parser';
import { describe, expect, it } from 'vitest';
import { gettextPlurals, parseLocaleFile, pluralFormsHeader } from './index.ts';
import { fixture, placeholders, pseudoTranslations } from './testing.ts';
import { FileParseError } from './types.ts';

const source = fixture('messages.pot');

/** (msgctxt, msgid) of every message, in the order gettext-parser gives within each context. */
const ids = (parsed: ReturnType<typeof gettext.parse>) =>
  Object.entries(parsed.translations).flatMap(([ctx, entries]) =>
    Object.keys(entries)
      .filter((id) => id !== '')
      .map((id) => `${ctx}|${id}`),
  );

/** An independent evaluation of the header's C expression (JavaScript's operators agree on integers). */
const formOf = (header: string) => {
  const expr = /plural=(.*);$/.exec(header)![1]!;
  const f = new Function('n', `return +(${expr});`) as (n: number) => number;
  return (n: number) => f(n);
};

describe('po: gettext PO/POT', () => {
  it('round trip en → pl: parses with gettext-parser, same messages, comments and flags, header set', () => {
    const file = parseLocaleFile('po', source);
    const { content, issues } = file.write(pseudoTranslations(file, 'pl'), 'pl');
    expect(issues).toEqual([]);
    const before = gettext.parse(source);
    const after = gettext.parse(content);
    expect(ids(after)).toEqual(ids(before));
    expect(after.headers.Language).toBe('pl');
    expect(after.headers['Plural-Forms']).toBe(pluralFormsHeader('pl'));
    expect(after.headers['Project-Id-Version']).toBe('example 1.0');
    for (const [ctx, entries] of Object.entries(before.translations)) {
      for (const [id, entry] of Object.entries(entries)) {
        if (id === '') continue;
        const out = after.translations[ctx]![id]!;
        expect(out.comments).toEqual(entry.comments);
        expect(out.msgid_plural).toBe(entry.msgid_plural);
        expect(out.msgstr).toHaveLength(entry.msgid_plural ? 3 : 1);
        for (const form of out.msgstr) {
          expect(form).not.toBe('');
          expect(placeholders(form)).toEqual(placeholders(entry.msgid_plural ?? id));
        }
      }
    }
    expect(after.translations.menu!.Open!.msgstr[0]).not.toBe('');
    expect(after.translations.verb!.Open!.msgstr[0]).not.toBe('');
    expect(content).toContain('#~ msgid "Obsolete string"');
    expect(after.translations['']!['A long message that goes on\nover two lines.']!.msgstr[0]).toContain('\n');
  });

  it.each([
    ['en', 'pl', 3],
    ['en', 'ar', 6],
    ['en', 'ja', 1],
    ['ru', 'en', 2],
  ])('plurals %s → %s: as many msgstr[n] as the target header says, each translated', (from, target, forms) => {
    const pot = `msgid ""\nmsgstr "Language: ${from}\\n"\n\nmsgid "%d file"\nmsgid_plural "%d files"\nmsgstr[0] ""\nmsgstr[1] ""\n`;
    const file = parseLocaleFile('po', pot);
    const out = gettext.parse(file.write(pseudoTranslations(file, target), target).content);
    const header = out.headers['Plural-Forms']!;
    expect(Number(/nplurals=(\d)/.exec(header)![1])).toBe(forms);
    const entry = out.translations['']!['%d file']!;
    expect(entry.msgstr).toHaveLength(forms);
    for (const s of entry.msgstr) expect(s).toMatch(/%d/);
    // The header's expression picks, for every n, the form of the CLDR category Intl gives n.
    const rules = new Intl.PluralRules(target);
    const { categories } = gettextPlurals(target);
    const form = formOf(header);
    for (let n = 0; n < 2000; n++) expect(categories[form(n)]).toBe(rules.select(n));
  });

  it('the validators report a missing and an extra plural form; the file keeps exactly the target forms', () => {
    const file = parseLocaleFile('po', 'msgid "%d file"\nmsgid_plural "%d files"\nmsgstr[0] ""\nmsgstr[1] ""\n');
    const missing = file.write(new Map([['%d file', '{count, plural, one {%d plik} other {%d pliki}}']]), 'pl');
    expect(missing.issues.map((i) => [i.itemId, i.code])).toEqual([['%d file', 'plural_form_missing']]);
    expect(gettext.parse(missing.content).translations['']!['%d file']!.msgstr).toEqual([
      '%d plik',
      '%d pliki',
      '%d pliki',
    ]);
    const extra = file.write(
      new Map([['%d file', '{count, plural, one {%d Datei} few {x} other {%d Dateien}}']]),
      'de',
    );
    expect(extra.issues.map((i) => i.code)).toEqual(['plural_form_extra']);
    expect(gettext.parse(extra.content).translations['']!['%d file']!.msgstr).toEqual(['%d Datei', '%d Dateien']);
  });

  it('adds a header when the file has none', () => {
    const out = gettext.parse(
      parseLocaleFile('po', 'msgid "a"\nmsgstr ""\n').write(new Map([['a', 'b']]), 'fr').content,
    );
    expect(out.headers['Plural-Forms']).toBe(pluralFormsHeader('fr'));
    expect(out.translations['']!.a!.msgstr).toEqual(['b']);
  });

  it('refuses broken files with the line and the reason; accepts the POT template header', () => {
    const cases: [string, number][] = [
      ['msgid ""\nmsgstr ""\n"Plural-Forms: nplurals=two; plural=(n != 1);\\n"\n', 3],
      ['msgid ""\nmsgstr ""\n"Plural-Forms: nplurals=2; plural=(n != ;\\n"\n', 3],
      ['msgid ""\nmsgstr ""\n"this is no header line\\n"\n', 3],
      ['msgid "a"\nmsgstr "unterminated\n', 2],
      ['msgid "a"\nmsgstr "bad \\q escape"\n', 2],
      ['msgstr "no msgid"\n', 1],
      ['msgid "a"\nmsgstr[0] "x"\n', 2],
      ['msgid "a"\nmsgid_plural "b"\nmsgstr "x"\n', 3],
      ['msgid "a"\nmsgstr "x"\n\nmsgid "a"\nmsgstr "y"\n', 4],
      ['msgid "a"\n', 1],
      ['msgfoo "a"\n', 1],
    ];
    for (const [text, line] of cases) {
      let error: unknown;
      try {
        parseLocaleFile('po', text);
      } catch (e) {
        error = e;
      }
      expect(error, text).toBeInstanceOf(FileParseError);
      expect((error as FileParseError).line, text).toBe(line);
    }
    expect(parseLocaleFile('po', source).strings).toHaveLength(8); // positive control: the template header is fine
  });
});

describe('gettextPlurals: derived from Intl.PluralRules', () => {
  it.each([
    'en',
    'de',
    'fr',
    'pt',
    'es',
    'it',
    'ru',
    'uk',
    'pl',
    'cs',
    'sk',
    'ro',
    'lt',
    'lv',
    'ar',
    'he',
    'cy',
    'ga',
    'gd',
    'sl',
    'mt',
    'br',
    'gv',
    'is',
    'mk',
    'ja',
    'zh',
    'ko',
    'tr',
    'hi',
    'be',
    'hr',
    'sr',
    'bs',
    'da',
    'sv',
    'fi',
    'ca',
    'pt-PT',
    'zh-Hant',
  ])('%s: the expression agrees with Intl on 0…100,000 and large numbers', (locale) => {
    const { categories, plural, nplurals } = gettextPlurals(locale);
    expect(nplurals).toBe(categories.length);
    const rules = new Intl.PluralRules(locale);
    const form = new Function('n', `return +(${plural});`) as (n: number) => number;
    for (let n = 0; n <= 100_000; n++) {
      if (categories[form(n)] !== rules.select(n)) throw new Error(`${locale} at ${n}`);
    }
    for (const n of [1e6, 2e6, 1e7, 1e9, 1_000_001, 21_000_000]) expect(categories[form(n)]).toBe(rules.select(n));
  });

  it('refuses an invalid locale tag', () => {
    expect(() => gettextPlurals('not a locale')).toThrow();
  });
});
