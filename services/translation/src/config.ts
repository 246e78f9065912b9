// Configuration from the environment, validated with zod when the process starts.
// Nested names use `__` (PROVIDER__KIND). A secret may come from `<NAME>_FILE`.
// A bad value throws a ConfigError whose message is ONE line naming the variable.
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ConfigError } from './errors.ts';

const int = (def: number, min = 0) => z.coerce.number().int().min(min).default(def);
const bool = (def: boolean) =>
  z
    .enum(['true', 'false', '1', '0'])
    .default(def ? 'true' : 'false')
    .transform((v) => v === 'true' || v === '1');

/** Price per million tokens, in micro-units. */
const priceSchema = z.object({ in: z.number().int().min(0), out: z.number().int().min(0) });

/** A plan as the operator passes it (JSON array in PLANS); upserted into `plans` at start. */
const planSchema = z.object({
  name: z.string().min(1).max(63),
  tokensPerPeriod: z.number().int().min(0),
  periodDays: z.number().int().min(1).max(366).default(30),
  dailyBudgetCents: z.number().int().min(0),
  /** The payment provider's price id that selects this plan (billing webhook). */
  externalPriceId: z.string().min(1).max(255).optional(),
});
export type PlanConfig = z.infer<typeof planSchema>;

/** Per-minute defaults of the limited routes; RATE_LIMITS entries override them by route. */
export const defaultRateLimits: Record<string, number> = {
  '/api/v1/translate': 600,
  '/api/v1/judge': 120,
  '/api/v1/playground': 5,
  // Per client IP. The operations routes are called by the CronJobs (a few times an hour); the limit bounds
  // guessing of the worker secret and the database work an unauthenticated caller can cause.
  '/api/worker': 60,
  '/api/retention': 60,
  '/': 120,
};

/** Public endpoints used when PROVIDER__BASE_URL is not set. */
const defaultBaseUrls: Record<string, string | undefined> = {
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com',
};

/**
 * The settings contract: every variable the image reads, flat (env names), with defaults. The operator's env builder
 * for translation pods is typed against these names (`SettingName`), and a test fails if it sets anything else.
 */
