// What the routes and jobs need, built once per process (the app factory receives it).
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Database } from '../db/index.ts';
import type { TranslationProvider } from '../providers/index.ts';
import type { ApiKeyResolver } from './accounts.ts';
import type { Meter } from './meter.ts';
import type { Metrics } from './metrics.ts';
import type { RateLimitStore } from './rate-limiter.ts';

export interface AppContext {
  config: Config;
  database: Database;
  provider: TranslationProvider;
  /** The validator-based heuristic judge's provider (used when the LLM judge cannot run). */
  heuristicProvider: TranslationProvider;
  keys: ApiKeyResolver;
  meter: Meter;
  rateLimits: RateLimitStore;
  metrics: Metrics;
  logger: Logger;
  now: () => number;
  /** Random in [0, 1) for sampling (a seeded one in tests). */
  random: () => number;
}
