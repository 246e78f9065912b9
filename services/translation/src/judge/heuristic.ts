import type { ValidationIssue } from '../language/index.ts';
import { validateBatch } from '../validators/index.ts';
import { scoresFromErrors } from './mqm.ts';
import type { JudgeInput, JudgeItem, JudgeResult, MqmCategory, MqmError, MqmSeverity } from './types.ts';

/** Which MQM error each validator issue stands for. Codes not listed (source problems, bad locale) are not errors of the translation. */
export const ISSUE_TO_MQM: Record<string, { category: MqmCategory; severity: MqmSeverity }> = {
  empty_target: { category: 'accuracy', severity: 'critical' },
  icu_syntax_target: { category: 'accuracy', severity: 'critical' },
  icu_other_missing: { category: 'accuracy', severity: 'critical' },
  icu_argument_missing: { category: 'accuracy', severity: 'major' },
  icu_argument_extra: { category: 'accuracy', severity: 'major' },
  icu_argument_type: { category: 'accuracy', severity: 'major' },
  icu_select_case_missing: { category: 'accuracy', severity: 'major' },
  icu_plural_category_missing: { category: 'localeConventions', severity: 'major' },
  icu_plural_category_extra: { category: 'localeConventions', severity: 'minor' },
  placeholder_missing: { category: 'accuracy', severity: 'major' },
  placeholder_extra: { category: 'accuracy', severity: 'major' },
  tag_missing: { category: 'fluency', severity: 'major' },
  tag_extra: { category: 'fluency', severity: 'major' },
  tag_unbalanced: { category: 'fluency', severity: 'major' },
  glossary_never_translate: { category: 'terminology', severity: 'major' },
  glossary_target_missing: { category: 'terminology', severity: 'major' },
};

/** The MQM errors the validator issues stand for (ISSUE_TO_MQM). */
export function issueErrors(issues: ValidationIssue[]): MqmError[] {
  const errors: MqmError[] = [];
  for (const issue of issues) {
    const m = ISSUE_TO_MQM[issue.code];
    if (m)
      errors.push({
        ...(issue.itemId ? { itemId: issue.itemId } : {}),
        ...m,
        description: issue.message.slice(0, 200),
      });
  }
  return errors;
}

const language = (locale: string) => locale.toLowerCase().split(/[-_]/)[0] ?? '';
const letterCount = (s: string) => (s.match(/\p{L}/gu) ?? []).length;

/** Checks that need no model: untranslated text, implausible length. */
function textHeuristics(item: JudgeItem, input: JudgeInput): MqmError[] {
  const out: MqmError[] = [];
  const src = item.source.trim();
  const tgt = item.target.trim();
  if (tgt === '') return out; // empty_target is already a critical accuracy error
  const keptVerbatim = input.glossary.some((g) => g.neverTranslate && g.term.trim() === src);
  if (
    src === tgt &&
    letterCount(src) >= 4 &&
    !keptVerbatim &&
    language(input.sourceLocale) !== language(input.targetLocale)
  ) {
    out.push({
      itemId: item.id,
      category: 'accuracy',
      severity: 'major',
      description: 'target is the untranslated source',
    });
  }
  const ls = [...src].length;
  const lt = [...tgt].length;
  if (ls >= 20 && (lt > ls * 3 || lt * 3 < ls)) {
    out.push({
      itemId: item.id,
      category: 'fluency',
      severity: 'minor',
      description: 'target length implausible for the source',
    });
  }
  return out;
}

/**
 * The judge used with the pseudo provider: no model, only the validators (each issue mapped to an MQM error by
 * ISSUE_TO_MQM) and text heuristics (untranslated target: accuracy/major; length ratio beyond 3×: fluency/minor).
 * It cannot see meaning or fluency of real language, and says so: `judge: 'heuristic'`, no tokens used.
 */
export function heuristicJudge(input: JudgeInput): JudgeResult {
  const issues: ValidationIssue[] = validateBatch(input.items, input);
  const errors = issueErrors(issues);
  for (const item of input.items) errors.push(...textHeuristics(item, input));
  const { scores, overall } = scoresFromErrors(errors, input.items.length);
  return {
    scores,
    overall,
    judge: 'heuristic',
    model: 'heuristic-validators',
    tokensIn: 0,
    tokensOut: 0,
    issues,
    errors,
  };
}
