// The translation service's data model, shared by the API-key side (this issue) and the session side
// (keys via session, reviews, orgs, MFA, privacy, billing). One migrations folder: `./migrations`.
//
// Zero content retention: no column here holds source or translated text, except `review_items`
// (the workflow's one place for text), `jobs.payload` while a sampled judge job waits (scrubbed when it ends), and
// `translation_memory` and `translation_memory_files` of an organization that turned its memory on.
import { sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  boolean,
  customType,
  date,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  real,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import type { ValidationIssue } from '../language/index.ts';

const bytea = customType<{ data: Buffer; driverData: Buffer | Uint8Array }>({
  dataType: () => 'bytea',
  fromDriver: (value) => (Buffer.isBuffer(value) ? value : Buffer.from(value)),
});

const id = () => text('id').primaryKey().default(sql`gen_random_uuid()::text`);
const createdAt = () => timestamp('created_at', { withTimezone: true }).notNull().defaultNow();
/** Money in integer micro-units of the billing currency (1 unit = 1,000,000). */
const micros = (name: string) => bigint(name, { mode: 'number' });

/** A plan: token quota per period and a daily budget cap. */
export const plans = pgTable('plans', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  /** Tokens (in + out) allowed per period. */
  quotaTokens: bigint('quota_tokens', { mode: 'number' }).notNull(),
  /** Length of a quota period in days; periods are aligned on the Unix epoch (UTC). */
  periodDays: integer('period_days').notNull().default(30),
  /** Money allowed per UTC day, in micro-units. */
  dailyBudgetMicros: micros('daily_budget_micros').notNull(),
  /** Payment-provider price id that maps to this plan (billing webhook). */
  externalPriceId: text('external_price_id').unique(),
  createdAt: createdAt(),
});

export const users = pgTable(
  'users',
  {
    id: id(),
    email: text('email').notNull(),
    name: text('name'),
    /** Identity at the code-hosting OAuth provider (GitHub user id). */
    githubId: text('github_id').unique(),
    /** TOTP secret, encrypted at rest (AES-256-GCM, base64url of iv|tag|ciphertext). */
    mfaSecretEnc: text('mfa_secret_enc'),
    mfaEnabled: boolean('mfa_enabled').notNull().default(false),
    /** Last accepted TOTP time step (replay protection). */
    mfaLastStep: bigint('mfa_last_step', { mode: 'number' }),
    createdAt: createdAt(),
    deletedAt: timestamp('deleted_at', { withTimezone: true }),
  },
  (t) => [uniqueIndex('users_email_key').on(sql`lower(${t.email})`)],
);

/** Opaque session cookies (`session-token`), stored hashed. */
export const sessions = pgTable(
  'sessions',
  {
    tokenHash: bytea('token_hash').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdAt: createdAt(),
    /** Absolute expiry: the session ends then, however active. */
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    /** Idle expiry: the session ends when not used for SESSION__IDLE_MINUTES after this (refreshed at most once a minute). */
    lastSeenAt: timestamp('last_seen_at', { withTimezone: true }).notNull().defaultNow(),
    /** When this session last passed TOTP (step-up for key issue/revoke and privacy delete). */
    mfaVerifiedAt: timestamp('mfa_verified_at', { withTimezone: true }),
  },
  (t) => [index('sessions_user_idx').on(t.userId), index('sessions_expires_idx').on(t.expiresAt)],
);

export const organizations = pgTable('organizations', {
  id: id(),
  name: text('name').notNull(),
  /** A user's personal organization (keys issued without an orgId belong to it). */
  personal: boolean('personal').notNull().default(false),
  planId: text('plan_id')
    .notNull()
    .references(() => plans.id),
  /** Overrides the plan's daily budget cap when set (micro-units). */
  dailyBudgetMicros: micros('daily_budget_micros'),
  /** Fraction (0..1) of translated batches judged in the background. 0 = none (zero retention). */
  judgeSampleRate: real('judge_sample_rate').notNull().default(0),
  /** A background judge score (overall, 0..5) under this opens a review item. */
  reviewThreshold: real('review_threshold').notNull().default(3),
  /** The organization's translation memory is on (opt-in: off by default, and turning it off deletes it). */
  memoryEnabled: boolean('memory_enabled').notNull().default(false),
  /**
   * Moves with every change of the translation memory (a store, turning it on or off, retention): a file answer
   * (`translation_memory_files`) answers only at the generation it was made at.
   */
  memoryGeneration: bigint('memory_generation', { mode: 'number' }).notNull().default(0),
  /** Subscription state synced from the payment provider. */
  externalCustomerId: text('external_customer_id').unique(),
  subscriptionStatus: text('subscription_status'),
  currentPeriodEnd: timestamp('current_period_end', { withTimezone: true }),
  createdAt: createdAt(),
});

