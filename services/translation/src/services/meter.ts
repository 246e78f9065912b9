// Metering: the plan quota (tokens per period) and the daily budget cap (micro-units, priced per model) are reserved
// atomically in PostgreSQL before an upstream call and settled after it with the provider's reported usage.
//
// Every metered call goes through `meter.meteredCall(subject, {estimate, price, run, usage})`: translate, its retry,
// the judge and the playground. The counters' arithmetic lives in ONE place, the SQL function `meter` (migration
// 0002_meter_named_arguments.sql, where it is documented); this module prices the calls (`costMicros`), picks the
// quota period and the budget day, and sends the calls to `meter` as named JSON objects (`Admission`, `Settlement`:
// their field names are the function's column names). Concurrent calls share one statement (group commit, see
// `createMeter`), each decided exactly as if the calls had come one after the other.
import type { Database } from '../db/index.ts';
import { AppError, budgetExceeded, playgroundBudgetExceeded, quotaExceeded, rateLimited } from '../errors.ts';
import { Coalescer } from './coalescer.ts';
import type { Metrics } from './metrics.ts';
import { decideRateLimit, type RateLimitDecision } from './rate-limiter.ts';

/** Price per million tokens, micro-units. */
export interface Price {
  in: number;
  out: number;
}

/** Cost in micro-units, rounded up (a call is never free). */
export function costMicros(tokensIn: number, tokensOut: number, price: Price): number {
  return Math.ceil((tokensIn * price.in + tokensOut * price.out) / 1_000_000);
}

const DAY_MS = 86_400_000;
// Every request asks for the same few days (today, the period's first day): remember their ISO strings.
const isoDays = new Map<number, string>();
function isoDay(epochDay: number): string {
  let iso = isoDays.get(epochDay);
  if (iso === undefined) {
    iso = new Date(epochDay * DAY_MS).toISOString().slice(0, 10);
    if (isoDays.size >= 64) isoDays.clear();
    isoDays.set(epochDay, iso);
  }
  return iso;
}

/** The UTC day of `now` (YYYY-MM-DD): budget days. */
export const utcDay = (now: number): string => isoDay(Math.floor(now / DAY_MS));

/** First UTC day of the quota period containing `now`; periods of `periodDays` are aligned on the Unix epoch. */
export function periodStart(now: number, periodDays: number): string {
  const day = Math.floor(now / DAY_MS);
  return isoDay(day - (day % periodDays));
}

/** Who pays for a call: an organization (quota + budget) or the public playground (budget only). */
export interface MeterSubject {
  orgId: string | null;
  /** Budget scope: `org:<id>` or `playground`. */
  scope: string;
  quotaTokens: number;
  periodDays: number;
  capMicros: number;
}

/** An organization's limits: its plan's quota and period, its daily budget (the organization's override or the plan's). */
export interface OrgLimits {
  orgId: string;
  quotaTokens: number;
  periodDays: number;
  dailyBudgetMicros: number;
}

/** The columns of an organization's limits (named as OrgLimits' fields), for a query joining `organizations o` and `plans p`. */
export const ORG_LIMITS_COLUMNS = `p.quota_tokens AS "quotaTokens", p.period_days AS "periodDays",
       COALESCE(o.daily_budget_micros, p.daily_budget_micros) AS "dailyBudgetMicros"`;

/** An organization pays: its quota for the period, its budget for the day. */
export function orgSubject(limits: OrgLimits): MeterSubject {
  return {
    orgId: limits.orgId,
    scope: `org:${limits.orgId}`,
    quotaTokens: limits.quotaTokens,
    periodDays: limits.periodDays,
    capMicros: limits.dailyBudgetMicros,
  };
}

/** The public playground pays: one global daily budget, no quota. */
export function playgroundSubject(dailyBudgetMicros: number): MeterSubject {
  return { orgId: null, scope: 'playground', quotaTokens: 0, periodDays: 1, capMicros: dailyBudgetMicros };
}

