// What the service functions need: the app's shared things. The plugins (src/plugins/) decorate the fastify instance
// with exactly these names, so a route hands its instance to a service function, which sees only this interface.
import type { BaseLogger } from 'pino';
import type { Config } from './config.ts';
import type { Database } from './db/index.ts';
import type { TranslationProvider } from './providers/index.ts';
import type { ApiKeyResolver } from './services/accounts.ts';
import type { Meter } from './services/meter.ts';
import type { Metrics } from './services/metrics.ts';
import type { RateLimits } from './services/rate-limiter.ts';

export interface AppContext {
  config: Config;
  database: Database;
  provider: TranslationProvider;
  /** The validator-based heuristic judge's provider (used when the LLM judge cannot run). */
  heuristicProvider: TranslationProvider;
  apiKeys: ApiKeyResolver;
  rateLimits: RateLimits;
  meter: Meter;
  metrics: Metrics;
  log: Pick<BaseLogger, 'debug' | 'info' | 'warn' | 'error'>;
  now: () => number;
  /** Random in [0, 1) for sampling (a seeded one in tests). */
  random: () => number;
}
