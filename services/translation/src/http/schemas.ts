// The zod schemas of the HTTP API: the single source for validation, TypeScript types and the OpenAPI document.
// Field names follow docs spec `translation-service-api.md` exactly; fields the spec leaves open are documented in docs/translation.md.
import { DUPLICATE_IDS, ErrorBody, hasUniqueIds, UNIQUE_IDS } from '@scriptorium/http';
import { z } from 'zod';
import { FILE_FORMATS } from '../files/types.ts';
import { GlossaryEntry, Locale, Style, Tier, TranslateItem, ValidationIssue } from '../language/index.ts';
import { charLength, PLAYGROUND_MAX_CHARS } from './limits.ts';

/** `{error: string}`: every error body (the shared HTTP layer's). */
export { ErrorBody, GlossaryEntry, Locale, Style, Tier, TranslateItem, ValidationIssue };

const text = (max: number) => z.string().max(max);

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
  items: z
    .array(TranslateItem)
    .min(1)
    .max(100)
    .refine(hasUniqueIds, { message: DUPLICATE_IDS })
    .meta({ description: UNIQUE_IDS }),
  style: Style,
  glossary: z.array(GlossaryEntry).max(500),
  dryRun: z
    .boolean()
    .optional()
    .meta({
      description:
        'Answer what the call would reserve (token estimate and price) and how many items the translation memory ' +
        'would answer, without calling the provider or metering anything. Added field.',
    }),
});
export type TranslateBatch = z.infer<typeof TranslateBatch>;

export const DryRunResult = z.object({
  dryRun: z.literal(true),
  model: z.string(),
  items: z.int().min(0).meta({ description: 'strings the provider would translate' }),
  fromMemory: z.int().min(0).meta({ description: 'strings the organization’s translation memory would answer' }),
  providerRequests: z.int().min(0).meta({ description: 'provider requests of the call (before a validator retry)' }),
  estimate: z
    .object({ tokensIn: z.int().min(0), maxTokensOut: z.int().min(0) })
    .meta({ description: 'the tokens the call would reserve against the plan quota' }),
  priceMicros: z
    .int()
    .min(0)
    .meta({ description: 'what the call would reserve against the daily budget (micro-units)' }),
});

export const TranslateResult = z.object({
  translations: z.array(
    z.object({
      id: z.string(),
      text: z.string(),
      fromMemory: z
        .literal(true)
        .optional()
        .meta({ description: 'answered from the organization’s translation memory (no provider call, no tokens)' }),
    }),
  ),
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

/** Largest `content` of `POST /api/v1/translate/file`, in UTF-8 bytes (above it: 413). */
export const FILE_MAX_BYTES = 2 * 1024 * 1024;
/** Most strings in one file (above it: 413). */
export const FILE_MAX_STRINGS = 20_000;

export const TranslateFileRequest = z.object({
  format: z.enum(FILE_FORMATS).meta({
    description: 'json (i18next/ICU), arb (Flutter), xliff (1.2 or 2.x), po (gettext PO/POT), android (strings.xml)',
  }),
  content: z
    .string()
    .meta({ description: `the file as text (at most ${FILE_MAX_BYTES} bytes in UTF-8; larger gives 413)` }),
  sourceLocale: Locale,
  targetLocale: Locale,
  tier: Tier,
  style: Style.optional(),
  glossary: z.array(GlossaryEntry).max(500).optional(),
  modelOverride: z
    .string()
    .min(1)
    .max(256)
    .optional()
    .meta({ description: 'id of a fine-tuned model the caller’s organization may use' }),
  dryRun: z.boolean().optional().meta({ description: 'estimate only: no provider call, nothing metered' }),
});
export type TranslateFileRequest = z.infer<typeof TranslateFileRequest>;

export const TranslateFileResult = z.object({
  content: z.string().meta({ description: 'the translated file, in the same format' }),
  format: z.enum(FILE_FORMATS),
  model: z.string(),
  tokensIn: z.int().min(0),
  tokensOut: z.int().min(0),
  issues: z.array(ValidationIssue).meta({
    description: 'validator findings, `itemId` the key (JSON path, ARB key, XLIFF unit id, PO msgid, Android name)',
  }),
  fromMemory: z.int().min(0).meta({ description: 'strings answered from the organization’s translation memory' }),
});
export type TranslateFileResult = z.infer<typeof TranslateFileResult>;

export const MemoryStatus = z.object({
  enabled: z.boolean(),
  entries: z.int().min(0).meta({ description: 'translations the memory holds' }),
});
export const MemorySwitch = z.object({ enabled: z.boolean() });
export const MemoryImport = z.string().meta({ description: 'a TMX 1.4b document' });
export const MemoryImported = z.object({
  imported: z.int().min(0).meta({ description: 'entries written (added or replaced)' }),
  skipped: z.int().min(0).meta({ description: 'translation units without both texts, or over 10,000 characters' }),
  entries: z.int().min(0).meta({ description: 'entries the memory holds now' }),
});

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
    .refine(hasUniqueIds, { message: DUPLICATE_IDS })
    .meta({ description: UNIQUE_IDS }),
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
      memoryEntries: z.int().min(0).meta({ description: 'translation-memory entries unused for the retention period' }),
      memoryFileAnswers: z.int().min(0).meta({
        description:
          'file answers of the translation memory unused for the retention period, or made at an earlier generation',
      }),
      rateLimitWindows: z.int().min(0),
      expiredSessions: z.int().min(0),
      expiredInvites: z.int().min(0),
    })
    .meta({ description: 'rows deleted per category' }),
});
export type RetentionResult = z.infer<typeof RetentionResult>;

