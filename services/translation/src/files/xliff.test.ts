import { DOMParser, type Element } from '@xmldom/xmldom';
import { describe, expect, it } from 'vitest';
import xliff from 'xliff';
import { parseLocaleFile } from './index.ts';
import { fixture, pseudoTranslations } from './testing.ts';
import { FileParseError } from './types.ts';

/** Parsed with @xmldom/xmldom, throwing on any well-formedness error. */
function dom(xml: string) {
  return new DOMParser({
    onError: (level, message) => {
      if (level !== 'warning') throw new Error(message);
    },
  }).parseFromString(xml, 'text/xml');
}

const elements = (doc: ReturnType<typeof dom>, name: string) => Array.from(doc.getElementsByTagName(name));
/** Inline codes of an element (name and id), in document order. */
const codes = (el: Element): string[] =>
  Array.from(el.getElementsByTagName('*')).map(
    (c) => `${c.tagName}#${c.getAttribute('id') ?? c.getAttribute('startRef')}`,
  );

describe('xliff 1.2', () => {
  const source = fixture('app.xlf');

  it('round trip: the same units in the same order, targets filled with state, inline codes kept in order', async () => {
    const file = parseLocaleFile('xliff', source);
    expect(file.strings.map((s) => s.key)).toEqual(['introductionHeader', 'welcome', 'count']);
    expect(file.strings[0]!.context).toBe('An introduction header for this sample');
    const { content, issues } = file.write(pseudoTranslations(file, 'de'), 'de');
    expect(issues).toEqual([]);
    const before = dom(source);
    const after = dom(content);
    expect(elements(after, 'trans-unit').map((u) => u.getAttribute('id'))).toEqual(
      elements(before, 'trans-unit').map((u) => u.getAttribute('id')),
    );
    expect(elements(after, 'file')[0]!.getAttribute('target-language')).toBe('de');
    for (const unit of elements(after, 'trans-unit')) {
      const target = unit.getElementsByTagName('target')[0];
      if (unit.getAttribute('translate') === 'no') {
        expect(target).toBeUndefined();
        continue;
      }
      expect(target!.getAttribute('state')).toBe('translated');
      const src = unit.getElementsByTagName('source')[0]!;
      if (unit.getAttribute('id') !== 'count') expect(codes(target!)).toEqual(codes(src));
      expect(target!.textContent).not.toBe(src.textContent);
    }
    // The XLIFF library reads the same structure back.
    const js = await xliff.xliff12ToJs(content);
    expect(Object.keys(js.resources['ng2.template']!)).toEqual(['introductionHeader', 'welcome', 'count', 'fixed']);
    expect(js.targetLanguage).toBe('de');
  });

  it('an ICU plural in a unit gets the target categories; its repeated inline code is no issue', () => {
    const file = parseLocaleFile('xliff', source);
    const { content, issues } = file.write(pseudoTranslations(file, 'pl'), 'pl');
    expect(issues).toEqual([]);
    const target = elements(dom(content), 'trans-unit')
      .find((u) => u.getAttribute('id') === 'count')!
      .getElementsByTagName('target')[0]!;
    const xml = target.toString();
    for (const c of ['one', 'few', 'many', 'other']) expect(xml).toContain(` ${c} {`);
  });

  it('a translation that drops or adds an inline code is reported; one that breaks nesting is left out', () => {
    const file = parseLocaleFile('xliff', source);
    const dropped = file.write(new Map([['welcome', 'Willkommen, öffne dein Postfach.']]), 'de');
    expect(dropped.issues.map((i) => i.code)).toEqual(['inline_code_missing']);
    expect(dom(dropped.content)).toBeTruthy();
    const broken = file.write(new Map([['welcome', 'Hallo <g id="1" ctype="x-b">x']]), 'de');
    expect(broken.issues.map((i) => i.code)).toEqual(['tag_unbalanced']);
    expect(dom(broken.content)).toBeTruthy();
    const escaped = file.write(new Map([['introductionHeader', 'a < b & <script>']]), 'de');
    expect(elements(dom(escaped.content), 'target')[0]!.textContent).toBe('a < b & <script>');
    // A `<` right before a kept closing code: the code is still seen, so the stray close is reported, not written.
    const stray = file.write(new Map([['welcome', 'Hallo a<b</g>']]), 'de');
    expect(stray.issues.map((i) => i.code)).toContain('tag_unbalanced');
    expect(dom(stray.content)).toBeTruthy();
  });
});

describe('xliff 2.0', () => {
  const source = fixture('app.xliff2.xlf');

  it('round trip: units, segments and ids kept, trgLang and state set, <pc>/<ph>/<sc>/<ec> kept in order', async () => {
    const file = parseLocaleFile('xliff', source);
    expect(file.strings.map((s) => s.key)).toEqual(['u1/s1', 'u1/s2', 'u2']);
    expect(file.strings[2]!.context).toBe('Button label');
    const { content, issues } = file.write(pseudoTranslations(file, 'fr'), 'fr');
    expect(issues).toEqual([]);
    const after = dom(content);
    expect(after.documentElement!.getAttribute('trgLang')).toBe('fr');
    expect(elements(after, 'unit').map((u) => u.getAttribute('id'))).toEqual(['u1', 'u2']);
    for (const seg of elements(after, 'segment')) {
      expect(seg.getAttribute('state')).toBe('translated');
      const src = seg.getElementsByTagName('source')[0]!;
      const tgt = seg.getElementsByTagName('target')[0]!;
      expect(codes(tgt)).toEqual(codes(src));
      expect(tgt.textContent).not.toBe('old');
    }
    const js = await xliff.xliff2js(content);
    expect(Object.keys(js.resources.f1!)[0]).toBe('u1');
    expect(JSON.stringify(js.resources.f1)).toContain('"u2"');
  });

  it('refuses truncated and foreign XML with the line', () => {
    const truncated = source.slice(0, source.indexOf('</segment>'));
    for (const [bad, line] of [
      [truncated, truncated.split('\n').length],
      ['<xliff version="3.0"></xliff>', 1],
      ['<html></html>', 1],
      [
        '<xliff version="2.0"><file><unit id="a"><segment><source>x &nope; y</source></segment></unit></file></xliff>',
        1,
      ],
      ['<!DOCTYPE x [<!ENTITY a "aaaa">]><xliff version="2.0"/>', 1],
      ['<xliff version="1.2"><file><body><trans-unit><source>x</source></trans-unit></body></file></xliff>', 1],
    ] as const) {
      let error: unknown;
      try {
        parseLocaleFile('xliff', bad);
      } catch (e) {
        error = e;
      }
      expect(error, bad).toBeInstanceOf(FileParseError);
      expect((error as FileParseError).line, bad).toBe(line);
    }
    expect(parseLocaleFile('xliff', source).strings).toHaveLength(3); // positive control
  });
});
