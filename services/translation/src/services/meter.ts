// Metering: the plan quota (tokens per period) and the daily budget cap (micro-units, priced per model) are
// reserved atomically in PostgreSQL before an upstream call (`meter_reserve`) and settled after it with the
// provider's reported usage (`meter_settle`, which also records the usage event, in the same round trip).
// With batching enabled (`enableMeterBatching`, on PostgreSQL), concurrent admissions and settlements are coalesced:
// one statement per batch for both kinds (`meter_batch`), each request's outcome exactly as if the batch's requests
// had come one after the other.
import type { Database } from '../db/index.ts';
import { budgetExceeded, playgroundBudgetExceeded, quotaExceeded, rateLimited } from '../errors.ts';
import { Coalescer } from './coalescer.ts';
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
  const windowStart = gate ? now - (now % gate.windowMs) : 0;
  const args: AdmitArgs = [
    gate?.bucket ?? null,
    windowStart,
    gate?.windowMs ?? 0,
    gate?.limit ?? 0,
    subject.orgId,
    period,
    tokens,
    subject.quotaTokens,
    subject.scope,
    day,
    cost,
    subject.capMicros,
  ];
  const batcher = batchers.get(database);
  const row = batcher ? ((await batcher.submit({ admit: args })) as AdmitRow) : await admitOne(database, args);
  if (gate) {
    const decision = decideRateLimit(row.hits, gate.limit, windowStart, gate.windowMs, now);
    gate.onDecision(decision);
    if (!decision.allowed) throw rateLimited(decision.retryAfterSeconds);
  }
  if (row.result === 'quota') throw quotaExceeded();
  if (row.result === 'budget') throw subject.orgId ? budgetExceeded() : playgroundBudgetExceeded();
  return { subject, period, day, tokens, costMicros: cost };
}

/** meter_admit's arguments: bucket (null: no rate limit), window start, window ms, limit, then meter_reserve's. */
type AdmitArgs = [
  bucket: string | null,
  windowStart: number,
  windowMs: number,
  limit: number,
  orgId: string | null,
  period: string,
  tokens: number,
  quotaTokens: number,
  scope: string,
  day: string,
  cost: number,
  capMicros: number,
];

interface AdmitRow {
  /** Hits counted in the rate-limit window (0 without a rate limit). */
  hits: number;
  /** ok, quota, budget or rate_limited. */
  result: string;
}

async function admitOne(database: Database, args: AdmitArgs): Promise<AdmitRow> {
  if (args[0] !== null) {
    const [row] = await database.query<{ hits: number; result: string }>(
      'SELECT hits, result FROM meter_admit($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)',
      args,
      'meter_admit',
    );
    return { hits: Number(row?.hits ?? 0), result: row?.result ?? '' };
  }
  const [row] = await database.query<{ r: string }>(
    'SELECT meter_reserve($1, $2, $3, $4, $5, $6, $7, $8) AS r',
    args.slice(4),
    'meter_reserve',
  );
  return { hits: 0, result: row?.r ?? '' };
}

/** Calls as rows of arguments → one array per argument (the batch functions take arrays). */
function columns(calls: unknown[][], n: number): unknown[][] {
  const out: unknown[][] = Array.from({ length: n }, () => new Array(calls.length));
  for (let i = 0; i < calls.length; i++) {
    const call = calls[i]!;
    for (let j = 0; j < n; j++) out[j]![i] = call[j];
  }
  return out;
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

/** meter_settle's ten arguments, then the usage event's (the organization is the first argument). */
type SettleArgs = [
  orgId: string | null,
  period: string,
  reservedTokens: number,
  tokens: number,
  quotaTokens: number,
  scope: string,
  day: string,
  reservedCost: number,
  cost: number,
  capMicros: number,
  apiKeyId: string | null,
  kind: string,
  model: string,
  items: number,
  tokensIn: number,
  tokensOut: number,
  outcome: string,
];

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
  const args: SettleArgs = [
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
    usage.apiKeyId,
    usage.kind,
    usage.model,
    usage.items,
    usage.tokensIn,
    usage.tokensOut,
    usage.outcome,
  ];
  const batcher = batchers.get(database);
  return batcher ? ((await batcher.submit({ settle: args })) as number) : settleOne(database, args);
}

