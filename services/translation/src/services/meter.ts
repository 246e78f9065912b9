// Metering: the plan quota (tokens per period) and the daily budget cap (micro-units, priced per model) are
// reserved atomically in PostgreSQL before an upstream call (`meter_reserve`) and settled after it with the
// provider's reported usage (`meter_settle`, which also records the usage event, in the same round trip).
import type { Database } from '../db/index.ts';
import { budgetExceeded, playgroundBudgetExceeded, quotaExceeded, rateLimited } from '../errors.ts';
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
const isoDay = (epochDay: number) => new Date(epochDay * DAY_MS).toISOString().slice(0, 10);

/** The UTC day of `now` (YYYY-MM-DD). */
export const utcDay = (now: number): string => isoDay(Math.floor(now / DAY_MS));

/** First UTC day of the quota period containing `now`; periods of `periodDays` are aligned on the Unix epoch. */
export function periodStart(now: number, periodDays: number): string {
  const day = Math.floor(now / DAY_MS);
  return isoDay(day - (day % periodDays));
}

/** What pays: an organization (quota + budget) or the public playground (budget only). */
export interface MeterSubject {
  orgId: string | null;
  /** Budget scope: `org:<id>` or `playground`. */
  scope: string;
  quotaTokens: number;
  periodDays: number;
  capMicros: number;
}

export interface Reservation {
  subject: MeterSubject;
  period: string;
  day: string;
  tokens: number;
  costMicros: number;
}

/**
 * A rate limit counted in the same round trip as the reservation (the translate route on PostgreSQL).
 * `onDecision` receives the window's state (for RateLimitRemaining) before any error is thrown.
 */
export interface RateLimitGate {
  bucket: string;
  limit: number;
  windowMs: number;
  onDecision(decision: RateLimitDecision): void;
}

/**
 * Reserves `tokens` and `cost` for `subject`, or throws the 402 error naming what is reached
 * (with a `gate`: first counts the rate-limit hit, and throws 429 over the limit without reserving).
 * @example const r = await reserve(db, subject, 1200, 900, Date.now());
 */
export async function reserve(
  database: Database,
  subject: MeterSubject,
  tokens: number,
  cost: number,
  now: number,
  gate?: RateLimitGate,
): Promise<Reservation> {
  const period = periodStart(now, subject.periodDays);
  const day = utcDay(now);
  const args = [subject.orgId, period, tokens, subject.quotaTokens, subject.scope, day, cost, subject.capMicros];
  let result: string | undefined;
  if (gate) {
    const windowStart = now - (now % gate.windowMs);
    const [row] = await database.query<{ hits: number; result: string }>(
      'SELECT hits, result FROM meter_admit($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)',
      [gate.bucket, windowStart, gate.windowMs, gate.limit, ...args],
      'meter_admit',
    );
    const decision = decideRateLimit(Number(row?.hits ?? 0), gate.limit, windowStart, gate.windowMs, now);
    gate.onDecision(decision);
    if (!decision.allowed) throw rateLimited(decision.retryAfterSeconds);
    result = row?.result;
  } else {
    const [row] = await database.query<{ r: string }>(
      'SELECT meter_reserve($1, $2, $3, $4, $5, $6, $7, $8) AS r',
      args,
      'meter_reserve',
    );
    result = row?.r;
  }
  if (result === 'quota') throw quotaExceeded();
  if (result === 'budget') throw subject.orgId ? budgetExceeded() : playgroundBudgetExceeded();
  return { subject, period, day, tokens, costMicros: cost };
}

export interface UsageRecord {
  apiKeyId: string | null;
  kind: 'translate' | 'judge' | 'playground';
  model: string;
  items: number;
  tokensIn: number;
  tokensOut: number;
  outcome: 'ok' | 'upstream_error';
}

const SETTLE_SQL = `
WITH s AS (SELECT * FROM meter_settle($1, $2, $3, $4, $5, $6, $7, $8, $9, $10))
INSERT INTO usage_events (org_id, api_key_id, kind, model, items, tokens_in, tokens_out, cost_micros, outcome)
SELECT $11, $12, $13, $14, $15, $16, $17, s.charged_micros, $18 FROM s
RETURNING cost_micros`;

/**
 * Releases `reservation` and charges the actual usage (0 releases everything), recording one usage event.
 * The charge never exceeds the headroom under the cap. Returns the micro-units charged.
 */
export async function settle(
  database: Database,
  reservation: Reservation,
  actual: { tokens: number; costMicros: number },
  usage: UsageRecord,
): Promise<number> {
  const s = reservation.subject;
  const params = [
    s.orgId,
    reservation.period,
    reservation.tokens,
    actual.tokens,
    s.quotaTokens,
    s.scope,
    reservation.day,
    reservation.costMicros,
    actual.costMicros,
    s.capMicros,
    s.orgId,
    usage.apiKeyId,
    usage.kind,
    usage.model,
    usage.items,
    usage.tokensIn,
    usage.tokensOut,
    usage.outcome,
  ];
  // A settlement that cannot be written leaves the reservation held (limits stay safe, capacity shrinks):
  // retry briefly before giving up.
  for (let attempt = 1; ; attempt++) {
    try {
      const [row] = await database.query<{ cost_micros: number }>(SETTLE_SQL, params, 'meter_settle');
      return Number(row?.cost_micros ?? 0);
    } catch (error) {
      if (attempt >= 3) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    }
  }
}

/**
 * Frees reservations orphaned by a process that died between reserve and settle: on counter rows whose last
 * reservation is older than `olderThanMs` (every live reservation settles within one upstream timeout), whatever is
 * still reserved is released. Returns the number of counter rows released.
 */
export async function releaseOrphanedReservations(database: Database, olderThanMs: number): Promise<number> {
  const [row] = await database.query<{ n: number }>(
    'SELECT meter_release_orphans(make_interval(secs => $1::float8 / 1000)) AS n',
    [olderThanMs],
  );
  return Number(row?.n ?? 0);
}

/** What a metered upstream call gave: its result, or the error it threw, and the micro-units charged. */
export interface SettledCall<R> {
  result: R | null;
  error: unknown;
  charged: number;
}

/**
 * Runs `call` under `reservation`, then settles with the usage it reports (a failed call releases everything).
 * Never throws what `call` threw: the caller decides between a 502, a fallback or rethrowing.
 */
export async function callAndSettle<R extends { tokensIn: number; tokensOut: number; model: string }>(
  database: Database,
  reservation: Reservation,
  price: Price,
  usage: Pick<UsageRecord, 'apiKeyId' | 'kind' | 'model' | 'items'>,
  call: () => Promise<R>,
): Promise<SettledCall<R>> {
  let result: R | null = null;
  let error: unknown;
  try {
    result = await call();
  } catch (e) {
    error = e;
  }
  const tokensIn = result?.tokensIn ?? 0;
  const tokensOut = result?.tokensOut ?? 0;
  const charged = await settle(
    database,
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
  return { result, error, charged };
}
