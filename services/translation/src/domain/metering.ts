// The metering model: who pays for a call (an organization's quota and budget, or the playground's budget), what a
// call costs, the quota period and the budget day, and the records a reservation and a settlement are made of; and
// the `Meter` port every use case meters through (`ctx.meter`, implemented in infra/meter.ts on PostgreSQL's `meter`
// function). Pure: no I/O, no import but types.

/** The state of a rate-limit window after one more hit. */
export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  /** Requests left in this window (never negative). */
  remaining: number;
  /** Whole seconds until the window frees up (at least 1). */
  retryAfterSeconds: number;
}

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