// ── The session API (signed in with GitHub; the `session-token` cookie) ──────────────────────────────────────────

const Id = z.string().min(1).max(128);
const Timestamp = z.union([z.date(), z.string()]).transform((v) => new Date(v).toISOString());
const NullableTimestamp = Timestamp.nullable();
export const Role = z.enum(['owner', 'admin', 'member']);

export const IdParams = z.object({ id: Id.meta({ description: 'the resource id' }) });
export const MemberParams = z.object({ id: Id, userId: Id });
export const InviteParams = z.object({ id: Id, inviteId: Id });

export const SignedOut = z.object({ signedOut: z.literal(true) });

export const Organization = z.object({
  id: z.string(),
  name: z.string(),
  personal: z.boolean(),
  planId: z.string(),
  subscriptionStatus: z.string().nullable(),
  role: Role.meta({ description: 'the caller’s role in it' }),
});

export const Me = z.object({
  id: z.string(),
  email: z.string(),
  name: z.string().nullable(),
  mfaEnabled: z.boolean(),
  mfaVerifiedAt: NullableTimestamp.meta({ description: 'when this session last passed TOTP' }),
  organizations: z.array(Organization),
});

export const OrgCreate = z.object({ name: z.string().trim().min(1).max(100) });
export const OrganizationList = z.object({ organizations: z.array(Organization) });

export const Member = z.object({
  userId: z.string(),
  email: z.string(),
  name: z.string().nullable(),
  role: Role,
  joinedAt: Timestamp,
});
export const MemberList = z.object({ members: z.array(Member) });

export const InviteRequest = z.object({
  email: z.email().max(254),
  role: Role.default('member'),
});
export const Invite = z.object({
  id: z.string(),
  email: z.string(),
  role: Role,
  createdAt: Timestamp,
  expiresAt: Timestamp,
  invitedBy: z.string().nullable(),
});
export const InviteCreated = Invite.extend({
  acceptUrl: z.string().meta({ description: 'the link to send the invitee (holds the token; shown once)' }),
  token: z.string().meta({ description: 'the invite token (POST /api/v1/invites/accept); shown once' }),
});
export const InviteList = z.object({ invites: z.array(Invite) });
export const AcceptInvite = z.object({ token: z.string().min(1).max(256) });
export const RoleChange = z.object({ role: Role });

export const KeyIssueRequest = z
  .object({
    orgId: Id.optional().meta({ description: 'the organization; without it, the caller’s personal organization' }),
    name: z.string().trim().min(1).max(100).optional().meta({ description: 'a label shown in listings' }),
  })
  .nullish()
  .meta({ description: 'optional: without a body, a key of the caller’s personal organization' });
export const KeyIssued = z.object({
  apiKey: z.string().meta({ description: 'the full secret: shown this once' }),
  prefix: z.string(),
  keyId: z.string(),
  orgId: z.string(),
});
export const ApiKeyView = z.object({
  id: z.string(),
  prefix: z.string(),
  name: z.string().nullable(),
  orgId: z.string(),
  userId: z.string().meta({ description: 'who issued it' }),
  createdAt: Timestamp,
  lastUsedAt: NullableTimestamp,
  revokedAt: NullableTimestamp,
});
export const KeyList = z.object({ keys: z.array(ApiKeyView) });
export const KeyListQuery = z.object({ orgId: Id.optional() });

