// The language core: vocabulary (zod schemas and their types), ICU MessageFormat, protected tokens (placeholders,
// tags, URLs), glossary terms and plural categories. Every language folder (providers, validators, judge) imports
// it; it imports none of them.
export {
  droppedPluralCases,
  type IcuArgType,
  icuArguments,
  type ParseOutcome,
  parseIcu,
  sourceForLocale,
  walkIcu,
} from './icu.ts';
export {
  type ProtectedToken,
  parseTag,
  scanProtected,
  type TagToken,
  type TokenKind,
  VOID_ELEMENTS,
} from './patterns.ts';
export { pluralCategories } from './plural-categories.ts';
export {
  GlossaryEntry,
  Locale,
  Style,
  Tier,
  TranslateItem,
  VALIDATION_ISSUE_CODES,
  ValidationIssue,
  type ValidationIssueCode,
} from './schemas.ts';
export { findTerm, termPattern, translatableText } from './terms.ts';
