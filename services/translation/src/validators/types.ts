import type { GlossaryEntry } from '../providers/types.ts';

/**
 * Stable issue codes. Clients may match on them; never rename one, only add.
 * See src/providers/README.md for the meaning of each.
 */
export type ValidationIssueCode =
  | 'empty_target'
  | 'icu_syntax_source'
  | 'icu_syntax_target'
  | 'icu_argument_missing'
  | 'icu_argument_extra'
  | 'icu_argument_type'
  | 'icu_plural_category_missing'
  | 'icu_other_missing'
  | 'icu_select_case_missing'
  | 'placeholder_missing'
  | 'placeholder_extra'
  | 'tag_missing'
  | 'tag_extra'
  | 'tag_unbalanced'
  | 'glossary_never_translate'
  | 'glossary_target_missing'
  | 'locale_invalid';

export interface ValidationIssue {
  /** Id of the item the issue is about (set by batch helpers and by the orchestrator). */
  itemId?: string;
  code: ValidationIssueCode | (string & {});
  /** Human-readable; names arguments, tags or glossary terms but never quotes the customer's whole text. */
  message: string;
}

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