export const settingsSchema = z.object({
  NODE_ENV: z.enum(['production', 'development', 'test']).default('production'),
  PORT: int(3000, 0).pipe(z.number().max(65535)),
  HOST: z.string().min(1).default('0.0.0.0'),
  REUSE_PORT: bool(false),
  DATABASE_URL: z
    .string()
    .regex(/^(postgres(ql)?:\/\/|pglite:)/, 'must start with postgres://, postgresql:// or pglite:')
    .optional(),
  DATABASE__POOL_MAX: int(10, 1),
  WORKER_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  TRUST_PROXY: z.string().default('false'),
  PROVIDER__KIND: z.enum(['openai', 'anthropic', 'pseudo']).default('pseudo'),
  PROVIDER__BASE_URL: z.url().optional(),
  PROVIDER__API_KEY: z.string().min(1).optional(),
  PROVIDER__TIMEOUT_MS: int(30_000, 100),
  PROVIDER__OPENAI_TOKEN_LIMIT: z.enum(['max_tokens', 'max_completion_tokens']).default('max_tokens'),
  PROVIDER__MODELS__CHEAP: z.string().min(1).default('pseudo-cheap'),
  PROVIDER__MODELS__TOP: z.string().min(1).default('pseudo-top'),
  PROVIDER__MODELS__JUDGE: z.string().min(1).optional(),
  MODEL_PRICES: z
    .string()
    .default('{}')
    .transform((s, ctx) => {
      try {
        return z.record(z.string(), priceSchema).parse(JSON.parse(s));
      } catch {
        ctx.addIssue({
          code: 'custom',
          message: 'must be JSON {"<model>": {"in": <int>, "out": <int>}} (micro-units per 1M tokens)',
        });
        return z.NEVER;
      }
    }),
  DEFAULT_PRICE__IN: int(1_000_000),
  DEFAULT_PRICE__OUT: int(4_000_000),
  DEFAULT_PLAN: z.string().min(1).default('free'),
  RATE_LIMIT__STORE: z.enum(['auto', 'postgres', 'memory']).default('auto'),
  RATE_LIMITS: z
    .string()
    .default('[]')
    .transform((s, ctx) => {
      try {
        return z
          .array(z.object({ route: z.string().min(1), requestsPerMinute: z.number().int().min(1) }))
          .parse(JSON.parse(s));
      } catch {
        ctx.addIssue({
          code: 'custom',
          message: 'must be JSON [{"route": "/api/v1/translate", "requestsPerMinute": <int>}]',
        });
        return z.NEVER;
      }
    }),
  PLANS: z
    .string()
    .default('[]')
    .transform((s, ctx) => {
      try {
        return z.array(planSchema).parse(JSON.parse(s));
      } catch {
        ctx.addIssue({
          code: 'custom',
          message: 'must be JSON [{"name", "tokensPerPeriod", "periodDays", "dailyBudgetCents", "externalPriceId"?}]',
        });
        return z.NEVER;
      }
    }),
  PLAYGROUND__REQUESTS_PER_DAY: int(50, 1),
  PLAYGROUND__DAILY_BUDGET_MICROS: int(5_000_000),
  PLAYGROUND__TIER: z.enum(['cheap', 'top']).default('cheap'),
  API_KEY_CACHE_TTL_MS: int(5_000),
  API_KEY_REVOCATION_CHECK_MS: int(1_000),
  JOBS__MAX_ATTEMPTS: int(5, 1),
  JOBS__BACKOFF_BASE_MS: int(30_000, 0),
  JOBS__LOCK_MS: int(120_000, 1000),
  JOBS__DRAIN_MAX_JOBS: int(500, 1),
  JOBS__DRAIN_MAX_MS: int(20_000, 100),
  RETENTION__USAGE_EVENTS_DAYS: int(90),
  RETENTION__USAGE_DAILY_DAYS: int(730),
  RETENTION__FINISHED_JOBS_DAYS: int(7),
  RETENTION__REVIEW_ITEMS_DAYS: int(30),
  RETENTION__AUDIT_LOG_DAYS: int(365),
  RETENTION__BILLING_EVENTS_DAYS: int(90),
  RETENTION__METERING_COUNTERS_DAYS: int(62),
  RETENTION__MEMORY_ENTRIES_DAYS: int(365),
  METRICS: bool(true),
  SHUTDOWN_GRACE_MS: int(10_000, 0),
  TRANSLATION_URL: z.url().default('http://127.0.0.1:3000'),
  OAUTH__CLIENT_ID: z.string().min(1).max(256).optional(),
  OAUTH__CLIENT_SECRET: z.string().min(1).max(1024).optional(),
  OAUTH__AUTHORIZE_URL: z.url().default('https://github.com/login/oauth/authorize'),
  OAUTH__TOKEN_URL: z.url().default('https://github.com/login/oauth/access_token'),
  OAUTH__API_URL: z.url().default('https://api.github.com'),
  PUBLIC_BASE_URL: z.url().optional(),
  SESSION__ABSOLUTE_HOURS: int(168, 1),
  SESSION__IDLE_MINUTES: int(720, 1),
  INVITE__TTL_HOURS: int(168, 1),
  MFA__ENCRYPTION_KEY: z.string().min(32, 'must be at least 32 characters').optional(),
  BILLING__WEBHOOK_SECRET: z.string().min(1).optional(),
});