async function settleOne(database: Database, args: SettleArgs): Promise<number> {
  const params = [...args.slice(0, 10), args[0], ...args.slice(10)]; // $11: the usage event's org_id
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

/** One call of a metering batch: an admission or a settlement. */
type MeterCall = { admit: AdmitArgs; settle?: undefined } | { settle: SettleArgs; admit?: undefined };

const BATCH_SQL = `SELECT kind, hits, result, charged_micros FROM meter_batch(
  $1::text[], $2::bigint[], $3::int[], $4::int[], $5::text[], $6::date[], $7::bigint[], $8::bigint[], $9::text[],
  $10::date[], $11::bigint[], $12::bigint[],
  $13::text[], $14::date[], $15::bigint[], $16::bigint[], $17::bigint[], $18::text[], $19::date[], $20::bigint[],
  $21::bigint[], $22::bigint[], $23::text[], $24::text[], $25::text[], $26::int[], $27::int[], $28::int[], $29::text[])`;

interface BatchRow {
  kind: string;
  hits: number | null;
  result: string | null;
  charged_micros: number | null;
}

/** One statement for a batch of admissions and settlements (meter_batch: settlements first, then admissions). */
async function runBatch(database: Database, calls: MeterCall[]): Promise<(AdmitRow | number)[]> {
  const admits: AdmitArgs[] = [];
  const settles: SettleArgs[] = [];
  for (const c of calls) {
    if (c.admit) admits.push(c.admit);
    else settles.push(c.settle);
  }
  const rows = await database.query<BatchRow>(
    BATCH_SQL,
    [...columns(admits, 12), ...columns(settles, 17)],
    'meter_batch',
  );
  if (rows.length !== calls.length) return [];
  let s = 0;
  let a = settles.length;
  return calls.map((c) => {
    const row = c.admit ? rows[a++]! : rows[s++]!;
    return c.admit ? { hits: Number(row.hits ?? 0), result: row.result ?? '' } : Number(row.charged_micros ?? 0);
  });
}

const batchers = new WeakMap<Database, Coalescer<MeterCall, AdmitRow | number>>();

/**
 * Coalesces concurrent reservations and settlements on `database` (PostgreSQL only; a no-op on PGlite, which
 * has one connection). Admissions and settlements that arrive together share ONE statement (`meter_batch`). At most
 * `maxInFlight` batches are in flight (default 1: the classic group commit, where a batch holds everything that
 * arrived during the previous one — PostgreSQL's cost per request falls with the batch size); a batch of one uses the
 * single statements. `onBatch` sees how many admissions and settlements each batch sent; `onFallback` each batch that
 * failed as a whole (its calls then run one by one, so one bad call cannot fail the others).
 */
export function enableMeterBatching(
  database: Database,
  opts: {
    maxInFlight?: number;
    maxBatch?: number;
    onBatch?(kind: 'admit' | 'settle', size: number): void;
    onFallback?(error: unknown): void;
  } = {},
): void {
  if (database.kind !== 'postgres' || batchers.has(database)) return;
  batchers.set(
    database,
    new Coalescer<MeterCall, AdmitRow | number>({
      batch: (calls) => runBatch(database, calls),
      single: (call) => (call.admit ? admitOne(database, call.admit) : settleOne(database, call.settle)),
      maxInFlight: opts.maxInFlight ?? 1,
      maxBatch: opts.maxBatch ?? 256,
      onBatch: (size, calls) => {
        const admits = calls.filter((c) => c.admit).length;
        if (admits > 0) opts.onBatch?.('admit', admits);
        if (size - admits > 0) opts.onBatch?.('settle', size - admits);
      },
      onFallback: (error) => opts.onFallback?.(error),
    }),
  );
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
