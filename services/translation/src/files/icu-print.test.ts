import { printAST } from '@formatjs/icu-messageformat-parser/printer.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseIcu } from '../language/index.ts';
import { printIcu } from './icu-print.ts';
import { parseLocaleFile } from './index.ts';
import { fixture } from './testing.ts';

/** printIcu prints what the library prints, for every message that parses; true when `text` parsed. */
function same(text: string): boolean {
  const parsed = parseIcu(text);
  if (!parsed.ok) return false;
  expect(printIcu(parsed.ast), text).toBe(printAST(parsed.ast));
  return true;
}

const PIECES = [
  'a',
  ' ',
  'é',
  "'",
  "''",
  "'{'",
  '{',
  '}',
  '#',
  '<',
  '>',
  '<b>',
  '</b>',
  '<br/>',
  ',',
  '{n}',
  '{ n }',
  '{0}',
  '{n, number}',
  '{n, number, ::currency/EUR}',
  '{d, date, short}',
  '{n, plural, one {# file} other {# files}}',
  '{n,plural,=0{none}one{#}other{{m} #}}',
  '{n, plural, offset:1 one {x} other {# y}}',
  "{n, plural, one {it's #} other {'#' {m}}}",
  '{n, plural, other {{k, plural, one {# in #} other {<b>#</b>}}}}',
  '{g, select, male {he} female {she} other {they}}',
  '{n, selectordinal, one {#st} two {#nd} few {#rd} other {#th}}',
];

describe('printIcu: the library printer’s spelling', () => {
  it('the messages of every fixture', () => {
    let n = 0;
    for (const [format, name] of [
      ['json', 'nested.json'],
      ['arb', 'app_en.arb'],
      ['xliff', 'app.xlf'],
      ['po', 'messages.pot'],
      ['android', 'strings.xml'],
      ['android', 'ru.strings.xml'],
    ] as const) {
      for (const s of parseLocaleFile(format, fixture(name)).strings) if (same(s.text)) n++;
    }
    expect(n).toBeGreaterThan(20);
  });

  it('random messages built of literals, quotes, tags, arguments, plurals, selects and formats', () => {
    let parsed = 0;
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...PIECES), { maxLength: 8 }), (pieces) => {
        if (same(pieces.join(''))) parsed++;
      }),
      { numRuns: 3000, seed: 25 },
    );
    expect(parsed).toBeGreaterThan(1000);
  });

  it('random text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 60 }), (text) => {
        same(text);
      }),
      { numRuns: 1000, seed: 25 },
    );
  });
});