export interface Config {
  /** `development` relaxes what only makes sense behind TLS (the session cookie's Secure flag). */
  environment: z.infer<typeof settingsSchema>['NODE_ENV'];
  port: number;
  host: string;
  /** Listen with SO_REUSEPORT: several processes on one host share the port (the kernel spreads connections). */
  reusePort: boolean;
  databaseUrl: string | undefined;
  databasePoolMax: number;
  workerSecret: string | undefined;
  logLevel: z.infer<typeof settingsSchema>['LOG_LEVEL'];
  trustProxy: boolean | number | string;
  provider: {
    kind: 'openai' | 'anthropic' | 'pseudo';
    baseUrl: string | undefined;
    apiKey: string | undefined;
    timeoutMs: number;
    /** openai: which request field bounds the output (`max_completion_tokens` for reasoning models). */
    openaiTokenLimit: 'max_tokens' | 'max_completion_tokens';
  };
  models: { cheap: string; top: string; judge: string };
  prices: Record<string, { in: number; out: number }>;
  defaultPrice: { in: number; out: number };
  defaultPlan: string;
  rateLimits: {
    store: 'auto' | 'postgres' | 'memory';
    /** Requests per minute, by route path. */
    perMinute: Record<string, number>;
    /** Playground requests per IP per UTC day. */
    playgroundPerDay: number;
  };
  plans: PlanConfig[];
  playground: { dailyBudgetMicros: number; tier: 'cheap' | 'top' };
  apiKeyCacheTtlMs: number;
  /** How old the revocation generation a cached key is checked against may be (the cross-replica window). */
  apiKeyRevocationCheckMs: number;
  jobs: { maxAttempts: number; backoffBaseMs: number; lockMs: number; drainMaxJobs: number; drainMaxMs: number };
  retentionDays: {
    usageEvents: number;
    usageDaily: number;
    finishedJobs: number;
    reviewItems: number;
    auditLog: number;
    billingEvents: number;
    meteringCounters: number;
    memoryEntries: number;
  };
  metrics: boolean;
  shutdownGraceMs: number;
  /** Base URL `trigger worker|retention` POSTs to. */
  translationUrl: string;
  /** The service's own external URL (OAuth callback, invite links, the CSRF origin check). */
  publicBaseUrl: string;
  /** GitHub sign-in; null (sign-in disabled, session routes 401) without a client id and secret. */
  oauth: { clientId: string; clientSecret: string; authorizeUrl: string; tokenUrl: string; apiUrl: string } | null;
  session: { absoluteMs: number; idleMs: number; inviteTtlMs: number };
  /** Key material the TOTP secrets are encrypted with at rest; without it MFA answers 503. */
  mfaEncryptionKey: string | undefined;
  /** The payment provider's webhook signing secret; without it the webhook answers 400. */
  billingWebhookSecret: string | undefined;
}

/** The secrets: each may also come from a file, `<NAME>_FILE` (a mounted Secret). */
export const SECRET_SETTINGS = [
  'WORKER_SECRET',
  'PROVIDER__API_KEY',
  'DATABASE_URL',
  'OAUTH__CLIENT_SECRET',
  'MFA__ENCRYPTION_KEY',
  'BILLING__WEBHOOK_SECRET',
] as const;

/** A variable the image reads: a setting, or `<SECRET>_FILE`. */
export type SettingName = keyof typeof settingsSchema.shape | `${(typeof SECRET_SETTINGS)[number]}_FILE`;

/** Every variable the image reads (for the operator's contract test, the README and `--help`). */
export const settingNames: readonly SettingName[] = [
  ...(Object.keys(settingsSchema.shape) as (keyof typeof settingsSchema.shape)[]),
  ...SECRET_SETTINGS.map((name) => `${name}_FILE` as const),
];

