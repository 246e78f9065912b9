// The language vocabulary as zod schemas: the single source of the HTTP validation, the OpenAPI document and the
// TypeScript types (`z.infer`) every other folder uses. Field names follow the API document exactly.
import { z } from 'zod';

const text = (max: number) => z.string().max(max);

/** A BCP 47 language tag (en, pt-BR, zh-Hant-TW). */
export const Locale = z
  .string()
  .max(35)
  .regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$/, 'must be a BCP 47 locale code such as en or pt-BR')
  .meta({ description: 'locale code (BCP 47)', examples: ['en', 'pt-BR'] });

export const TranslateItem = z.object({
  id: text(256).meta({ description: 'echoed in the result' }),
  text: text(10_000).meta({ description: 'source text' }),
  context: text(2_000).optional(),
  neighbors: z
    .array(text(2_000))
    .max(20)
    .optional()
    .meta({ description: 'surrounding strings, for context only; never translated' }),
  isIcu: z.boolean().optional().meta({ description: 'marks ICU message format' }),
  examples: z
    .array(z.object({ source: text(2_000), target: text(2_000) }))
    .max(20)
    .optional(),
});
export type TranslateItem = z.infer<typeof TranslateItem>;

export const GlossaryEntry = z.object({
  term: text(500),
  /** Required rendering in the target locale; null when only `neverTranslate` matters. */
  target: text(500).nullable(),
  /** Keep `term` verbatim in the target. */
  neverTranslate: z.boolean(),
});
export type GlossaryEntry = z.infer<typeof GlossaryEntry>;

export const Style = z.object({
  tone: text(200).optional(),
  audience: text(200).optional(),
  notes: text(2_000).optional(),
});
export type Style = z.infer<typeof Style>;

export const Tier = z.enum(['cheap', 'top']);
export type Tier = z.infer<typeof Tier>;

/**
 * Stable issue codes. Clients may match on them; never rename one, only add.
 * See src/providers/README.md for the meaning of each.
 */
export const VALIDATION_ISSUE_CODES = [
  'empty_target',
  'icu_syntax_source',
  'icu_syntax_target',
  'icu_argument_missing',
  'icu_argument_extra',
  'icu_argument_type',
  'icu_plural_category_missing',
  'icu_other_missing',
  'icu_select_case_missing',
  'placeholder_missing',
  'placeholder_extra',
  'tag_missing',
  'tag_extra',
  'tag_unbalanced',
  'glossary_never_translate',
  'glossary_target_missing',
  'locale_invalid',
  'icu_plural_category_extra',
  'plural_form_missing',
  'plural_form_extra',
  'inline_code_missing',
  'inline_code_extra',
] as const;
export type ValidationIssueCode = (typeof VALIDATION_ISSUE_CODES)[number];

/** One problem a validator found. Messages name arguments, tags or glossary terms but never quote the whole text. */
export const ValidationIssue = z.object({
  /** Id of the item the issue is about (set by batch helpers and by the orchestrator). */
  itemId: z.string().optional(),
  code: z.string().meta({ description: 'stable issue code', examples: [...VALIDATION_ISSUE_CODES] }),
  message: z.string(),
});
export type ValidationIssue = z.infer<typeof ValidationIssue>;
