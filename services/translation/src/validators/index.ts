export type { ValidateInput, ValidationIssue, ValidationIssueCode } from './types.ts';
export { validateBatch, validateTranslation } from './validate.ts';
