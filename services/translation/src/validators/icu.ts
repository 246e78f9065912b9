import { type MessageFormatElement, parse, TYPE } from '@formatjs/icu-messageformat-parser';
import { pluralCategories } from './plural-categories.ts';
import type { ValidationIssue } from './types.ts';

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

function syntaxIssue(which: 'source' | 'target', kind: string, offset: number): ValidationIssue {
  if (which === 'target' && kind === 'MISSING_OTHER_CLAUSE') {
    return { code: 'icu_other_missing', message: `target: a plural or select has no "other" case (at ${offset})` };
  }
  return {
    code: which === 'source' ? 'icu_syntax_source' : 'icu_syntax_target',
    message: `${which}: ICU MessageFormat syntax error ${kind} at offset ${offset}`,
  };
}

const sameSet = (a: Set<string>, b: Set<string>) => a.size === b.size && [...a].every((x) => b.has(x));

/**
 * ICU MessageFormat checks (source and target are ICU strings):
 * - `icu_syntax_source` / `icu_syntax_target`: the string does not parse (`icu_other_missing` when the parser
 *   reports a plural/select without `other`);
 * - `icu_argument_missing` / `icu_argument_extra`: argument names differ;
 * - `icu_argument_type`: an argument is used with another type (`{n, number}` vs `{n, plural, …}`);
 * - `icu_plural_category_missing`: a plural (selectordinal) in the target lacks a category the TARGET locale
 *   needs (`Intl.PluralRules(locale).resolvedOptions().pluralCategories`); exact matches (`=0`) do not count;
 * - `icu_select_case_missing`: a select in the target lacks a case the source's select has;
 * - `locale_invalid`: the target locale is not a valid BCP 47 tag (plural checks skipped).
 */
export function validateIcu(
  source: string,
  target: string,
  targetLocale: string,
  parsed?: { source: ParseOutcome; target: ParseOutcome },
): ValidationIssue[] {
  const src = parsed?.source ?? parseIcu(source);
  if (!src.ok) return [syntaxIssue('source', src.kind, src.offset)];
  const tgt = parsed?.target ?? parseIcu(target);
  if (!tgt.ok) return [syntaxIssue('target', tgt.kind, tgt.offset)];

  const issues: ValidationIssue[] = [];
  const sArgs = icuArguments(src.ast);
  const tArgs = icuArguments(tgt.ast);
  for (const [name, types] of sArgs) {
    const t = tArgs.get(name);
    if (t === undefined) issues.push({ code: 'icu_argument_missing', message: `argument {${name}} missing` });
    else if (!sameSet(types, t)) {
      issues.push({
        code: 'icu_argument_type',
        message: `argument {${name}} is ${[...t].join('/')} in target but ${[...types].join('/')} in source`,
      });
    }
  }
  for (const name of tArgs.keys()) {
    if (!sArgs.has(name)) issues.push({ code: 'icu_argument_extra', message: `argument {${name}} not in source` });
  }

  const cardinal = pluralCategories(targetLocale, 'cardinal');
  const ordinal = pluralCategories(targetLocale, 'ordinal');
  if (cardinal === undefined || ordinal === undefined) {
    issues.push({ code: 'locale_invalid', message: 'target locale is not a valid locale tag' });
  }

  const sourceSelectCases = new Map<string, Set<string>>();
  walkIcu(src.ast, (el) => {
    if (el.type !== TYPE.select) return;
    const set = sourceSelectCases.get(el.value) ?? new Set<string>();
    for (const k of Object.keys(el.options)) set.add(k);
    sourceSelectCases.set(el.value, set);
  });

  walkIcu(tgt.ast, (el) => {
    if (el.type === TYPE.plural) {
      const needed = el.pluralType === 'ordinal' ? ordinal : cardinal;
      if (needed === undefined) return;
      const have = new Set(Object.keys(el.options));
      const missing = needed.filter((c) => !have.has(c));
      if (missing.length > 0) {
        issues.push({
          code: 'icu_plural_category_missing',
          message: `${el.pluralType === 'ordinal' ? 'selectordinal' : 'plural'} {${el.value}} lacks ${missing.join(', ')} needed by ${targetLocale}`,
        });
      }
    } else if (el.type === TYPE.select) {
      const want = sourceSelectCases.get(el.value);
      if (want === undefined) return;
      const missing = [...want].filter((k) => !(k in el.options));
      if (missing.length > 0) {
        issues.push({
          code: 'icu_select_case_missing',
          message: `select {${el.value}} lacks case ${missing.join(', ')}`,
        });
      }
    }
  });
  return issues;
}
