// The validators: the same checks run on provider output (retry, then flagged) and on review edits (422).
export { validateGlossary } from './glossary.ts';
export { validateIcu } from './icu.ts';
export { validatePlaceholders } from './placeholders.ts';
export { validatePluralForms } from './plural-forms.ts';
export {
  isRetryable,
  REQUEST_ISSUE_CODES,
  type ValidateInput,
  validateBatch,
  validateTranslation,
} from './validate.ts';