export interface Reservation {
  subject: MeterSubject;
  period: string;
  day: string;
  tokens: number;
  costMicros: number;
}

/**
 * A rate limit counted in the same statement as the reservation (the translate route on PostgreSQL).
 * `onDecision` receives the window's state (for RateLimitRemaining) before any error is thrown.
 */
export interface RateLimitGate {
  /** The limited route (metrics). */
  route?: string;
  bucket: string;
  limit: number;
  windowMs: number;
  onDecision(decision: RateLimitDecision): void;
}

/** One admission as the `meter` function reads it: the rate-limit hit (bucket null: none), then the reservation. */
export interface Admission {
  bucket: string | null;
  windowStart: number;
  windowMs: number;
  limit: number;
  orgId: string | null;
  period: string;
  tokens: number;
  quotaTokens: number;
  scope: string;
  day: string;
  costMicros: number;
  capMicros: number;
}

export type UsageKind = 'translate' | 'judge' | 'playground';

/** What a settled call records as its usage event (no content). */
export interface UsageRecord {
  apiKeyId: string | null;
  kind: UsageKind;
  model: string;
  items: number;
  tokensIn: number;
  tokensOut: number;
  outcome: 'ok' | 'upstream_error';
}

/** One settlement as the `meter` function reads it: the reservation released, the actual usage charged, the event. */
export interface Settlement extends UsageRecord {
  orgId: string | null;
  period: string;
  reservedTokens: number;
  tokens: number;
  quotaTokens: number;
  scope: string;
  day: string;
  reservedCostMicros: number;
  costMicros: number;
  capMicros: number;
}

interface AdmitOutcome {
  /** Hits counted in the rate-limit window (0 without a rate limit). */
  hits: number;
  /** ok, quota, budget or rate_limited. */
  result: string;
}

/** One call of a metering statement: an admission or a settlement. */
type MeterCall = { admit: Admission; settle?: undefined } | { settle: Settlement; admit?: undefined };

const METER_SQL = 'SELECT kind, hits, result, charged_micros FROM meter($1::json, $2::json)';

interface MeterRow {
  kind: string;
  hits: number | null;
  result: string | null;
  charged_micros: number | null;
}

/** One statement for `calls` (the function answers the settlements first, then the admissions). */
async function runMeter(database: Database, calls: MeterCall[]): Promise<(AdmitOutcome | number)[]> {
  const admissions: Admission[] = [];
  const settlements: Settlement[] = [];
  for (const c of calls) {
    if (c.admit) admissions.push(c.admit);
    else settlements.push(c.settle);
  }
  const rows = await database.query<MeterRow>(
    METER_SQL,
    [JSON.stringify(admissions), JSON.stringify(settlements)],
    'meter',
  );
  if (rows.length !== calls.length) return [];
  let s = 0;
  let a = settlements.length;
  return calls.map((c) => {
    const row = c.admit ? rows[a++]! : rows[s++]!;
    return c.admit ? { hits: Number(row.hits ?? 0), result: row.result ?? '' } : Number(row.charged_micros ?? 0);
  });
}

/** One call alone. A settlement that cannot be written leaves its reservation held (limits stay safe, capacity
 * shrinks): it is retried briefly before giving up. */
async function runOne(database: Database, call: MeterCall): Promise<AdmitOutcome | number> {
  for (let attempt = 1; ; attempt++) {
    try {
      const [result] = await runMeter(database, [call]);
      if (result === undefined) throw new Error('meter answered no row');
      return result;
    } catch (error) {
      if (call.admit || attempt >= 3) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    }
  }
}

/** What a metered call gave: its result, or the error it threw, and the micro-units charged. */
export interface MeteredCall<R> {
  result: R | null;
  error: unknown;
  charged: number;
}

