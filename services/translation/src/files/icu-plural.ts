// A format's own plural group (PO msgid/msgid_plural, Android <plurals>) travels to the provider as ONE ICU plural
// message, so the provider and the validators handle every format's plurals by the same rule: the target locale's
// CLDR categories (`Intl.PluralRules`). These helpers build that message from the forms and split the answer back.
import { type MessageFormatElement, TYPE } from '@formatjs/icu-messageformat-parser';
import { printAST } from '@formatjs/icu-messageformat-parser/printer.js';
import { parseIcu } from '../language/index.ts';
import { printIcu } from './icu-print.ts';

/** The argument of the plural messages built here. */
export const PLURAL_ARGUMENT = 'count';

/** CLDR's order of the plural categories. */
export const CATEGORY_ORDER = ['zero', 'one', 'two', 'few', 'many', 'other'] as const;

/**
 * Plain text as an ICU literal: apostrophes doubled; `{…}` placeholders, lone braces and `#` quoted.
 * @example icuLiteral("it's {name} #1") // "it''s '{name}' '#'1"
 */
export function icuLiteral(text: string): string {
  return text.replace(/'/g, "''").replace(/\{[^{}']*\}|[{}#]/g, (m) => `'${m}'`);
}

/**
 * One ICU plural message from `forms` (category → plain text), in CLDR order.
 * @example buildPluralIcu({ one: '%d file', other: '%d files' }) // '{count, plural, one {%d file} other {%d files}}'
 */
export function buildPluralIcu(forms: Readonly<Record<string, string>>): string {
  const cases = CATEGORY_ORDER.filter((c) => forms[c] !== undefined).map((c) => `${c} {${icuLiteral(forms[c]!)}}`);
  return `{${PLURAL_ARGUMENT}, plural, ${cases.join(' ')}}`;
}

/** Plain text of ICU elements: literals as they are, `#` as `#`, anything else printed back as ICU. */
function plainText(elements: MessageFormatElement[]): string {
  let out = '';
  for (const el of elements) {
    if (el.type === TYPE.literal) out += el.value;
    else if (el.type === TYPE.pound) out += '#';
    else out += printAST([el]);
  }
  return out;
}

/**
 * The forms of a plural message built by `buildPluralIcu` (after translation): category → plain text; `=N` cases are
 * left out (the formats' plural systems have no place for them). Null when the message is not one top-level plural
 * (leading or trailing text around it is kept in every form).
 */
export function splitPluralIcu(message: string): Record<string, string> | null {
  const parsed = parseIcu(message);
  if (!parsed.ok) return null;
  const plurals = parsed.ast.filter((el) => el.type === TYPE.plural);
  if (plurals.length !== 1) return null;
  const plural = plurals[0]!;
  if (plural.type !== TYPE.plural || plural.pluralType === 'ordinal') return null;
  const at = parsed.ast.indexOf(plural);
  const before = plainText(parsed.ast.slice(0, at));
  const after = plainText(parsed.ast.slice(at + 1));
  const forms: Record<string, string> = {};
  for (const [category, option] of Object.entries(plural.options)) {
    if (category.startsWith('=')) continue;
    forms[category] = before + plainText(option.value) + after;
  }
  return forms;
}

/**
 * An ICU message in one spelling (whitespace and quoting as the parser prints them), for exact matching; a string
 * that is not valid ICU is returned as it is. NFC first: the same text typed on two systems matches.
 */
export function normalizeIcu(message: string): string {
  const text = message.normalize('NFC');
  const parsed = parseIcu(text);
  return parsed.ok ? printIcu(parsed.ast) : text;
}
