// Metering: the plan quota (tokens per period) and the daily budget cap (micro-units, priced per model) are reserved
// atomically in PostgreSQL before an upstream call and settled after it with the provider's reported usage.
//
// Every metered call goes through `meter.meteredCall(subject, {estimate, price, run, usage})`: translate, its retry,
// the judge and the playground. The counters' arithmetic lives in ONE place, the SQL function `meter` (migration
// 0000_init.sql, where it is documented; its current text 0002_meter_one_side.sql); this module prices the calls (`costMicros`), picks the
// quota period and the budget day, and sends the calls to `meter` as named JSON objects (`Admission`, `Settlement`:
// their field names are the function's column names). Concurrent calls share one statement (group commit, see
// `createMeter`), each decided exactly as if the calls had come one after the other.
import type { Metrics } from '../context.ts';
import type { Database } from '../db/index.ts';
import {
  type Admission,
  costMicros,
  type Meter,
  type MeteredCall,
  type MeteredCallSpec,
  type MeterSubject,
  periodStart,
  type Reservation,
  type Settlement,
  utcDay,
} from '../domain/metering.ts';
import { AppError, budgetExceeded, playgroundBudgetExceeded, quotaExceeded, rateLimited } from '../errors.ts';
import { Coalescer } from './coalescer.ts';
import { decideRateLimit } from './rate-limiter.ts';

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
