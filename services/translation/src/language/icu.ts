// ICU MessageFormat: parse (never throws), walk the AST, and the arguments a message uses.
import { type MessageFormatElement, parse, TYPE } from '@formatjs/icu-messageformat-parser';
import { pluralCategories } from './plural-categories.ts';

/** Argument kinds as they must match between source and target. */
export type IcuArgType = 'argument' | 'number' | 'date' | 'time' | 'select' | 'plural' | 'selectordinal';

export type ParseOutcome = { ok: true; ast: MessageFormatElement[] } | { ok: false; kind: string; offset: number };

/**
 * Parse an ICU message; never throws. `kind` is the parser's error kind (e.g. `MALFORMED_ARGUMENT`).
 * Locations are always kept: the parser's pruning pass (`delete` on every node) costs more than keeping them.
 * Tags are text to the ICU parser (`ignoreTag`): ICU MessageFormat itself has no markup, so HTML with attributes
 * is allowed, and tags are checked by the tag validator with HTML's rules.
 */
export function parseIcu(text: string): ParseOutcome {
  try {
    return { ok: true, ast: parse(text, { captureLocation: true, ignoreTag: true }) };
  } catch (e) {
    const err = e as { message?: string; location?: { start?: { offset?: number } } };
    return { ok: false, kind: String(err.message ?? 'INVALID'), offset: err.location?.start?.offset ?? 0 };
  }
}

function argType(el: MessageFormatElement): IcuArgType | undefined {
  switch (el.type) {
    case TYPE.argument:
      return 'argument';
    case TYPE.number:
      return 'number';
    case TYPE.date:
      return 'date';
    case TYPE.time:
      return 'time';
    case TYPE.select:
      return 'select';
    case TYPE.plural:
      return el.pluralType === 'ordinal' ? 'selectordinal' : 'plural';
    default:
      return undefined;
  }
}

/** Visit every element, depth first, including plural/select option bodies and tag children. */
export function walkIcu(ast: MessageFormatElement[], visit: (el: MessageFormatElement) => void): void {
  for (const el of ast) {
    visit(el);
    if (el.type === TYPE.plural || el.type === TYPE.select) {
      for (const opt of Object.values(el.options)) walkIcu(opt.value, visit);
    } else if (el.type === TYPE.tag) {
      walkIcu(el.children, visit);
    }
  }
}

/** Argument name → the set of types it is used with. */
export function icuArguments(ast: MessageFormatElement[]): Map<string, Set<IcuArgType>> {
  const args = new Map<string, Set<IcuArgType>>();
  walkIcu(ast, (el) => {
    const t = argType(el);
    if (t === undefined || !('value' in el)) return;
    const set = args.get(el.value) ?? new Set<IcuArgType>();
    set.add(t);
    args.set(el.value, set);
  });
  return args;
}

/**
 * The plural cases a translation into `locale` drops: each case whose category the locale does not use (a Russian
 * `few` into English, an English `one` into Japanese), as the [start, end) range from its keyword to its closing
 * brace. Exact selectors (`=0`) and `other` are always kept. Outermost ranges only (a dropped case's nested plurals
 * go with it). The one rule for what a target keeps: the pseudo provider writes by it, the validators read by it.
 * @example droppedPluralCases(src, ast, 'ja') // [[9, 24]] for `{n, plural, one {# file} other {# files}}`
 */
export function droppedPluralCases(
  source: string,
  ast: MessageFormatElement[],
  locale: string,
): Array<[number, number]> {
  const cardinal = pluralCategories(locale, 'cardinal') ?? ['other'];
  const ordinal = pluralCategories(locale, 'ordinal') ?? ['other'];
  const ranges: Array<[number, number]> = [];
  walkIcu(ast, (el) => {
    if (el.type !== TYPE.plural) return;
    const needed = el.pluralType === 'ordinal' ? ordinal : cardinal;
    for (const [category, option] of Object.entries(el.options)) {
      if (category.startsWith('=') || needed.includes(category) || !option.location) continue;
      const keyword = source.lastIndexOf(category, option.location.start.offset);
      if (keyword >= 0) ranges.push([keyword, option.location.end.offset]);
    }
  });
  ranges.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  const outer: Array<[number, number]> = [];
  for (const r of ranges) if (outer.length === 0 || r[0] >= (outer.at(-1) as [number, number])[1]) outer.push(r);
  return outer;
}

/** `source` without the plural cases a translation into `locale` drops (droppedPluralCases): what it must carry. */
export function sourceForLocale(source: string, ast: MessageFormatElement[], locale: string): string {
  let out = '';
  let at = 0;
  for (const [start, end] of droppedPluralCases(source, ast, locale)) {
    out += source.slice(at, start);
    at = end;
  }
  return out + source.slice(at);
}