/**
 * Reads and validates the configuration.
 * @example const config = loadConfig(process.env); // throws ConfigError('PORT: ...')
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const raw: Record<string, string | undefined> = {};
  for (const key of Object.keys(settingsSchema.shape)) {
    const value = env[key];
    raw[key] = value === '' ? undefined : value;
  }
  for (const name of SECRET_SETTINGS) {
    const file = env[`${name}_FILE`];
    if (raw[name] === undefined && file) {
      try {
        raw[name] = readFileSync(file, 'utf8').trim();
      } catch {
        throw new ConfigError(`${name}_FILE: cannot read ${file}`);
      }
    }
  }
  const parsed = settingsSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const name = String(issue?.path[0] ?? 'environment');
    throw new ConfigError(`${name}: ${issue?.message ?? 'invalid value'}`);
  }
  const e = parsed.data;
  return {
    environment: e.NODE_ENV,
    port: e.PORT,
    host: e.HOST,
    reusePort: e.REUSE_PORT,
    databaseUrl: e.DATABASE_URL,
    databasePoolMax: e.DATABASE__POOL_MAX,
    workerSecret: e.WORKER_SECRET,
    logLevel: e.LOG_LEVEL,
    trustProxy: parseTrustProxy(e.TRUST_PROXY),
    provider: {
      kind: e.PROVIDER__KIND,
      baseUrl: e.PROVIDER__BASE_URL ?? defaultBaseUrls[e.PROVIDER__KIND],
      apiKey: e.PROVIDER__API_KEY,
      timeoutMs: e.PROVIDER__TIMEOUT_MS,
      openaiTokenLimit: e.PROVIDER__OPENAI_TOKEN_LIMIT,
    },
    models: {
      cheap: e.PROVIDER__MODELS__CHEAP,
      top: e.PROVIDER__MODELS__TOP,
      judge: e.PROVIDER__MODELS__JUDGE ?? e.PROVIDER__MODELS__TOP,
    },
    prices: e.MODEL_PRICES,
    defaultPrice: { in: e.DEFAULT_PRICE__IN, out: e.DEFAULT_PRICE__OUT },
    defaultPlan: e.DEFAULT_PLAN,
    rateLimits: {
      store: e.RATE_LIMIT__STORE,
      perMinute: {
        ...defaultRateLimits,
        ...Object.fromEntries(e.RATE_LIMITS.map((r) => [r.route, r.requestsPerMinute])),
      },
      playgroundPerDay: e.PLAYGROUND__REQUESTS_PER_DAY,
    },
    plans: e.PLANS,
    playground: { dailyBudgetMicros: e.PLAYGROUND__DAILY_BUDGET_MICROS, tier: e.PLAYGROUND__TIER },
    apiKeyCacheTtlMs: e.API_KEY_CACHE_TTL_MS,
    apiKeyRevocationCheckMs: e.API_KEY_REVOCATION_CHECK_MS,
    jobs: {
      maxAttempts: e.JOBS__MAX_ATTEMPTS,
      backoffBaseMs: e.JOBS__BACKOFF_BASE_MS,
      lockMs: e.JOBS__LOCK_MS,
      drainMaxJobs: e.JOBS__DRAIN_MAX_JOBS,
      drainMaxMs: e.JOBS__DRAIN_MAX_MS,
    },
    retentionDays: {
      usageEvents: e.RETENTION__USAGE_EVENTS_DAYS,
      usageDaily: e.RETENTION__USAGE_DAILY_DAYS,
      finishedJobs: e.RETENTION__FINISHED_JOBS_DAYS,
      reviewItems: e.RETENTION__REVIEW_ITEMS_DAYS,
      auditLog: e.RETENTION__AUDIT_LOG_DAYS,
      billingEvents: e.RETENTION__BILLING_EVENTS_DAYS,
      meteringCounters: e.RETENTION__METERING_COUNTERS_DAYS,
      memoryEntries: e.RETENTION__MEMORY_ENTRIES_DAYS,
    },
    metrics: e.METRICS,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    translationUrl: e.TRANSLATION_URL,
    publicBaseUrl: (e.PUBLIC_BASE_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, ''),
    oauth:
      e.OAUTH__CLIENT_ID && e.OAUTH__CLIENT_SECRET
        ? {
            clientId: e.OAUTH__CLIENT_ID,
            clientSecret: e.OAUTH__CLIENT_SECRET,
            authorizeUrl: e.OAUTH__AUTHORIZE_URL,
            tokenUrl: e.OAUTH__TOKEN_URL,
            apiUrl: e.OAUTH__API_URL.replace(/\/+$/, ''),
          }
        : null,
    session: {
      absoluteMs: e.SESSION__ABSOLUTE_HOURS * 3_600_000,
      idleMs: e.SESSION__IDLE_MINUTES * 60_000,
      inviteTtlMs: e.INVITE__TTL_HOURS * 3_600_000,
    },
    mfaEncryptionKey: e.MFA__ENCRYPTION_KEY,
    billingWebhookSecret: e.BILLING__WEBHOOK_SECRET,
  };
}

function parseTrustProxy(value: string): boolean | number | string {
  if (value === 'true') return true;
  if (value === 'false') return false;
  if (/^\d+$/.test(value)) return Number(value);
  return value; // comma-separated addresses/CIDRs, as fastify's trustProxy accepts
}
