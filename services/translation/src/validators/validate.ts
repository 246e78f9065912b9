import type { ValidateInput, ValidationIssue } from './types.ts';

/**
 * All checks for one translated string: ICU (when `isIcu`), placeholders and tags, glossary.
 * Returns [] when the target is acceptable. Used on provider output and on review edits (422 with the list).
 */
export function validateTranslation(_input: ValidateInput): ValidationIssue[] {
  throw new Error('validateTranslation: not implemented yet');
}

/** validateTranslation over items; every issue carries its itemId. */
export function validateBatch(
  _items: { id: string; source: string; target: string; isIcu?: boolean }[],
  _ctx: { sourceLocale: string; targetLocale: string; glossary: ValidateInput['glossary'] },
): ValidationIssue[] {
  throw new Error('validateBatch: not implemented yet');
}
