export { findTerm, translatableText, validateGlossary } from './glossary.ts';
export { icuArguments, parseIcu, validateIcu, walkIcu } from './icu.ts';
export { type ProtectedToken, parseTag, scanProtected, type TokenKind } from './patterns.ts';
export { validatePlaceholders } from './placeholders.ts';
export { pluralCategories } from './plural-categories.ts';
export type { ValidateInput, ValidationIssue, ValidationIssueCode } from './types.ts';
export { isRetryable, REQUEST_ISSUE_CODES, validateBatch, validateTranslation } from './validate.ts';
