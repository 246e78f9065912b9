// The 403 that does not disclose, timed: does a session route answer an unknown organization id faster or slower than
// the id of an organization that exists but is someone else's? Both must give the same 403 (body and headers checked
// here too) in the same time. The service runs as its own process (`main.ts serve`) on real PostgreSQL, seeded with
// FOREIGN_ORGS organizations of 1–40 members (the memberships index of a service in use); the caller is signed in
// (a session made in the database, as the sign-in callback makes it) and a member of an organization of its own only.
//
// For every session route that takes an organization id, SAMPLES requests per arm over one keep-alive connection,
// the arms interleaved in a random order (so load drifts hit them alike): `foreign` (a random one of the existing
// organizations), `unknown` (a random one of as many random ids no organization has) and `unknown-again` (a second,
// independent unknown arm: the A/A control whose difference from `unknown` is the noise). Then the same three arms once more on `authorize()`
// itself (the one membership lookup both cases share) on the service's database, without HTTP around it.
// A third case there is the positive control: an authorize() with the early return for unknown organizations.
// Figures: each arm's distribution (µs), the difference of medians and of 10 %-trimmed means with 95 % bootstrap
// intervals and a Mann–Whitney test, beside the A/A control's; a verdict per comparison and for the run (`same`,
// `leak`, `inconclusive`; the rule is above `verdictOf`). Writes bench/results/translation-authz.json. SAMPLES (default 1500;
// BENCH_QUICK=1: 200), FOREIGN_ORGS (default 300).

import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, startTestPostgres } from '@scriptorium/test-support';
import { freePort } from '@scriptorium/test-support/ports';
import { seededRandom } from '@scriptorium/test-support/random';
import type { Permission } from '@scriptorium/translation';
import {
  authorize,
  createOrganization,
  createSession,
  type Database,
  ensureUser,
  forbidden,
  migrate,
  openDatabase,
  SESSION_COOKIE,
} from '@scriptorium/translation';
import { startService, stopService, unlimited } from '../translation-service.ts';

const root = join(import.meta.dirname, '..', '..');
const SAMPLES = Number(process.env.SAMPLES ?? (process.env.BENCH_QUICK === '1' ? 200 : 1500));
const FOREIGN_ORGS = Number(process.env.FOREIGN_ORGS ?? 300);
const WARMUP = 200;
/** authorize() alone is ~15× cheaper than a request: that many times the samples. */
const DIRECT_FACTOR = 10;
const ARMS = ['unknown', 'foreign', 'unknown-again'] as const;
type Arm = (typeof ARMS)[number];

const random = seededRandom(Number(process.env.SEED ?? 20261124));
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;

