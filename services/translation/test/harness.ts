// Integration-test harness: a fresh database on the run's real PostgreSQL (or PGlite), migrations applied,
// a fake upstream (real local HTTP servers speaking the provider's API), the app built on it, and helpers to seed accounts.
import { Writable } from 'node:stream';
import { type LocalGitHub, type LocalGitHubUser, startLocalGitHub } from '@scriptorium/github-oauth-local';
import {
  FAKE_API_KEY,
  type FakeKnobs,
  type FakeUpstream,
  startFakeAnthropic,
  startFakeOpenAI,
} from '@scriptorium/harness/translation-fakes';
import type { RouteSpec } from '@scriptorium/http';
import { createTestDatabase, type TestDatabase } from '@scriptorium/test-support';
import { eq } from 'drizzle-orm';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { inject } from 'vitest';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { type Database, migrate, openDatabase } from '../src/db/index.ts';
import { fineTunedModels, organizations } from '../src/db/schema.ts';
import { createOrganization, ensureUser, issueApiKey } from '../src/domain/accounts.ts';
import { createLogger } from '../src/logger.ts';
import { createProvider, type TranslationProvider } from '../src/providers/index.ts';

export const WORKER_SECRET = 'worker-secret-for-tests-0123456789abcdef';
export const OAUTH_CLIENT_ID = 'Iv1.test-client';
export const OAUTH_CLIENT_SECRET = 'test-client-secret-0123456789';
export const PUBLIC_BASE_URL = 'https://translate.test';
export const BILLING_SECRET = 'whsec_test_0123456789abcdef';

/** `name=value; …` of the Set-Cookie headers (only `only` when given). */
export function cookieHeader(setCookie: string | string[] | undefined, only?: string): string {
  const all = setCookie === undefined ? [] : Array.isArray(setCookie) ? setCookie : [setCookie];
  return all
    .map((c) => c.split(';')[0]!)
    .filter((c) => !only || c.startsWith(`${only}=`))
    .join('; ');
}

/** A signed-in user: the session cookie header, the user id and the verified e-mail. */
export type Session = { cookie: string; userId: string; email: string };

export interface Harness {
  app: FastifyInstance;
  /** Every route's spec, with its full path. */
  registry: { specs: RouteSpec[] };
  database: Database;
  fake: FakeUpstream | null;
  /** The local GitHub-compatible OAuth server sign-in goes through. */
  github: LocalGitHub;
  /**
   * Signs in through the real flow (the app's redirect, the local GitHub's authorize and token endpoints, the
   * callback) as `login` (added to the local GitHub when new); returns the session cookie header and the user id.
   */
  signIn(login: string, email?: string): Promise<Session>;
  /** A request with `session`'s cookie (none for null). */
  call(session: Session | null, method: string, url: string, payload?: object): Promise<LightMyRequestResponse>;
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
  const github = await startLocalGitHub({ clientId: OAUTH_CLIENT_ID, clientSecret: OAUTH_CLIENT_SECRET, users: [] });
  const config = loadConfig({
    NODE_ENV: 'test',
    OAUTH__CLIENT_ID: OAUTH_CLIENT_ID,
    OAUTH__CLIENT_SECRET: OAUTH_CLIENT_SECRET,
    OAUTH__AUTHORIZE_URL: github.authorizeUrl,
    OAUTH__TOKEN_URL: github.tokenUrl,
    OAUTH__API_URL: github.apiUrl,
    PUBLIC_BASE_URL: PUBLIC_BASE_URL,
    MFA__ENCRYPTION_KEY: 'mfa-key-material-for-tests-0123456789abcdef',
    BILLING__WEBHOOK_SECRET: BILLING_SECRET,
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
  let signIns = 0;
  return {
    app,
    registry: { specs: app.routeSpecs },
    database,
    fake,
    logs,
    github,
    async signIn(login, email = `${login}@example.com`) {
      if (!github.users.some((u) => u.login === login)) {
        github.addUser({
          login,
          id: 100_000 + github.users.length,
          name: login,
          emails: [{ email, primary: true, verified: true }],
        } satisfies LocalGitHubUser);
      }
      // Each sign-in from its own client address: the sign-in routes are limited per IP.
      const remoteAddress = `10.200.${(++signIns >> 8) & 255}.${signIns & 255}`;
      const start = await app.inject({ method: 'GET', url: '/auth/github', remoteAddress });
      if (start.statusCode !== 302) throw new Error(`sign-in start answered ${start.statusCode}`);
      const flowCookies = cookieHeader(start.headers['set-cookie']);
      const approved = await fetch(`${start.headers.location}&login=${encodeURIComponent(login)}`, {
        redirect: 'manual',
      });
      const back = new URL(approved.headers.get('location')!);
      const done = await app.inject({
        method: 'GET',
        url: `${back.pathname}${back.search}`,
        headers: { cookie: flowCookies },
        remoteAddress,
      });
      if (done.statusCode !== 302) throw new Error(`sign-in callback answered ${done.statusCode}: ${done.body}`);
      const cookie = cookieHeader(done.headers['set-cookie'], 'session-token');
      const me = await app.inject({ method: 'GET', url: '/api/v1/me', headers: { cookie } });
      return { cookie, userId: me.json().id, email: me.json().email };
    },
    call: (session, method, url, payload) =>
      app.inject({
        method: method as 'GET',
        url,
        headers: session ? { cookie: session.cookie } : {},
        ...(payload ? { payload } : {}),
      }),
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
      await github.close();
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