export const memberships = pgTable(
  'memberships',
  {
    orgId: text('org_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** owner | admin | member */
    role: text('role').notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.userId] }), index('memberships_user_idx').on(t.userId)],
);

export const invites = pgTable(
  'invites',
  {
    id: id(),
    orgId: text('org_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    email: text('email').notNull(),
    role: text('role').notNull().default('member'),
    invitedBy: text('invited_by').references(() => users.id, { onDelete: 'set null' }),
    tokenHash: bytea('token_hash').notNull().unique(),
    createdAt: createdAt(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    acceptedAt: timestamp('accepted_at', { withTimezone: true }),
  },
  (t) => [index('invites_org_idx').on(t.orgId)],
);

/** API keys: only the SHA-256 of the secret is stored; `prefix` is the shown, non-secret start. */
export const apiKeys = pgTable(
  'api_keys',
  {
    id: id(),
    hash: bytea('hash').notNull().unique(),
    prefix: text('prefix').notNull(),
    /** A label the issuer chose (shown in listings). */
    name: text('name'),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    orgId: text('org_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    createdAt: createdAt(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
  },
  (t) => [index('api_keys_org_idx').on(t.orgId), index('api_keys_user_idx').on(t.userId)],
);

/**
 * One row (id 1): bumped in the same transaction as every API-key revocation. Replicas compare it (at most every
 * API_KEY_REVOCATION_CHECK_MS) before answering from their key cache, and drop the cache when it moved.
 */
export const apiKeyGeneration = pgTable('api_key_generation', {
  id: integer('id').primaryKey(),
  generation: bigint('generation', { mode: 'number' }).notNull().default(0),
});

/** Fine-tuned models an organization may select with `modelOverride`. */
export const fineTunedModels = pgTable(
  'fine_tuned_models',
  {
    /** The id clients send as `modelOverride`. */
    id: text('id').primaryKey(),
    orgId: text('org_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    /** The model name sent upstream. */
    upstreamModel: text('upstream_model').notNull(),
    /** Price per million tokens, micro-units. */
    priceInMicros: micros('price_in_micros').notNull(),
    priceOutMicros: micros('price_out_micros').notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('fine_tuned_models_org_idx').on(t.orgId)],
);

/** Token quota counter per organization and period (`period_start` = first UTC day of the period). */
export const quotaUsage = pgTable(
  'quota_usage',
  {
    orgId: text('org_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    periodStart: date('period_start', { mode: 'string' }).notNull(),
    usedTokens: bigint('used_tokens', { mode: 'number' }).notNull().default(0),
    reservedTokens: bigint('reserved_tokens', { mode: 'number' }).notNull().default(0),
    /** When a reservation was last added: long after it, whatever is still reserved is orphaned (see the worker). */
    reservedAt: timestamp('reserved_at', { withTimezone: true }),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.periodStart] })],
);

/** Daily spend counter per scope (`org:<id>` or `playground`), micro-units. Invariant: spent + reserved <= cap. */
export const budgetUsage = pgTable(
  'budget_usage',
  {
    scope: text('scope').notNull(),
    day: date('day', { mode: 'string' }).notNull(),
    spentMicros: micros('spent_micros').notNull().default(0),
    reservedMicros: micros('reserved_micros').notNull().default(0),
    /** When a reservation was last added (orphan detection, as on quota_usage). */
    reservedAt: timestamp('reserved_at', { withTimezone: true }),
  },
  (t) => [primaryKey({ columns: [t.scope, t.day] })],
);

/** One row per metered call (no content): what was used and charged. */
export const usageEvents = pgTable(
  'usage_events',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    orgId: text('org_id'),
    apiKeyId: text('api_key_id'),
    /** translate | judge | playground */
    kind: text('kind').notNull(),
    model: text('model').notNull(),
    items: integer('items').notNull(),
    tokensIn: integer('tokens_in').notNull(),
    tokensOut: integer('tokens_out').notNull(),
    costMicros: micros('cost_micros').notNull(),
    /** ok | upstream_error */
    outcome: text('outcome').notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('usage_events_created_idx').on(t.createdAt), index('usage_events_org_idx').on(t.orgId, t.createdAt)],
);

/** Daily rollup of usage events (written by the `usage-rollup` job). */
export const usageDaily = pgTable(
  'usage_daily',
  {
    orgId: text('org_id').notNull(),
    day: date('day', { mode: 'string' }).notNull(),
    kind: text('kind').notNull(),
    model: text('model').notNull(),
    requests: integer('requests').notNull(),
    tokensIn: bigint('tokens_in', { mode: 'number' }).notNull(),
    tokensOut: bigint('tokens_out', { mode: 'number' }).notNull(),
    costMicros: micros('cost_micros').notNull(),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.day, t.kind, t.model] })],
);

