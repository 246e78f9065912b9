import {
  type GlossaryEntry,
  parseIcu,
  scanProtected,
  sourceForLocale,
  type ValidationIssue,
} from '../language/index.ts';
import { validateGlossary } from './glossary.ts';
import { validateIcu } from './icu.ts';
import { validatePlaceholders } from './placeholders.ts';

export interface ValidateInput {
  source: string;
  target: string;
  /** The strings are ICU MessageFormat: check syntax, arguments and plural categories. */
  isIcu: boolean;
  sourceLocale: string;
  targetLocale: string;
  glossary: GlossaryEntry[];
  /** Copied into every issue. */
  itemId?: string;
}

/**
 * All checks for one translated string: `empty_target`, ICU (when `isIcu`), placeholders and tags, glossary.
 * Returns [] when the target is acceptable; every issue blocks (provider output is retried or rejected, a review
 * edit gets 422 with the list). Messages name arguments, tags and terms, never the whole text.
 *
 * @example validateTranslation({ source: 'Hi {name}', target: 'Hallo', isIcu: true, sourceLocale: 'en',
 *   targetLocale: 'de', glossary: [] }) // [{ code: 'icu_argument_missing', … }]
 */
export function validateTranslation(input: ValidateInput): ValidationIssue[] {
  const { source, target } = input;
  const issues: ValidationIssue[] = [];
  if (target.trim() === '' && source.trim() !== '') {
    issues.push({ code: 'empty_target', message: 'target is empty' });
  } else {
    // Parse once; the ICU and glossary checks share the trees.
    const parsed = input.isIcu ? { source: parseIcu(source), target: parseIcu(target) } : undefined;
    if (parsed) issues.push(...validateIcu(source, target, input.targetLocale, parsed));
    // ICU strings: braces are ICU arguments (checked above); tags, printf and mustache are still compared, against
    // the source without the plural cases the target locale drops (their tags and placeholders go with them).
    const syntaxBroken = issues.some((i) => i.code === 'icu_syntax_source' || i.code === 'icu_syntax_target');
    const kept = parsed?.source.ok === true ? sourceForLocale(source, parsed.source.ast, input.targetLocale) : source;
    // Plain strings: each side scanned for protected tokens once, for the placeholder and the glossary checks.
    const scanned = input.isIcu
      ? undefined
      : { source: scanProtected(kept, { icu: false }), target: scanProtected(target, { icu: false }) };
    if (!syntaxBroken) issues.push(...validatePlaceholders(kept, target, { icu: input.isIcu }, scanned));
    issues.push(
      ...validateGlossary(kept, target, input.glossary, {
        icu: input.isIcu,
        ...(scanned ? { scanned } : {}),
        // The source's tree holds only when nothing was dropped from it (a dropped case re-parses).
        ...(parsed ? { parsedTarget: parsed.target, ...(kept === source ? { parsedSource: parsed.source } : {}) } : {}),
      }),
    );
  }
  if (input.itemId !== undefined) return issues.map((i) => ({ itemId: input.itemId, ...i }));
  return issues;
}

/** validateTranslation over a batch; every issue carries its item's id. */
export function validateBatch(
  items: { id: string; source: string; target: string; isIcu?: boolean }[],
  ctx: { sourceLocale: string; targetLocale: string; glossary: GlossaryEntry[] },
): ValidationIssue[] {
  return items.flatMap((item) =>
    validateTranslation({
      source: item.source,
      target: item.target,
      isIcu: item.isIcu === true,
      sourceLocale: ctx.sourceLocale,
      targetLocale: ctx.targetLocale,
      glossary: ctx.glossary,
      itemId: item.id,
    }),
  );
}

/** Codes that describe the request (its source or locale), not the translation: a retry cannot fix them. */
export const REQUEST_ISSUE_CODES: ReadonlySet<string> = new Set(['icu_syntax_source', 'locale_invalid']);

/**
 * Whether asking the provider again (with the issue as feedback) could fix it.
 *
 * @example issues.filter(isRetryable) // the issues worth a retry
 */
export function isRetryable(issue: ValidationIssue): boolean {
  return !REQUEST_ISSUE_CODES.has(issue.code);
}
