import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import { escapeAndroid, unescapeAndroid } from './android.ts';
import { parseLocaleFile } from './index.ts';
import { cldrCategories, fixture, placeholders, pseudoTranslations } from './testing.ts';
import { FileParseError } from './types.ts';

type Resource = { ':@': Record<string, string> } & Record<string, unknown>;

/** fast-xml-parser in order-preserving mode: the resources as [element name, attributes, children]. */
function resources(xml: string): { tag: string; attrs: Record<string, string>; node: Resource }[] {
  expect(XMLValidator.validate(xml)).toBe(true);
  const doc = new XMLParser({ preserveOrder: true, ignoreAttributes: false, attributeNamePrefix: '' }).parse(
    xml,
  ) as Resource[];
  const root = doc.find((n) => 'resources' in n)!.resources as Resource[];
  return root
    .filter((n) => !('#text' in n))
    .map((n) => {
      const tag = Object.keys(n).find((k) => k !== ':@')!;
      return { tag, attrs: n[':@'] ?? {}, node: n };
    });
}

const quantities = (node: Resource) =>
  ((node.plurals as Resource[]).filter((i) => 'item' in i) as Resource[]).map((i) => i[':@'].quantity);

describe('android strings.xml', () => {
  const source = fixture('strings.xml');

  it('round trip: same resources in the same order, translatable="false" and references untouched, escaping kept', () => {
    const file = parseLocaleFile('android', source);
    expect(file.strings.map((s) => s.key)).toEqual([
      'title_home',
      'welcome',
      'countdown',
      'quoted',
      'songs_found',
      'planets[0]',
      'planets[1]',
    ]);
    expect(file.strings.find((s) => s.key === 'welcome')!.text).toBe("Welcome, <b>%1$s</b>! You've got mail.");
    expect(file.strings.find((s) => s.key === 'quoted')!.text).toBe('Say "hi" — and   keep spaces');
    const { content, issues } = file.write(pseudoTranslations(file, 'de'), 'de');
    expect(issues).toEqual([]);
    const before = resources(source);
    const after = resources(content);
    expect(after.map((r) => `${r.tag}:${r.attrs.name}`)).toEqual(before.map((r) => `${r.tag}:${r.attrs.name}`));
    expect(content).toContain('<string name="app_name" translatable="false">Example</string>');
    expect(content).toContain('<string name="version" translatable="false">1.0.3</string>');
    expect(content).toContain('<string name="link">@string/title_home</string>');
    // What Android reads back from the written XML equals the translation: escapes and markup survive.
    const again = parseLocaleFile('android', content);
    const translations = pseudoTranslations(file, 'de');
    for (const s of again.strings.filter((x) => !x.plural)) expect(s.text).toBe(translations.get(s.key));
    expect(content).toMatch(/<xliff:g id="time" example="5 days">%1\$s<\/xliff:g>/);
    expect(placeholders(again.strings.find((s) => s.key === 'welcome')!.text)).toEqual(['%1$s', '</b>', '<b>']);
  });

  it.each([
    ['strings.xml', 'pl'],
    ['strings.xml', 'ar'],
    ['strings.xml', 'ja'],
    ['ru.strings.xml', 'en'],
  ])('<plurals> of %s into %s: one <item> per CLDR quantity of the target, each translated', (name, target) => {
    const file = parseLocaleFile('android', fixture(name));
    const { content, issues } = file.write(pseudoTranslations(file, target), target);
    expect(issues).toEqual([]);
    const plurals = resources(content).find((r) => r.tag === 'plurals')!;
    expect(quantities(plurals.node)).toEqual(cldrCategories(target));
    expect(content).not.toMatch(/quantity="[a-z]+">%d (song|файл)/);
  });

  it('the validators report a missing or extra quantity, and the file still has exactly the target quantities', () => {
    const file = parseLocaleFile('android', fixture('strings.xml'));
    const { content, issues } = file.write(
      new Map([['songs_found', '{count, plural, one {%d piosenka} two {x} other {%d piosenek}}']]),
      'pl',
    );
    expect(issues.map((i) => [i.itemId, i.code]).sort()).toEqual([
      ['songs_found', 'plural_form_extra'],
      ['songs_found', 'plural_form_missing'],
    ]);
    expect(quantities(resources(content).find((r) => r.tag === 'plurals')!.node)).toEqual([
      'one',
      'few',
      'many',
      'other',
    ]);
  });

  it('a translation whose tags do not nest is reported and left untranslated; the file stays well-formed', () => {
    const file = parseLocaleFile('android', source);
    for (const text of ['Hallo <b>%1$s!', 'Hallo %1$s</b>', 'Hallo a<x</b>']) {
      const { content, issues } = file.write(new Map([['welcome', text]]), 'de');
      expect(
        issues.map((i) => i.code),
        text,
      ).toEqual(['tag_unbalanced']);
      expect(XMLValidator.validate(content), text).toBe(true);
    }
  });

  it('escaping: Android reads back what was written', () => {
    for (const text of [
      "It's",
      'say "x"',
      'back\\slash',
      'line\nbreak\ttab',
      '@home',
      '?attr',
      '  spaced  out  ',
      'a & b < c',
    ]) {
      expect(
        unescapeAndroid(escapeAndroid(text).replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&')),
      ).toBe(text);
    }
  });

  it('refuses broken files with the line and the reason', () => {
    const truncated = source.slice(0, source.indexOf('<plurals'));
    for (const [bad, line] of [
      [truncated, truncated.split('\n').length],
      ['<resources><string>no name</string></resources>', 1],
      ['<resources>\n<plurals name="p"><item quantity="several">x</item></plurals></resources>', 2],
      ['<resources>\n<plurals name="p"><item quantity="one">x</item></plurals></resources>', 2],
      ['<resources>\n<string name="a">x</string>\n<string name="a">y</string></resources>', 3],
      ['<manifest/>', 1],
    ] as const) {
      let error: unknown;
      try {
        parseLocaleFile('android', bad);
      } catch (e) {
        error = e;
      }
      expect(error, bad).toBeInstanceOf(FileParseError);
      expect((error as FileParseError).line, bad).toBe(line);
    }
    expect(parseLocaleFile('android', source).strings).toHaveLength(7); // positive control
  });
});