export const ReviewStatus = z.enum(['open', 'approved', 'edited', 'rejected']);
export const ReviewAction = z.discriminatedUnion('type', [
  z.object({ type: z.literal('approve') }),
  z.object({ type: z.literal('edit'), text: z.string().min(1).max(10_000) }),
  z.object({ type: z.literal('reject'), reason: z.string().trim().min(1).max(2_000) }),
]);
export const ReviewItem = z.object({
  id: z.string(),
  orgId: z.string(),
  status: ReviewStatus,
  finalTarget: z
    .string()
    .nullable()
    .meta({ description: 'the text that stands: the target, the edit, or null when rejected' }),
  sourceLocale: z.string(),
  targetLocale: z.string(),
  itemId: z.string(),
  sourceText: z.string(),
  targetText: z.string(),
  isIcu: z.boolean(),
  glossary: z.array(GlossaryEntry),
  model: z.string(),
  scores: z.record(z.string(), z.union([z.number(), z.string()])),
  overall: z.number(),
  issues: z.array(ValidationIssue.omit({ itemId: true })).meta({
    description:
      'What the validators (ICU, placeholders and tags, glossary) found in targetText when the judge flagged the ' +
      'item; empty when it passed them (flagged on the score alone). Kept with the item and deleted with it.',
  }),
  rejectReason: z.string().nullable(),
  decidedBy: z.string().nullable(),
  decidedAt: NullableTimestamp,
  createdAt: Timestamp,
});
export const ReviewList = z.object({ items: z.array(ReviewItem) });
export const ReviewListQuery = z.object({
  orgId: Id,
  status: ReviewStatus.default('open'),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});
export const ValidationFailedBody = z.object({ error: z.string(), issues: z.array(ValidationIssue) });

export const MfaRequest = z.object({
  action: z.enum(['enroll', 'verify']),
  code: z.string().max(16).optional().meta({ description: 'the current 6-digit code (verify)' }),
});
export const MfaResult = z.union([
  z.object({ secret: z.string(), otpauthUri: z.string() }),
  z.object({ enabled: z.literal(true), verifiedAt: Timestamp }),
]);

export const Billing = z.object({
  orgId: z.string(),
  planId: z.string(),
  subscriptionStatus: z.string().nullable(),
  currentPeriodEnd: NullableTimestamp,
  customerRef: z.string().nullable().meta({ description: 'the payment provider’s customer id' }),
  events: z.array(z.object({ id: z.string(), type: z.string(), receivedAt: Timestamp })),
});
export const Usage = z.object({
  orgId: z.string(),
  plan: z.object({ id: z.string(), name: z.string() }),
  period: z.object({ start: z.string(), end: z.string(), days: z.int() }),
  quota: z.object({ tokens: z.int(), used: z.int(), reserved: z.int() }),
  budget: z.object({ day: z.string(), capMicros: z.int(), spentMicros: z.int(), reservedMicros: z.int() }),
  days: z
    .array(
      z.object({
        day: z.string(),
        model: z.string(),
        kind: z.string(),
        requests: z.int(),
        tokensIn: z.int(),
        tokensOut: z.int(),
        costMicros: z.int(),
      }),
    )
    .meta({ description: 'usage of the current quota period per UTC day, model and kind' }),
});

export const PrivacyDeleteResult = z.object({
  deleted: z.literal(true).meta({ description: 'the account is erased: no sign-in, no session, no key is left' }),
  plan: z
    .object({
      transferredOrganizations: z.array(z.object({ orgId: z.string(), newOwnerId: z.string() })),
      deletedOrganizations: z.array(z.string()),
      leftOrganizations: z.array(z.string()),
      revokedKeys: z.int(),
      endedSessions: z.int(),
      pseudonymizedBillingRecords: z.int(),
      keptAuditEntries: z.int().meta({ description: 'entries kept under the pseudonymous subject' }),
    })
    .meta({ description: 'what was transferred, deleted or scrubbed' }),
});

export const BillingReceived = z.object({
  received: z.literal(true),
  duplicate: z.boolean().meta({ description: 'the event id was processed before (nothing changed)' }),
  handled: z.boolean().meta({ description: 'the event type changes the organization (others are acknowledged)' }),
});