/** Review items: the one place translated text may be stored. Status: open → approved | edited | rejected. */
export const reviewItems = pgTable(
  'review_items',
  {
    id: id(),
    orgId: text('org_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    sourceLocale: text('source_locale').notNull(),
    targetLocale: text('target_locale').notNull(),
    itemId: text('item_id').notNull(),
    sourceText: text('source_text').notNull(),
    targetText: text('target_text').notNull(),
    isIcu: boolean('is_icu').notNull().default(false),
    glossary: jsonb('glossary').notNull().default([]),
    model: text('model').notNull(),
    scores: jsonb('scores').notNull(),
    overall: real('overall').notNull(),
    /**
     * What the validators (ICU, placeholders and tags, glossary) found in `target_text` when the judge flagged the item:
     * `{code, message}` each, the messages naming only arguments, tags and terms of this item's own texts and glossary.
     * Empty when the target passed them (flagged on the judge's score alone). Deleted with the row.
     */
    issues: jsonb('issues').$type<Omit<ValidationIssue, 'itemId'>[]>().notNull().default([]),
    status: text('status').notNull().default('open'),
    finalTarget: text('final_target'),
    rejectReason: text('reject_reason'),
    decidedBy: text('decided_by').references(() => users.id, { onDelete: 'set null' }),
    decidedAt: timestamp('decided_at', { withTimezone: true }),
    createdAt: createdAt(),
  },
  (t) => [index('review_items_org_idx').on(t.orgId, t.status), index('review_items_created_idx').on(t.createdAt)],
);

/**
 * The translation memory of an organization that turned it on (opt-in; the only stored text besides review items):
 * one translation per source text, context and locale pair. `key_hash` is the SHA-256 of the ICU-normalized source
 * and its context (the exact-match key). Deleted with the organization, when the memory is turned off, and by
 * retention when unused for RETENTION__MEMORY_ENTRIES_DAYS.
 */
export const translationMemory = pgTable(
  'translation_memory',
  {
    orgId: text('org_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    sourceLocale: text('source_locale').notNull(),
    targetLocale: text('target_locale').notNull(),
    keyHash: bytea('key_hash').notNull(),
    sourceText: text('source_text').notNull(),
    context: text('context'),
    isIcu: boolean('is_icu').notNull().default(false),
    targetText: text('target_text').notNull(),
    /** translation | review | import */
    origin: text('origin').notNull(),
    /** Who it came from (the API key's user, the reviewer, the importer); cleared when that user is erased. */
    createdBy: text('created_by').references(() => users.id, { onDelete: 'set null' }),
    createdAt: createdAt(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.orgId, t.sourceLocale, t.targetLocale, t.keyHash] }),
    index('translation_memory_created_by_idx').on(t.createdBy),
    index('translation_memory_last_used_idx').on(t.lastUsedAt),
  ],
);

/**
 * File answers of the translation memory: the translated file the memory answers for a file it answers in full,
 * keyed by a digest of the file's bytes and every parameter that changes the output (`src/domain/memory-files.ts`),
 * valid only at the memory generation it was made at. Part of the memory: stored only while it is on, deleted with
 * it (turned off, with the organization, when the memory changes, by retention when unused for
 * RETENTION__MEMORY_ENTRIES_DAYS), in the privacy export of the person whose call made it.
 */
