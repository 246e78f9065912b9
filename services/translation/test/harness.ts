// Integration-test harness: a fresh database on the run's real PostgreSQL (or PGlite), migrations applied,
// a fake upstream (real local HTTP servers speaking the provider's API), the app built on it, and helpers to seed accounts.
import { Writable } from 'node:stream';
import { createTestDatabase, type TestDatabase } from '@scriptorium/test-support';
import { eq } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { inject } from 'vitest';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { type Database, migrate, openDatabase } from '../src/db/index.ts';
import { fineTunedModels, organizations } from '../src/db/schema.ts';
import type { RouteSpec } from '../src/http/route-spec.ts';
import { createLogger } from '../src/logger.ts';
import { createProvider, type TranslationProvider } from '../src/providers/index.ts';
import { createOrganization, ensureUser, issueApiKey } from '../src/services/accounts.ts';
import { FAKE_API_KEY, type FakeKnobs, type FakeUpstream, startFakeAnthropic, startFakeOpenAI } from './fakes/index.ts';

export const WORKER_SECRET = 'worker-secret-for-tests-0123456789abcdef';

export interface Harness {
  app: FastifyInstance;
  /** Every route's spec, with its full path. */
  registry: { specs: RouteSpec[] };
  database: Database;
  fake: FakeUpstream | null;
  /** A second replica: another app on its own connection pool to the same database, the same provider. */
  replica(opts?: { poolMax?: number; now?: () => number }): Promise<{ app: FastifyInstance; close(): Promise<void> }>;
  /** Every log line the app wrote (pino JSON). */
  logs: string[];
  /** A fresh user + organization + API key. */
  account(opts?: {
    plan?: string;
    dailyBudgetMicros?: number;
    judgeSampleRate?: number;
    reviewThreshold?: number;
  }): Promise<{
    apiKey: string;
    orgId: string;
    userId: string;
  }>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  provider?: 'openai' | 'anthropic' | 'pseudo';
  knobs?: Partial<FakeKnobs>;
  env?: Record<string, string>;
  /** Use embedded PGlite instead of the run's PostgreSQL. */
  pglite?: boolean;
  now?: () => number;
  random?: () => number;
  /** Wraps the real provider (talking to the fake) — e.g. to corrupt a reply deterministically. */
  wrapProvider?: (provider: TranslationProvider) => TranslationProvider;
}

export async function startHarness(opts: HarnessOptions = {}): Promise<Harness> {
  const kind = opts.provider ?? 'openai';
  let testDb: TestDatabase | null = null;
  let url = 'pglite:memory';
  if (!opts.pglite) {
    testDb = await createTestDatabase(inject('postgresUrl'), 'translation');
    url = testDb.url;
  }
  const fake =
    kind === 'openai'
      ? await startFakeOpenAI(opts.knobs)
      : kind === 'anthropic'
        ? await startFakeAnthropic(opts.knobs)
        : null;
  const config = loadConfig({
    DATABASE_URL: url,
    DATABASE__POOL_MAX: '20',
    WORKER_SECRET,
    PROVIDER__KIND: kind,
    ...(fake ? { PROVIDER__BASE_URL: fake.url, PROVIDER__API_KEY: FAKE_API_KEY } : {}),
    PROVIDER__TIMEOUT_MS: '2000',
    PROVIDER__MODELS__CHEAP: 'model-cheap',
    PROVIDER__MODELS__TOP: 'model-top',
    MODEL_PRICES: JSON.stringify({
      'model-cheap': { in: 1_000_000, out: 2_000_000 },
      'model-top': { in: 5_000_000, out: 10_000_000 },
    }),
    API_KEY_CACHE_TTL_MS: '0',
    METRICS: 'false',
    JOBS__BACKOFF_BASE_MS: '0',
    ...opts.env,
  });
  const database = await openDatabase(url, { poolMax: config.databasePoolMax });
  await migrate(database);
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logs.push(...String(chunk).split('\n').filter(Boolean));
      cb();
    },
  });
  const real = createProvider({
    kind,
    ...(fake ? { baseUrl: fake.url, apiKey: FAKE_API_KEY } : {}),
    timeoutMs: config.provider.timeoutMs,
  });
  const app = await buildApp({
    config,
    database,
    logger: createLogger('trace', sink),
    provider: opts.wrapProvider ? opts.wrapProvider(real) : real,
    ...(opts.now ? { now: opts.now } : {}),
    ...(opts.random ? { random: opts.random } : {}),
  });
  let n = 0;
  return {
    app,
    registry: { specs: app.routeSpecs },
    database,
    fake,
    logs,
    async replica(r = {}) {
      const replicaDatabase = await openDatabase(url, { poolMax: r.poolMax ?? 20 });
      const other = await buildApp({
        config,
        database: replicaDatabase,
        logger: createLogger('silent'),
        provider: app.provider,
        ...(r.now ? { now: r.now } : {}),
      });
      return {
        app: other,
        close: async () => {
          await other.close();
          await replicaDatabase.close();
        },
      };
    },
    async account(a = {}) {
      n++;
      const userId = await ensureUser(database, `user${n}-${Math.random().toString(36).slice(2)}@example.com`);
      const orgId = await createOrganization(database, { name: `org ${n}`, planId: a.plan ?? 'free', ownerId: userId });
      const set: Partial<typeof organizations.$inferInsert> = {};
      if (a.dailyBudgetMicros !== undefined) set.dailyBudgetMicros = a.dailyBudgetMicros;
      if (a.judgeSampleRate !== undefined) set.judgeSampleRate = a.judgeSampleRate;
      if (a.reviewThreshold !== undefined) set.reviewThreshold = a.reviewThreshold;
      if (Object.keys(set).length) await database.db.update(organizations).set(set).where(eq(organizations.id, orgId));
      const key = await issueApiKey(database, { userId, orgId, defaultPlan: 'free', actor: 'operator' });
      return { apiKey: key.apiKey, orgId, userId };
    },
    async close() {
      await app.close();
      await database.close();
      await fake?.close();
      await testDb?.drop();
    },
  };
}

export async function addFineTunedModel(database: Database, id: string, orgId: string): Promise<void> {
  await database.db
    .insert(fineTunedModels)
    .values({ id, orgId, upstreamModel: `ft:${id}`, priceInMicros: 3_000_000, priceOutMicros: 6_000_000 });
}

/** A valid translate batch of `n` plain strings. */
export function batch(n = 1, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    sourceLocale: 'en',
    targetLocale: 'de',
    tier: 'cheap',
    items: Array.from({ length: n }, (_, i) => ({ id: `s${i}`, text: `Save your changes ${i}` })),
    style: {},
    glossary: [],
    ...extra,
  };
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
