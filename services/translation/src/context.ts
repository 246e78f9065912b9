// Builds the AppContext from the configuration and an open database.
import pino, { type Logger } from 'pino';
import type { Config } from './config.ts';
import type { Database } from './db/index.ts';
import { createProvider, type TranslationProvider } from './providers/index.ts';
import { ApiKeyResolver } from './services/accounts.ts';
import type { AppContext } from './services/context.ts';
import { createMeter } from './services/meter.ts';
import { createMetrics } from './services/metrics.ts';
import { MemoryRateLimitStore, PostgresRateLimitStore } from './services/rate-limiter.ts';

/** The pino logger: JSON, with every credential-bearing field redacted. */
export function createLogger(level: Config['logLevel'], destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'translation' },
      redact: {
        paths: ['req.headers.authorization', 'req.headers.cookie', '*.apiKey', '*.secret'],
        censor: '[redacted]',
      },
    },
    // Asynchronous, buffered stdout: lines are written 4 KiB at a time under load (one syscall per ~20 request
    // lines), and at least every 250 ms when idle. pino flushes synchronously on exit; `handleSignals` flushes too.
    destination ?? pino.destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: 250 }),
  );
}

export function createContext(
  config: Config,
  database: Database,
  opts: { logger?: Logger; provider?: TranslationProvider; now?: () => number; random?: () => number } = {},
): AppContext {
  const provider =
    opts.provider ??
    createProvider({
      kind: config.provider.kind,
      ...(config.provider.baseUrl ? { baseUrl: config.provider.baseUrl } : {}),
      ...(config.provider.apiKey ? { apiKey: config.provider.apiKey } : {}),
      timeoutMs: config.provider.timeoutMs,
      openaiTokenLimit: config.provider.openaiTokenLimit,
    });
  const store =
    config.rateLimits.store === 'memory' || (config.rateLimits.store === 'auto' && database.kind === 'pglite')
      ? new MemoryRateLimitStore()
      : new PostgresRateLimitStore(database);
  const metrics = createMetrics(config.metrics);
  const logger = opts.logger ?? createLogger(config.logLevel);
  // Concurrent reservations and settlements share statements (group commit); PostgreSQL only.
  const meter = createMeter(database, {
    batching: true,
    metrics,
    now: opts.now ?? Date.now,
    onBatch: (kind, size) => metrics.meterBatchSize.observe({ kind }, size),
    // The PostgreSQL error code only: a message could quote arguments.
    onFallback: (error) =>
      logger.warn(
        { code: typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : 'error' },
        'metering batch failed; ran one by one',
      ),
  });
  return {
    config,
    database,
    provider,
    heuristicProvider: createProvider({ kind: 'pseudo', timeoutMs: config.provider.timeoutMs }),
    meter,
    keys: new ApiKeyResolver(database, config.apiKeyCacheTtlMs, config.apiKeyRevocationCheckMs),
    rateLimits: store,
    metrics,
    logger,
    now: opts.now ?? Date.now,
    random: opts.random ?? Math.random,
  };
}