/** A call to meter: what it may cost, how it is priced, the call itself and what its usage event records. */
export interface MeteredCallSpec<R> {
  estimate: { tokensIn: number; maxTokensOut: number };
  price: Price;
  run: () => Promise<R>;
  usage: Pick<UsageRecord, 'apiKeyId' | 'kind' | 'model' | 'items'>;
  /** A rate limit counted with the reservation (one statement). */
  gate?: RateLimitGate;
}

export interface MeterOptions {
  /**
   * Coalesce concurrent calls into one statement (group commit; PostgreSQL only — PGlite has one connection). At most
   * `maxInFlight` statements are in flight (default 1: the classic group commit, where a batch holds everything that
   * arrived during the previous one — PostgreSQL's cost per request falls with the batch size), up to `maxBatch` calls
   * each; a batch of one runs alone. A batch that fails as a whole runs its calls one by one, so one bad call cannot
   * fail the others.
   */
  batching?: boolean;
  maxInFlight?: number;
  maxBatch?: number;
  /** How many admissions and settlements each batch sent. */
  onBatch?(kind: 'admit' | 'settle', size: number): void;
  /** A batch that failed as a whole (its calls then ran one by one). */
  onFallback?(error: unknown): void;
  metrics?: Metrics;
  now?: () => number;
}

/** The metering module: reservations, settlements and the metered call around them. */
export interface Meter {
  /**
   * Reserves `tokens` and `cost` for `subject`, or throws the 402 error naming what is reached (with a `gate`: first
   * counts the rate-limit hit, and throws 429 over the limit without reserving).
   * @example const r = await meter.reserve(subject, 1200, 900, Date.now());
   */
  reserve(subject: MeterSubject, tokens: number, cost: number, now: number, gate?: RateLimitGate): Promise<Reservation>;
  /**
   * Releases `reservation` and charges the actual usage (0 releases everything), recording one usage event. The charge
   * never exceeds the headroom under the limits. Returns the micro-units charged.
   */
  settle(reservation: Reservation, actual: { tokens: number; costMicros: number }, usage: UsageRecord): Promise<number>;
  /**
   * One metered call: reserve what `estimate` may cost (throws 402, or 429 with a gate), run it, settle with the usage
   * it reports (a failed call releases everything and charges nothing). Never throws what `run` threw: returns it,
   * so the caller decides between a 502, a fallback or rethrowing.
   * @example const { result, error } = await meter.meteredCall(subject, { estimate, price, run: () => provider.translate(req), usage });
   */
  meteredCall<R extends { tokensIn: number; tokensOut: number; model: string }>(
    subject: MeterSubject,
    spec: MeteredCallSpec<R>,
  ): Promise<MeteredCall<R>>;
  /**
   * Frees reservations orphaned by a process that died between reserve and settle: on counter rows whose last
   * reservation is older than `olderThanMs` (every live reservation settles within one upstream timeout), whatever is
   * still reserved is released. Returns the number of counter rows released.
   */
  releaseOrphans(olderThanMs: number): Promise<number>;
}

/**
 * The metering module on `database`.
 * @example const meter = createMeter(database, { batching: true, metrics }); await meter.meteredCall(subject, spec);
 */
