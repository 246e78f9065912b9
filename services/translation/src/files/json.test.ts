import { parse as parseMessageFormat } from '@messageformat/parser';
import { describe, expect, it } from 'vitest';
import { parseLocaleFile } from './index.ts';
import { cldrCategories, fixture, placeholders, pseudoTranslations } from './testing.ts';
import { FileParseError } from './types.ts';

/** Leaf paths of a parsed JSON value, in order (the independent parser is the platform's JSON.parse). */
function leaves(value: unknown, prefix = ''): [string, string][] {
  if (typeof value === 'string') return [[prefix, value]];
  if (value && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) => leaves(v, prefix ? `${prefix}.${k}` : k));
  }
  return [];
}

/** Case keys of the first plural in an ICU message, read by messageformat's parser (not the one the service uses). */
function pluralCases(message: string): string[] {
  const tokens = parseMessageFormat(message);
  for (const t of tokens) if (t.type === 'plural') return t.cases.map((c) => c.key).sort();
  throw new Error('no plural');
}

describe('json: nested i18next/ICU messages', () => {
  const source = fixture('nested.json');

  it('round trip en → de: same keys in the same order, same nesting and layout, placeholders kept', () => {
    const file = parseLocaleFile('json', source);
    expect(file.strings.map((s) => s.key)).toEqual(leaves(JSON.parse(source)).map(([k]) => k));
    const { content, issues } = file.write(pseudoTranslations(file, 'de'), 'de');
    expect(issues).toEqual([]);
    const before = leaves(JSON.parse(source));
    const after = leaves(JSON.parse(content));
    expect(after.map(([k]) => k)).toEqual(before.map(([k]) => k));
    after.forEach(([, text], i) => {
      const icu = file.strings[i]!.isIcu;
      expect(text).not.toBe(before[i]![1]);
      expect(placeholders(text, icu)).toEqual(placeholders(before[i]![1], icu));
    });
    expect(content.split('\n').length).toBe(source.split('\n').length);
    expect(Array.isArray(JSON.parse(content).errors)).toBe(true);
  });

  it.each(['pl', 'ar', 'ja', 'en'])('ICU plurals get the categories of %s', (target) => {
    const file = parseLocaleFile('json', source);
    const out = JSON.parse(file.write(pseudoTranslations(file, target), target).content);
    expect(pluralCases(out.common.items)).toEqual(cldrCategories(target).sort());
  });

  it('ru → en: the Russian categories become English ones', () => {
    const ru = JSON.stringify({ files: '{n, plural, one {# файл} few {# файла} many {# файлов} other {# файла}}' });
    const file = parseLocaleFile('json', ru);
    const out = JSON.parse(file.write(pseudoTranslations(file, 'en'), 'en').content);
    expect(pluralCases(out.files)).toEqual(['one', 'other']);
  });

  it('marks ICU values as ICU, i18next {{x}} and plain text as not', () => {
    const file = parseLocaleFile('json', source);
    const icu = Object.fromEntries(file.strings.map((s) => [s.key, s.isIcu]));
    expect(icu).toMatchObject({
      'common.greeting': true,
      'common.items': true,
      'nav.settings.legacy': false,
      'common.save': false,
    });
  });

  it('keys with dots stay unique; a string with quotes and newlines is written back as valid JSON', () => {
    const file = parseLocaleFile('json', '{"a.b": "x", "a": {"b": "y"}}');
    expect(file.strings.map((s) => s.key)).toEqual(['a\\.b', 'a.b']);
    const out = file.write(new Map([['a\\.b', 'say "hi"\nnow']]), 'de').content;
    expect(JSON.parse(out)).toEqual({ 'a.b': 'say "hi"\nnow', a: { b: 'y' } });
  });

  it('refuses what is not a JSON object, with the line', () => {
    expect(() => parseLocaleFile('json', '{\n  "a": "b",\n  "c": \n}')).toThrow(FileParseError);
    try {
      parseLocaleFile('json', '{\n  "a": "b",\n  "c": \n}');
    } catch (e) {
      expect((e as FileParseError).line).toBe(4);
    }
    for (const bad of ['', '[]', '"x"', '{"a": "b"', '{"a": "b",}', '{/* c */ "a": "b"}', '{"a": "b"} x']) {
      expect(() => parseLocaleFile('json', bad), bad).toThrow(FileParseError);
    }
    expect(parseLocaleFile('json', '{"a": "b"}').strings).toHaveLength(1); // positive control
  });
});

describe('arb: Flutter application resource bundles', () => {
  const source = fixture('app_en.arb');

  it('round trip: @@locale set, @key metadata and placeholders kept, messages translated', () => {
    const file = parseLocaleFile('arb', source);
    expect(file.strings.map((s) => s.key)).toEqual(['helloWorld', 'hello', 'nWombats', 'nFiles']);
    expect(file.strings.find((s) => s.key === 'hello')?.context).toBe('A message with a single parameter');
    const { content, issues } = file.write(pseudoTranslations(file, 'pl'), 'pl');
    expect(issues).toEqual([]);
    const before = JSON.parse(source);
    const after = JSON.parse(content);
    expect(Object.keys(after)).toEqual(Object.keys(before));
    expect(after['@@locale']).toBe('pl');
    for (const key of Object.keys(before).filter((k) => k.startsWith('@') && k !== '@@locale')) {
      expect(after[key]).toEqual(before[key]);
    }
    expect(after.hello).toContain('{userName}');
    expect(pluralCases(after.nWombats)).toEqual(['=0', '=1', ...cldrCategories('pl')].sort());
  });

  it.each(['pl', 'ar', 'ja'])('plurals as ICU with the categories of %s', (target) => {
    const file = parseLocaleFile('arb', source);
    const after = JSON.parse(file.write(pseudoTranslations(file, target), target).content);
    expect(pluralCases(after.nFiles)).toEqual(cldrCategories(target).sort());
  });

  it('ru → en: a Russian bundle’s plural comes back with the English categories', () => {
    const ru = JSON.stringify({
      '@@locale': 'ru',
      nFiles: '{count, plural, one{{count} файл} few{{count} файла} many{{count} файлов} other{{count} файла}}',
      '@nFiles': { placeholders: { count: { type: 'int' } } },
    });
    const file = parseLocaleFile('arb', ru);
    const after = JSON.parse(file.write(pseudoTranslations(file, 'en'), 'en').content);
    expect(after['@@locale']).toBe('en');
    expect(pluralCases(after.nFiles)).toEqual(['one', 'other']);
    expect(after['@nFiles']).toEqual({ placeholders: { count: { type: 'int' } } });
  });

  it('adds @@locale when the bundle has none', () => {
    const file = parseLocaleFile('arb', '{\n  "a": "A"\n}');
    expect(JSON.parse(file.write(new Map(), 'fr').content)).toEqual({ '@@locale': 'fr', a: 'A' });
    expect(JSON.parse(parseLocaleFile('arb', '{}').write(new Map(), 'fr').content)).toEqual({ '@@locale': 'fr' });
  });
});
