// What the use cases need: the app's shared things, each typed by an interface defined here (or, for metering, in the
// domain's metering model) and implemented at the edges (infra/, and domain/accounts.ts's API-key resolver). The
// plugins (src/plugins/) decorate the fastify instance with exactly these names, so a route hands its instance to a
// use case, which sees only this interface and depends on no implementation.
import type { BaseLogger } from 'pino';
import type { Counter, Histogram, Registry } from 'prom-client';
import type { Config } from './config.ts';
import type { Database } from './db/index.ts';
import type { ApiKey, Organization } from './db/schema.ts';
import type { Meter, OrgLimits } from './domain/metering.ts';
import type { TranslationProvider } from './providers/index.ts';

/** Who is calling with an API key, and the limits and review settings of the organization that pays. */
export type Principal = { keyId: ApiKey['id']; userId: ApiKey['userId'] } & OrgLimits &
  Pick<Organization, 'judgeSampleRate' | 'reviewThreshold' | 'memoryEnabled'>;

/** Who an API key is (`ApiKeyResolver`, domain/accounts.ts): cached, and dropped everywhere on a revocation. */
export interface ApiKeys {
  /** The principal of a presented secret, or null for an unknown, revoked or malformed one. */
  resolve(secret: string): Promise<Principal | null>;
  /** A revocation's generation: entries cached before it are not trusted any more. */
  noteGeneration(generation: number): void;
}

export interface Metrics {
  registry: Registry;
  httpRequests: Counter<'route' | 'method' | 'status'>;
  httpDuration: Histogram<'route' | 'method'>;
  upstreamCalls: Counter<'kind' | 'outcome'>;
  providerRequests: Counter<'kind'>;
  tokens: Counter<'direction'>;
  spendMicros: Counter<'kind'>;
  meterRefusals: Counter<'reason'>;
  rateLimited: Counter<'route'>;
  jobs: Counter<'kind' | 'outcome'>;
  meterBatchSize: Histogram<'kind'>;
}

export interface RateLimitStore {
  /** Counts one hit in `bucket`'s current window and returns the count so far. */
  hit(bucket: string, windowStart: number, windowMs: number): Promise<number>;
}

export interface LimitRule {
  /** Bucket name prefix, e.g. `translate:key` */
  name: string;
  limit: number;
  windowMs: number;
}

/** The rate limits of the app: the store, the configured limits, and the check of one request against rules. */
export interface RateLimits {
  readonly store: RateLimitStore;
  /** True when the store is shared by replicas (PostgreSQL). */
  readonly shared: boolean;
  /** The per-minute limit of `route` (RATE_LIMITS, or the built-in default, else `fallback`). */
  perMinute(route: string, fallback: number): number;
  /**
   * Counts one request of `subject` in every rule's bucket. Returns the tightest remaining count (for
   * RateLimitRemaining) and, over a limit, the seconds until every refusing window frees up (0 when allowed).
   */
  check(rules: LimitRule[], subject: string): Promise<{ remaining: number; retryAfterSeconds: number }>;
}

export interface AppContext {
  config: Config;
  database: Database;
  provider: TranslationProvider;
  /** The validator-based heuristic judge's provider (used when the LLM judge cannot run). */
  heuristicProvider: TranslationProvider;
  apiKeys: ApiKeys;
  rateLimits: RateLimits;
  meter: Meter;
  metrics: Metrics;
  log: Pick<BaseLogger, 'debug' | 'info' | 'warn' | 'error'>;
  now: () => number;
  /** Random in [0, 1) for sampling (a seeded one in tests). */
  random: () => number;
}