export function createMeter(database: Database, opts: MeterOptions = {}): Meter {
  const now = opts.now ?? Date.now;
  const metrics = opts.metrics;
  const batcher =
    opts.batching && database.kind === 'postgres'
      ? new Coalescer<MeterCall, AdmitOutcome | number>({
          batch: (calls) => runMeter(database, calls),
          single: (call) => runOne(database, call),
          maxInFlight: opts.maxInFlight ?? 1,
          maxBatch: opts.maxBatch ?? 256,
          onBatch: (size, calls) => {
            const admits = calls.filter((c) => c.admit).length;
            if (admits > 0) opts.onBatch?.('admit', admits);
            if (size - admits > 0) opts.onBatch?.('settle', size - admits);
          },
          onFallback: (error) => opts.onFallback?.(error),
        })
      : null;
  const submit = (call: MeterCall) => (batcher ? batcher.submit(call) : runOne(database, call));

  const reserve: Meter['reserve'] = async (subject, tokens, cost, at, gate) => {
    const period = periodStart(at, subject.periodDays);
    const day = utcDay(at);
    const windowStart = gate ? at - (at % gate.windowMs) : 0;
    const outcome = (await submit({
      admit: {
        bucket: gate?.bucket ?? null,
        windowStart,
        windowMs: gate?.windowMs ?? 0,
        limit: gate?.limit ?? 0,
        orgId: subject.orgId,
        period,
        tokens,
        quotaTokens: subject.quotaTokens,
        scope: subject.scope,
        day,
        costMicros: cost,
        capMicros: subject.capMicros,
      },
    })) as AdmitOutcome;
    if (gate) {
      const decision = decideRateLimit(outcome.hits, gate.limit, windowStart, gate.windowMs, at);
      gate.onDecision(decision);
      if (!decision.allowed) throw rateLimited(decision.retryAfterSeconds);
    }
    if (outcome.result === 'quota') throw quotaExceeded();
    if (outcome.result === 'budget') throw subject.orgId ? budgetExceeded() : playgroundBudgetExceeded();
    return { subject, period, day, tokens, costMicros: cost };
  };

  const settle: Meter['settle'] = async (reservation, actual, usage) => {
    const s = reservation.subject;
    return (await submit({
      settle: {
        orgId: s.orgId,
        period: reservation.period,
        reservedTokens: reservation.tokens,
        tokens: actual.tokens,
        quotaTokens: s.quotaTokens,
        scope: s.scope,
        day: reservation.day,
        reservedCostMicros: reservation.costMicros,
        costMicros: actual.costMicros,
        capMicros: s.capMicros,
        ...usage,
      },
    })) as number;
  };

  return {
    reserve,
    settle,
    async meteredCall<R extends { tokensIn: number; tokensOut: number; model: string }>(
      subject: MeterSubject,
      spec: MeteredCallSpec<R>,
    ): Promise<MeteredCall<R>> {
      const { estimate, price, usage } = spec;
      let reservation: Reservation;
      try {
        reservation = await reserve(
          subject,
          estimate.tokensIn + estimate.maxTokensOut,
          costMicros(estimate.tokensIn, estimate.maxTokensOut, price),
          now(),
          spec.gate,
        );
      } catch (e) {
        if (e instanceof AppError && e.status === 429) metrics?.rateLimited.inc({ route: spec.gate?.route ?? 'meter' });
        else if (e instanceof AppError) metrics?.meterRefusals.inc({ reason: e.code });
        throw e;
      }
      let result: R | null = null;
      let error: unknown;
      try {
        result = await spec.run();
      } catch (e) {
        error = e;
      }
      const tokensIn = result?.tokensIn ?? 0;
      const tokensOut = result?.tokensOut ?? 0;
      const charged = await settle(
        reservation,
        { tokens: tokensIn + tokensOut, costMicros: result ? costMicros(tokensIn, tokensOut, price) : 0 },
        {
          ...usage,
          model: result?.model ?? usage.model,
          tokensIn,
          tokensOut,
          outcome: result ? 'ok' : 'upstream_error',
        },
      );
      metrics?.upstreamCalls.inc({ kind: usage.kind, outcome: result ? 'ok' : 'error' });
      metrics?.tokens.inc({ direction: 'in' }, tokensIn);
      metrics?.tokens.inc({ direction: 'out' }, tokensOut);
      metrics?.spendMicros.inc({ kind: usage.kind }, charged);
      return { result, error, charged };
    },
    async releaseOrphans(olderThanMs) {
      const [row] = await database.query<{ n: number }>(
        'SELECT meter_release_orphans(make_interval(secs => $1::float8 / 1000)) AS n',
        [olderThanMs],
      );
      return Number(row?.n ?? 0);
    },
  };
}
