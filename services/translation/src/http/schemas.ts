// The zod schemas of the HTTP API: the single source for validation, TypeScript types and the OpenAPI document.
// Field names follow docs spec `translation-service-api.md` exactly; fields the spec leaves open are documented in docs/translation.md.
import { z } from 'zod';
import { GlossaryEntry, Locale, Style, Tier, TranslateItem, ValidationIssue } from '../language/index.ts';
import { charLength, PLAYGROUND_MAX_CHARS } from './limits.ts';

export { GlossaryEntry, Locale, Style, Tier, TranslateItem, ValidationIssue };

/** `{error: string}`: every error body. */
export const ErrorBody = z.object({ error: z.string() });

const text = (max: number) => z.string().max(max);

/** Results are keyed by item id, so ids are unique within a batch. */
const uniqueIds = (items: { id: string }[]): boolean => new Set(items.map((i) => i.id)).size === items.length;

export const TranslateBatch = z.object({
  sourceLocale: Locale,
  targetLocale: Locale,
  tier: Tier,
  modelOverride: z
    .string()
    .min(1)
    .max(256)
    .optional()
    .meta({ description: 'id of a fine-tuned model the caller’s organization may use' }),
  items: z.array(TranslateItem).min(1).max(100).refine(uniqueIds, { message: 'item ids must be unique' }),
  style: Style,
  glossary: z.array(GlossaryEntry).max(500),
});
export type TranslateBatch = z.infer<typeof TranslateBatch>;

export const TranslateResult = z.object({
  translations: z.array(z.object({ id: z.string(), text: z.string() })),
  model: z.string(),
  tokensIn: z.int().min(0),
  tokensOut: z.int().min(0),
  issues: z.array(ValidationIssue).meta({
    description:
      'Validator issues left after one retry with the issues as feedback (empty when every translation passed). ' +
      'Added field: the document’s fields are unchanged.',
  }),
});
export type TranslateResult = z.infer<typeof TranslateResult>;

const score = z.number().min(0).max(5);
export const Scores = z.object({
  accuracy: score,
  fluency: score,
  terminology: score,
  style: score,
  localeConventions: score,
});

export const JudgeRequest = z.object({
  sourceLocale: Locale,
  targetLocale: Locale,
  items: z
    .array(
      z.object({
        id: text(256),
        source: text(10_000),
        target: text(10_000),
        isIcu: z.boolean().optional(),
        context: text(2_000).optional(),
      }),
    )
    .min(1)
    .max(50)
    .refine(uniqueIds, { message: 'item ids must be unique' }),
  glossary: z.array(GlossaryEntry).max(500).default([]),
  style: Style.optional(),
});
export type JudgeRequest = z.infer<typeof JudgeRequest>;

export const JudgeResponse = z.object({
  scores: Scores.meta({ description: '0 (worst) to 5 (no error found) per dimension' }),
  overall: score.meta({ description: 'mean of the five scores, one decimal' }),
  judge: z
    .enum(['llm', 'heuristic'])
    .meta({ description: 'which judge scored: the LLM, or the validator-based heuristic' }),
  model: z.string(),
  issues: z.array(ValidationIssue),
  tokensIn: z.int().min(0),
  tokensOut: z.int().min(0),
});

export { charLength, PLAYGROUND_MAX_CHARS };

export const PlaygroundRequest = z.object({
  source: z
    .string()
    .min(1)
    .refine((s) => charLength(s) <= PLAYGROUND_MAX_CHARS, { message: 'source is longer than 500 characters' })
    .meta({ maxLength: PLAYGROUND_MAX_CHARS, description: 'maximum length 500 characters (longer gives 413)' }),
  sourceLocale: Locale.default('en'),
  targetLocale: Locale,
});
export type PlaygroundRequest = z.infer<typeof PlaygroundRequest>;

export const PlaygroundResponse = z.object({
  translation: z.string(),
  score: score.meta({ description: 'overall quality score, 0–5' }),
  scores: Scores,
  judge: z.enum(['llm', 'heuristic']),
  model: z.string(),
});

export const WorkerResult = z.object({
  processed: z.int().min(0).meta({ description: 'jobs that ran to completion' }),
  failed: z.int().min(0).meta({ description: 'jobs that failed this run (retried later with backoff, or dead)' }),
});

export const RetentionResult = z.object({
  deleted: z
    .object({
      usageEvents: z.int().min(0),
      usageDaily: z.int().min(0),
      finishedJobs: z.int().min(0),
      reviewItems: z.int().min(0),
      auditLog: z.int().min(0),
      billingEvents: z.int().min(0),
      meteringCounters: z.int().min(0),
      rateLimitWindows: z.int().min(0),
      expiredSessions: z.int().min(0),
      expiredInvites: z.int().min(0),
    })
    .meta({ description: 'rows deleted per category' }),
});
export type RetentionResult = z.infer<typeof RetentionResult>;
