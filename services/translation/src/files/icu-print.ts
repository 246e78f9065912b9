// ICU messages printed back in the parser library's own spelling (its `printAST`), which keys the translation memory:
// the common shapes — plain literals, arguments, `#`, plurals with CLDR categories — are printed here in one pass;
// anything else goes to the library's printer. The output is the library's, byte for byte (icu-print.test.ts checks
// it on the fixtures' messages and on random ones), since stored memory entries are keyed by it.
import { type MessageFormatElement, type PluralElement, TYPE } from '@formatjs/icu-messageformat-parser';
import { doPrintAST } from '@formatjs/icu-messageformat-parser/printer.js';

/** A literal the library prints as it is: no brace, apostrophe, `<` (maybe a tag) or `#` (a count in a plural). */
const PLAIN = /^[^{}'<#]*$/;

/** The library's order of plural cases: CLDR's categories first (explicit `=N` cases go to the library's printer). */
const CATEGORY_RANK: ReadonlyMap<string, number> = new Map(
  ['zero', 'one', 'two', 'few', 'many', 'other'].map((c, i) => [c, i]),
);

/**
 * `printAST(ast)` of `@formatjs/icu-messageformat-parser`, faster for the messages locale files hold.
 * @example printIcu(parseIcu('{n, plural, one {# file} other {# files}}').ast) // '{n,plural,one{# file} other{# files}}'
 */
export function printIcu(ast: MessageFormatElement[]): string {
  return print(ast, false);
}

function print(ast: MessageFormatElement[], inPlural: boolean): string {
  let out = '';
  // Adjacent literals are printed as one, as the library merges them first.
  let literal: string | null = null;
  for (const el of ast) {
    if (el.type === TYPE.literal) {
      literal = literal === null ? el.value : literal + el.value;
      continue;
    }
    if (literal !== null) {
      out += printLiteral(literal, inPlural);
      literal = null;
    }
    if (el.type === TYPE.argument) out += `{${el.value}}`;
    else if (el.type === TYPE.pound) out += '#';
    else if (el.type === TYPE.plural) out += printPlural(el, inPlural);
    else out += doPrintAST([el], inPlural);
  }
  if (literal !== null) out += printLiteral(literal, inPlural);
  return out;
}

function printLiteral(value: string, inPlural: boolean): string {
  return PLAIN.test(value) ? value : doPrintAST([{ type: TYPE.literal, value }], inPlural);
}

function printPlural(el: PluralElement, inPlural: boolean): string {
  const keys = Object.keys(el.options);
  if (!keys.every((k) => CATEGORY_RANK.has(k))) return doPrintAST([el], inPlural);
  keys.sort((a, b) => CATEGORY_RANK.get(a)! - CATEGORY_RANK.get(b)!);
  let cases = el.offset ? `offset:${el.offset}` : '';
  for (const key of keys) cases += `${cases ? ' ' : ''}${key}{${print(el.options[key]!.value, true)}}`;
  return `{${el.value},${el.pluralType === 'cardinal' ? 'plural' : 'selectordinal'},${cases}}`;
}
