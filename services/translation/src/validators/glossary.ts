import {
  findTerm,
  type GlossaryEntry,
  type ParseOutcome,
  type ProtectedToken,
  translatableText,
  type ValidationIssue,
} from '../language/index.ts';

/**
 * Glossary checks, on the translatable text of source and target (see `translatableText`):
 * - `glossary_never_translate`: a neverTranslate term found in the source must appear verbatim (same case) in the target;
 * - `glossary_target_missing`: a term with a target found in the source needs that target (any case) in the target.
 * Inflected forms are not recognised (a known limit of string matching).
 */
export function validateGlossary(
  sourceText: string,
  targetText: string,
  glossary: GlossaryEntry[],
  opts: {
    icu: boolean;
    parsedSource?: ParseOutcome;
    parsedTarget?: ParseOutcome;
    /** Plain strings: `scanProtected(…, { icu: false })` of source and target, when the caller has them. */
    scanned?: { source: ProtectedToken[]; target: ProtectedToken[] };
  } = { icu: false },
): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  if (glossary.length === 0) return issues;
  const plain = opts.icu ? undefined : opts.scanned;
  const source = translatableText(sourceText, opts.icu, opts.parsedSource, plain?.source);
  const target = translatableText(targetText, opts.icu, opts.parsedTarget, plain?.target);
  const lowerTarget = target.toLowerCase();
  for (const entry of glossary) {
    const found = findTerm(source, entry.term);
    if (found.length === 0) continue;
    if (entry.neverTranslate) {
      const forms = new Set(found.map((f) => f.text));
      for (const form of forms) {
        if (!target.includes(form)) {
          issues.push({
            code: 'glossary_never_translate',
            message: `term "${form}" must be kept verbatim (neverTranslate)`,
          });
        }
      }
    } else if (entry.target !== null && entry.target.trim() !== '') {
      if (!lowerTarget.includes(entry.target.toLowerCase())) {
        issues.push({
          code: 'glossary_target_missing',
          message: `term "${entry.term}" must be translated as "${entry.target}"`,
        });
      }
    }
  }
  return issues;
}
