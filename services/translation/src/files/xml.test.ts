import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { escapeXmlText, keptMarkup } from './xml.ts';

/** keptMarkup by its definition: the tags the pattern finds, those among `codes` kept, a stack for the nesting. */
function byPattern(text: string, codes: ReadonlySet<string>) {
  let xml = '';
  let pos = 0;
  const tags: string[] = [];
  const open: string[] = [];
  let nests = true;
  for (const m of text.matchAll(/<\/?[A-Za-z_][^<>]*>/g)) {
    if (!codes.has(m[0])) continue;
    xml += escapeXmlText(text.slice(pos, m.index)) + m[0];
    pos = m.index + m[0].length;
    tags.push(m[0]);
    if (m[0].endsWith('/>')) continue;
    const closing = m[0][1] === '/';
    const name = /^[^\s/>]*/.exec(m[0].slice(closing ? 2 : 1))![0];
    if (!closing) open.push(name);
    else if (open.pop() !== name) nests = false;
  }
  return { xml: xml + escapeXmlText(text.slice(pos)), tags, nests: nests && open.length === 0 };
}

const CODES = new Set(['<b>', '</b>', '<pc id="1">', '</pc>', '<ph id="2"/>', '<x id="INTERPOLATION"/>', '<g id="1">']);
const PIECES = [...CODES, '</g>', '<', '>', '/', 'a', ' ', '&', 'é', '<i>', '</i>', '<x', '<_y>', '< b>', '<b >', '"'];

describe('keptMarkup: one scan, the same answer as the pattern', () => {
  it('random texts of tags, partial tags, markup characters and text', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...PIECES), { maxLength: 12 }), (pieces) => {
        const text = pieces.join('');
        expect(keptMarkup(text, CODES)).toEqual(byPattern(text, CODES));
      }),
      { numRuns: 5000, seed: 25 },
    );
  });

  it('random text; no codes', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 80 }), (text) => {
        expect(keptMarkup(text, CODES)).toEqual(byPattern(text, CODES));
        expect(keptMarkup(text, new Set())).toEqual({ xml: escapeXmlText(text), tags: [], nests: true });
      }),
      { numRuns: 2000, seed: 25 },
    );
  });

  it('a stray closing code right after a lone "<" is seen', () => {
    expect(keptMarkup('a<x</pc>', CODES)).toEqual({ xml: 'a&lt;x</pc>', tags: ['</pc>'], nests: false });
  });
});