// --- statistics ---------------------------------------------------------------------------------------------------
/** Ascending, as a Float64Array (its sort is numeric and native: the bootstraps sort a million arrays). */
const sorted = (xs: ArrayLike<number>) => Float64Array.from(xs).sort();
const quantile = (s: Float64Array, p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
const median = (xs: ArrayLike<number>) => quantile(sorted(xs), 0.5);
function trimmedMean(xs: ArrayLike<number>, trim = 0.1): number {
  const s = sorted(xs);
  const k = Math.floor(s.length * trim);
  const kept = s.slice(k, s.length - k);
  return kept.reduce((n, x) => n + x, 0) / kept.length;
}
const r1 = (n: number) => Math.round(n * 10) / 10;

function distribution(xs: number[]) {
  const s = sorted(xs);
  return {
    n: s.length,
    meanUs: r1(s.reduce((n, x) => n + x, 0) / s.length),
    trimmedMeanUs: r1(trimmedMean(s)),
    p10Us: r1(quantile(s, 0.1)),
    p25Us: r1(quantile(s, 0.25)),
    p50Us: r1(quantile(s, 0.5)),
    p75Us: r1(quantile(s, 0.75)),
    p90Us: r1(quantile(s, 0.9)),
    p99Us: r1(quantile(s, 0.99)),
  };
}

/** `stat(b) − stat(a)` with a 95 % percentile-bootstrap interval (1,000 resamples of each arm). */
function difference(a: number[], b: number[], stat: (xs: ArrayLike<number>) => number) {
  const resample = (xs: number[]) =>
    Float64Array.from({ length: xs.length }, () => xs[Math.floor(random() * xs.length)]!);
  const boots = sorted(Array.from({ length: 1000 }, () => stat(resample(b)) - stat(resample(a))));
  const estimate = stat(b) - stat(a);
  const low = quantile(boots, 0.025);
  const high = quantile(boots, 0.975);
  return { estimateUs: r1(estimate), ci95Us: [r1(low), r1(high)], includesZero: low <= 0 && high >= 0 };
}

/**
 * Mann–Whitney U (Wilcoxon rank-sum), two-sided, normal approximation with the tie correction: whether one arm tends
 * to take longer than the other, without assuming a distribution (request times have long right tails).
 */
function mannWhitney(a: number[], b: number[]) {
  const all = [...a.map((x) => [x, 0] as const), ...b.map((x) => [x, 1] as const)].sort((x, y) => x[0] - y[0]);
  const n = all.length;
  let rankSumA = 0;
  let ties = 0;
  for (let i = 0; i < n; ) {
    let j = i;
    while (j + 1 < n && all[j + 1]![0] === all[i]![0]) j++;
    const rank = (i + j) / 2 + 1;
    for (let k = i; k <= j; k++) if (all[k]![1] === 0) rankSumA += rank;
    const t = j - i + 1;
    ties += t * t * t - t;
    i = j + 1;
  }
  const [n1, n2] = [a.length, b.length];
  const u = rankSumA - (n1 * (n1 + 1)) / 2;
  const sd = Math.sqrt(((n1 * n2) / 12) * (n + 1 - ties / (n * (n - 1))));
  const z = sd === 0 ? 0 : (u - (n1 * n2) / 2) / sd;
  return { z: Math.round(z * 100) / 100, p: 2 * (1 - normalCdf(Math.abs(z))) };
}
/** Φ(x) from erf (Abramowitz–Stegun 7.1.26, |error| < 1.5e-7). */
function normalCdf(x: number): number {
  const t = 1 / (1 + (0.3275911 * Math.abs(x)) / Math.SQRT2);
  const poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  const erf = 1 - poly * Math.exp(-(x * x) / 2);
  return x >= 0 ? (1 + erf) / 2 : (1 - erf) / 2;
}

// --- the verdict ----------------------------------------------------------------------------------------------------
// One rule for every comparison (each HTTP route, each authorize() case):
//  - MARGIN: a difference of medians smaller than 2.5 % of the unknown arm's median is "the same time". Over HTTP that
//    is 15–20 µs on this machine: under half of what the positive control below measures an early return to save (one
//    indexed PostgreSQL round trip, 42–49 µs here), so the smallest real leak lies well outside it.
//  - ALPHA: 0.01 for the whole run, Bonferroni-divided among the comparisons (ALPHA / COMPARISONS each).
//  - `leak`: the Mann–Whitney test rejects equal distributions at that level AND |Δ median| ≥ MARGIN; also any route
//    whose 403s differ in status, body or headers.
//  - `same`: not a leak, and the 95 % bootstrap interval of Δ median lies within ±MARGIN (equality shown, not merely
//    not disproved).
//  - `inconclusive`: neither (too noisy to tell at this load): run again on a quieter machine or with more SAMPLES.
// The A/A control (two independent unknown arms) goes through the same rule: a leak there means the run's noise
// fakes differences, so the run is not called `same`. The positive control (an authorize() that returns early for
// unknown organizations, the bug this benchmark exists to catch) must come out `leak`, or the run cannot detect what
// it looks for and is not called `same` either. The run exits 1 on `leak`.
const MARGIN_FRACTION = 0.025;
const ALPHA = 0.01;
type Verdict = 'same' | 'leak' | 'inconclusive';

/** The verdict on `b` against `a`, whose difference of medians is `d`. */
function verdictOf(a: number[], b: number[], d: ReturnType<typeof difference>, comparisons: number) {
  const marginUs = r1(MARGIN_FRACTION * median(a));
  const test = mannWhitney(a, b);
  const significant = test.p < ALPHA / comparisons;
  const verdict: Verdict =
    significant && Math.abs(d.estimateUs) >= marginUs
      ? 'leak'
      : d.ci95Us[0]! >= -marginUs && d.ci95Us[1]! <= marginUs
        ? 'same'
        : 'inconclusive';
  return { verdict, marginUs, mannWhitney: { z: test.z, p: Number(test.p.toPrecision(3)), significant } };
}

function compare(samples: Record<Arm, number[]>, comparisons: number) {
  const arms = Object.fromEntries(ARMS.map((arm) => [arm, distribution(samples[arm])])) as Record<
    Arm,
    ReturnType<typeof distribution>
  >;
  const against = (other: Arm) => {
    const d = difference(samples.unknown, samples[other], median);
    return {
      median: d,
      trimmedMean: difference(samples.unknown, samples[other], trimmedMean),
      ...verdictOf(samples.unknown, samples[other], d, comparisons),
    };
  };
  return {
    arms,
    foreignMinusUnknown: against('foreign'),
    control: { unknownAgainMinusUnknown: against('unknown-again') },
  };
}

/** The arms in a random order, each SAMPLES times (blocks of one of each, shuffled within the block). */
function schedule(samples: number): Arm[] {
  const order: Arm[] = [];
  for (let i = 0; i < samples; i++) {
    const block = [...ARMS];
    for (let j = block.length - 1; j > 0; j--) {
      const k = Math.floor(random() * (j + 1));
      [block[j], block[k]] = [block[k]!, block[j]!];
    }
    order.push(...block);
  }
  return order;
}

// --- HTTP over one keep-alive connection ----------------------------------------------------------------------------
const agent = new Agent({ keepAlive: true, maxSockets: 1 });
interface Answer {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
  us: number;
}
function send(base: string, method: string, path: string, cookie: string, body?: object): Promise<Answer> {
  const payload = body ? JSON.stringify(body) : undefined;
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const req = request(
      `${base}${path}`,
      {
        method,
        agent,
        headers: {
          cookie,
          ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (text += d));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: text,
            headers: res.headers,
            us: Number(process.hrtime.bigint() - started) / 1000,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** The headers that may differ between two answers whatever they are about. */
const VARYING = new Set(['date', 'x-request-id', 'ratelimitremaining', 'connection', 'keep-alive']);
const headerShape = (h: Answer['headers']) =>
  JSON.stringify(
    Object.keys(h)
      .filter((k) => !VARYING.has(k))
      .sort()
      .map((k) => [k, h[k]]),
  );

interface RouteCase {
  name: string;
  method: string;
  path: (orgId: string) => string;
  body?: (orgId: string) => object;
  permission: Permission;
}
const ROUTES: RouteCase[] = [
  {
    name: 'GET /api/v1/orgs/{id}/members',
    method: 'GET',
    path: (o) => `/api/v1/orgs/${o}/members`,
    permission: 'members.list',
  },
  {
    name: 'POST /api/v1/orgs/{id}/members',
    method: 'POST',
    path: (o) => `/api/v1/orgs/${o}/members`,
    body: () => ({ email: 'probe@example.com' }),
    permission: 'members.invite',
  },
  {
    name: 'PATCH /api/v1/orgs/{id}/members/{userId}',
    method: 'PATCH',
    path: (o) => `/api/v1/orgs/${o}/members/${randomUUID()}`,
    body: () => ({ role: 'admin' }),
    permission: 'members.role',
  },
  {
    name: 'DELETE /api/v1/orgs/{id}/members/{userId}',
    method: 'DELETE',
    path: (o) => `/api/v1/orgs/${o}/members/${randomUUID()}`,
    permission: 'members.remove',
  },
  {
    name: 'GET /api/v1/orgs/{id}/invites',
    method: 'GET',
    path: (o) => `/api/v1/orgs/${o}/invites`,
    permission: 'members.invite',
  },
  {
    name: 'DELETE /api/v1/orgs/{id}/invites/{inviteId}',
    method: 'DELETE',
    path: (o) => `/api/v1/orgs/${o}/invites/${randomUUID()}`,
    permission: 'members.invite',
  },
  {
    name: 'GET /api/v1/orgs/{id}/usage',
    method: 'GET',
    path: (o) => `/api/v1/orgs/${o}/usage`,
    permission: 'usage.read',
  },
  {
    name: 'GET /api/v1/orgs/{id}/billing',
    method: 'GET',
    path: (o) => `/api/v1/orgs/${o}/billing`,
    permission: 'billing.manage',
  },
  {
    name: 'POST /api/v1/keys',
    method: 'POST',
    path: () => '/api/v1/keys',
    body: (o) => ({ orgId: o }),
    permission: 'keys.issue',
  },
  { name: 'GET /api/v1/keys?orgId', method: 'GET', path: (o) => `/api/v1/keys?orgId=${o}`, permission: 'members.list' },
  {
    name: 'GET /api/v1/reviews?orgId',
    method: 'GET',
    path: (o) => `/api/v1/reviews?orgId=${o}`,
    permission: 'reviews.act',
  },
];
const RATE_LIMITED_ROUTES = [
  '/api/v1/orgs/:id/members',
  '/api/v1/orgs/:id/members/:userId',
  '/api/v1/orgs/:id/invites',
  '/api/v1/orgs/:id/invites/:inviteId',
  '/api/v1/orgs/:id/usage',
  '/api/v1/orgs/:id/billing',
  '/api/v1/keys',
  '/api/v1/reviews',
];

/** The early return this benchmark exists to catch: look the organization up first, answer at once when unknown. */
const POSITIVE_CONTROL = 'early return for unknown orgs (positive control)';
const DIRECT_CASES: { name: string; check: (database: Database, orgId: string, userId: string) => Promise<unknown> }[] =
  [
    { name: 'authorize(members.list)', check: (db, org, user) => authorize(db, org, user, 'members.list') },
    { name: 'authorize(members.invite)', check: (db, org, user) => authorize(db, org, user, 'members.invite') },
    {
      name: POSITIVE_CONTROL,
      check: async (db, org, user) => {
        const [known] = await db.query('SELECT 1 AS known FROM organizations WHERE id = $1', [org]);
        if (!known) throw forbidden();
        return authorize(db, org, user, 'members.list');
      },
    },
  ];
/** How many comparisons share the run's ALPHA. */
const COMPARISONS = ROUTES.length + DIRECT_CASES.length;

const started = Date.now();
const loadBefore = loadavg()[0]!;
const pg = await startTestPostgres();
const testDb = await createTestDatabase(pg.url, 'bench_authz');
let service: ChildProcess | undefined;
try {
  const database = await openDatabase(testDb.url);
  await migrate(database);
  // Someone else's organizations, each with 1–40 members of a mix of roles.
  const foreign: string[] = [];
  for (let i = 0; i < FOREIGN_ORGS; i++) {
    const owner = await ensureUser(database, `owner${i}@example.com`);
    const orgId = await createOrganization(database, { name: `Org ${i}`, planId: 'team', ownerId: owner });
    const members = Math.floor(random() * 40);
    await database.query(
      `WITH u AS (INSERT INTO users (email) SELECT 'm' || $2 || '-' || g || '@example.com' FROM generate_series(1, $3) g
                  RETURNING id)
       INSERT INTO memberships (org_id, user_id, role) SELECT $1, id, (ARRAY['member', 'admin'])[1 + (random() < 0.2)::int] FROM u`,
      [orgId, i, members],
    );
    foreign.push(orgId);
  }
  const caller = await ensureUser(database, 'prober@example.com');
  await createOrganization(database, { name: 'Mine', planId: 'team', ownerId: caller });
  await database.query('ANALYZE');
  const { token } = await createSession(database, caller, Date.now(), { absoluteMs: 3_600_000, idleMs: 3_600_000 });
  const cookie = `${SESSION_COOKIE}=${token}`;
  const [{ n: memberships }] = (await database.query<{ n: number }>('SELECT count(*)::int AS n FROM memberships')) as [
    { n: number },
  ];
  // Each arm draws from a pool of as many ids, made the same way (PostgreSQL's gen_random_uuid(), read through the
  // driver), so the arms differ only in whether the organization exists: not in how often an id comes back, nor in
  // how its string was made (ids from node's randomUUID() measured 0.4–0.9 µs apart from the driver's in authorize()).
  const unknownIds = async () =>
    (
      await database.query<{ id: string }>('SELECT gen_random_uuid()::text AS id FROM generate_series(1, $1)', [
        foreign.length,
      ])
    ).map((r) => r.id);
  const pools: Record<Arm, string[]> = { unknown: await unknownIds(), foreign, 'unknown-again': await unknownIds() };
  const idFor = (arm: Arm) => pick(pools[arm]);

  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  service = await startService({ databaseUrl: testDb.url, port, env: { RATE_LIMITS: unlimited(RATE_LIMITED_ROUTES) } });
  console.log(
    `  ${FOREIGN_ORGS} foreign organizations, ${memberships} memberships; ${SAMPLES} samples per arm and route` +
      ` (load ${loadBefore.toFixed(2)})`,
  );

  const describe = (name: string, r: ReturnType<typeof compare>) => {
    const d = r.foreignMinusUnknown;
    const c = r.control.unknownAgainMinusUnknown;
    return (
      `  ${name.padEnd(48)} p50 unknown ${r.arms.unknown.p50Us} µs, foreign ${r.arms.foreign.p50Us} µs;` +
      ` foreign − unknown ${d.median.estimateUs} µs [${d.median.ci95Us.join(', ')}], p ${d.mannWhitney.p}: ${d.verdict}` +
      ` (±${d.marginUs} µs); A/A ${c.median.estimateUs} µs [${c.median.ci95Us.join(', ')}], p ${c.mannWhitney.p}: ${c.verdict}`
    );
  };

  const http: Record<string, ReturnType<typeof compare> & { identicalAnswers: boolean }> = {};
  for (const route of ROUTES) {
    for (let i = 0; i < WARMUP; i++) {
      const orgId = idFor(i % 2 ? 'foreign' : 'unknown');
      await send(base, route.method, route.path(orgId), cookie, route.body?.(orgId));
    }
    const samples: Record<Arm, number[]> = { unknown: [], foreign: [], 'unknown-again': [] };
    const shapes = new Set<string>();
    for (const arm of schedule(SAMPLES)) {
      const orgId = idFor(arm);
      const a = await send(base, route.method, route.path(orgId), cookie, route.body?.(orgId));
      if (a.status !== 403) throw new Error(`${route.name} (${arm}) answered ${a.status}: ${a.body}`);
      shapes.add(`${a.status} ${a.body} ${headerShape(a.headers)}`);
      samples[arm].push(a.us);
    }
    const result = { ...compare(samples, COMPARISONS), identicalAnswers: shapes.size === 1 };
    http[route.name] = result;
    console.log(`${describe(route.name, result)}${result.identicalAnswers ? '' : '; ANSWERS DIFFER'}`);
  }

  // authorize() alone: the one membership lookup, on a pool like the service's, no HTTP around it; and the plan
  // PostgreSQL chose for it in each case.
  const plans: Record<string, string> = {};
  for (const arm of ['unknown', 'foreign'] as const) {
    const rows = await database.query<{ 'QUERY PLAN': string }>(
      'EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, SUMMARY OFF, COSTS OFF) SELECT role FROM memberships WHERE org_id = $1 AND user_id = $2',
      [idFor(arm), caller],
    );
    plans[arm] = rows.map((r) => r['QUERY PLAN']).join('\n');
  }
  console.log(`  membership lookup plan (unknown / foreign):\n${plans.unknown}\n${plans.foreign}`);
  const direct: Record<string, ReturnType<typeof compare>> = {};
  for (const { name, check } of DIRECT_CASES) {
    const samples: Record<Arm, number[]> = { unknown: [], foreign: [], 'unknown-again': [] };
    const once = async (orgId: string) => {
      const t = process.hrtime.bigint();
      try {
        await check(database, orgId, caller);
        throw new Error(`${name} allowed a non-member`);
      } catch (e) {
        if ((e as { status?: number }).status !== 403) throw e;
      }
      return Number(process.hrtime.bigint() - t) / 1000;
    };
    for (let i = 0; i < WARMUP; i++) await once(idFor(i % 2 ? 'foreign' : 'unknown'));
    for (const arm of schedule(SAMPLES * DIRECT_FACTOR)) samples[arm].push(await once(idFor(arm)));
    direct[name] = compare(samples, COMPARISONS);
    console.log(describe(name, direct[name]));
  }

  // The verdict of the run (the rule is written down above `verdictOf`).
  const real = [
    ...Object.values(http),
    ...Object.entries(direct)
      .filter(([n]) => n !== POSITIVE_CONTROL)
      .map(([, r]) => r),
  ];
  const leaks = [
    ...Object.entries(http).filter(([, r]) => r.foreignMinusUnknown.verdict === 'leak' || !r.identicalAnswers),
    ...Object.entries(direct).filter(([n, r]) => n !== POSITIVE_CONTROL && r.foreignMinusUnknown.verdict === 'leak'),
  ].map(([n]) => n);
  const controlOk =
    direct[POSITIVE_CONTROL]?.foreignMinusUnknown.verdict === 'leak' &&
    real.every((r) => r.control.unknownAgainMinusUnknown.verdict !== 'leak');
  const verdict: Verdict =
    leaks.length > 0
      ? 'leak'
      : controlOk && real.every((r) => r.foreignMinusUnknown.verdict === 'same')
        ? 'same'
        : 'inconclusive';
  const notSame = Object.entries({ ...http, ...direct })
    .filter(([n, r]) => n !== POSITIVE_CONTROL && r.foreignMinusUnknown.verdict !== 'same')
    .map(([n]) => n);
  console.log(
    `  verdict: ${verdict}${leaks.length ? ` (${leaks.join('; ')})` : ''}` +
      `${verdict === 'inconclusive' ? ` (not shown the same: ${notSame.join('; ') || 'none'}; controls ${controlOk ? 'ok' : 'FAILED'})` : ''}`,
  );
  if (verdict === 'leak') process.exitCode = 1;
  await database.close();

  const loadAfter = loadavg()[0]!;
  const result = {
    machine: { cpus: cpus().length, loadavg_1m_before: loadBefore, loadavg_1m_after: loadAfter },
    at: new Date(started).toISOString(),
    setup: {
      foreignOrganizations: FOREIGN_ORGS,
      memberships,
      samplesPerArm: SAMPLES,
      directSamplesPerArm: SAMPLES * DIRECT_FACTOR,
      warmupPerRoute: WARMUP,
      transport:
        'one keep-alive HTTP/1.1 connection on loopback, requests one after another, arms interleaved at random',
    },
    verdict: {
      verdict,
      rule: `leak: Mann–Whitney p < ${ALPHA}/${COMPARISONS} and |Δ median| ≥ ${MARGIN_FRACTION * 100} % of the unknown arm's median; same: the 95 % interval of Δ median within that margin; controls: the A/A arms never leak, the early-return authorize() does`,
      leaks,
      controlsOk: controlOk,
    },
    http,
    authorize: direct,
    membershipLookupPlans: plans,
  };
  writeFileSync(join(root, 'bench/results/translation-authz.json'), `${JSON.stringify(result, null, 2)}\n`);
  console.log(
    `  load average ${loadBefore.toFixed(2)} → ${loadAfter.toFixed(2)}; bench/results/translation-authz.json`,
  );
} finally {
  agent.destroy();
  await stopService(service);
  await testDb.drop();
  await pg.stop();
}