export const translationMemoryFiles = pgTable(
  'translation_memory_files',
  {
    orgId: text('org_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    digest: bytea('digest').notNull(),
    /** The organization's memory generation the answer was made at. */
    generation: bigint('generation', { mode: 'number' }).notNull(),
    format: text('format').notNull(),
    sourceLocale: text('source_locale').notNull(),
    targetLocale: text('target_locale').notNull(),
    /** The answer's `content`, `issues` and `fromMemory`: the JSON the route sends, in UTF-8 (sent as it is). */
    answer: bytea('answer').notNull(),
    /** The memory keys (32 bytes each) of the entries it was made from: a use refreshes their last use too. */
    entryKeys: bytea('entry_keys').notNull(),
    createdBy: text('created_by').references(() => users.id, { onDelete: 'set null' }),
    createdAt: createdAt(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.orgId, t.digest] }),
    index('translation_memory_files_created_by_idx').on(t.createdBy),
    index('translation_memory_files_last_used_idx').on(t.lastUsedAt),
  ],
);

/** The job queue, claimed with FOR UPDATE SKIP LOCKED. Status: queued → running → done | queued (retry) | dead. */
export const jobs = pgTable(
  'jobs',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    kind: text('kind').notNull(),
    payload: jsonb('payload').notNull(),
    status: text('status').notNull().default('queued'),
    attempts: integer('attempts').notNull().default(0),
    maxAttempts: integer('max_attempts').notNull().default(5),
    runAt: timestamp('run_at', { withTimezone: true }).notNull().defaultNow(),
    lockedUntil: timestamp('locked_until', { withTimezone: true }),
    lastError: text('last_error'),
    /** Makes enqueueing idempotent (e.g. `usage-rollup:2026-11-21`). */
    dedupeKey: text('dedupe_key').unique(),
    createdAt: createdAt(),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
  },
  (t) => [
    index('jobs_ready_idx').on(t.runAt).where(sql`status in ('queued', 'running')`),
    index('jobs_finished_idx').on(t.finishedAt),
  ],
);

/** Who did what; kept through erasure (actors are referenced by id only). */
export const auditLog = pgTable(
  'audit_log',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    at: timestamp('at', { withTimezone: true }).notNull().defaultNow(),
    actorUserId: text('actor_user_id'),
    /** user | operator | system */
    actorKind: text('actor_kind').notNull(),
    orgId: text('org_id'),
    action: text('action').notNull(),
    target: text('target'),
    /** The request that did it (fastify's request id), when it came through the API. */
    requestId: text('request_id'),
    meta: jsonb('meta').notNull().default({}),
  },
  (t) => [
    index('audit_log_at_idx').on(t.at),
    index('audit_log_org_idx').on(t.orgId),
    index('audit_log_actor_idx').on(t.actorUserId),
  ],
);

/** Payment-provider events already handled (the webhook is idempotent by event id). */
export const billingEvents = pgTable(
  'billing_events',
  {
    id: text('id').primaryKey(),
    type: text('type').notNull(),
    /** The organization the event changed (none when it matched no organization). */
    orgId: text('org_id'),
    /** The payment provider's customer id; pseudonymized when its organization is erased. */
    customerRef: text('customer_ref'),
    receivedAt: timestamp('received_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('billing_events_org_idx').on(t.orgId)],
);

/** Sliding-window rate-limit counters, shared by all replicas. `window_start` is epoch milliseconds. */
export const rateLimitWindows = pgTable(
  'rate_limit_windows',
  {
    bucket: text('bucket').notNull(),
    windowStart: bigint('window_start', { mode: 'number' }).notNull(),
    windowMs: integer('window_ms').notNull(),
    count: integer('count').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.bucket, t.windowStart] }), index('rate_limit_windows_start_idx').on(t.windowStart)],
);

// Row types, derived from the tables (what a `SELECT *` through drizzle returns; raw SQL aliases its columns to these
// names).
export type Plan = typeof plans.$inferSelect;
export type User = typeof users.$inferSelect;
export type Session = typeof sessions.$inferSelect;
export type Organization = typeof organizations.$inferSelect;
export type Membership = typeof memberships.$inferSelect;
export type Invite = typeof invites.$inferSelect;
export type ApiKey = typeof apiKeys.$inferSelect;
export type FineTunedModel = typeof fineTunedModels.$inferSelect;
export type ReviewItem = typeof reviewItems.$inferSelect;
export type NewReviewItem = typeof reviewItems.$inferInsert;
export type Job = typeof jobs.$inferSelect;
export type MemoryEntry = typeof translationMemory.$inferSelect;
export type AuditEntry = typeof auditLog.$inferSelect;
