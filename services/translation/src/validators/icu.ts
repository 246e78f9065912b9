import { TYPE } from '@formatjs/icu-messageformat-parser';
import {
  icuArguments,
  type ParseOutcome,
  parseIcu,
  pluralCategories,
  type ValidationIssue,
  walkIcu,
} from '../language/index.ts';

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
 * - `icu_plural_category_extra`: a plural (selectordinal) in the target has a category the target locale does not
 *   use (`few` in English: a form no number ever selects, left over from the source language); `=N` is always fine;
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
      const kind = el.pluralType === 'ordinal' ? 'selectordinal' : 'plural';
      if (missing.length > 0) {
        issues.push({
          code: 'icu_plural_category_missing',
          message: `${kind} {${el.value}} lacks ${missing.join(', ')} needed by ${targetLocale}`,
        });
      }
      const extra = [...have].filter((c) => !c.startsWith('=') && !needed.includes(c));
      if (extra.length > 0) {
        issues.push({
          code: 'icu_plural_category_extra',
          message: `${kind} {${el.value}} has ${extra.join(', ')}, which ${targetLocale} does not use`,
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
