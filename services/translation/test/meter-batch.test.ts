// Group commit of metering on real PostgreSQL: a batch gives each request exactly the outcome the requests would
// have one after the other, settles with one usage event each, never deadlocks against another replica's batches,
// and one bad request in a batch does not fail the others.
import { createTestDatabase, type TestDatabase } from '@scriptorium/test-support';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Database, migrate, openDatabase } from '../src/db/index.ts';
import { createOrganization, ensureUser } from '../src/domain/accounts.ts';
import type { MeterSubject, RateLimitGate, Reservation } from '../src/domain/metering.ts';
import { createMeter } from '../src/infra/meter.ts';

let testDb: TestDatabase;
let setup: Database;
/** The same metering without batching: each call alone, one after the other. */
let sequentialMeter: ReturnType<typeof createMeter>;
const now = Date.parse('2026-11-22T10:00:00Z');

/** A database handle with batching on, recording batch sizes and fallbacks. */
async function replica() {
  const database = await openDatabase(testDb.url, { poolMax: 4 });
  const batches: { kind: string; size: number }[] = [];
  const fallbacks: unknown[] = [];
  const meter = createMeter(database, {
    batching: true,
    onBatch: (kind, size) => batches.push({ kind, size }),
    onFallback: (error) => fallbacks.push(error),
  });
  return { database, meter, batches, fallbacks };
}

async function org(name: string, quotaTokens: number, capMicros: number): Promise<MeterSubject> {
  const userId = await ensureUser(setup, `${name}@example.com`);
  const orgId = await createOrganization(setup, { name, planId: 'free', ownerId: userId });
  return { orgId, scope: `org:${orgId}`, quotaTokens, periodDays: 30, capMicros };
}

const outcome = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: { code?: string; status?: number }) => `${e.status}:${e.code}`,
  );

async function counters(subject: MeterSubject) {
  const [q] = await setup.query<{ used: number; reserved: number }>(
    'SELECT used_tokens AS used, reserved_tokens AS reserved FROM quota_usage WHERE org_id = $1',
    [subject.orgId],
  );
  const [b] = await setup.query<{ spent: number; reserved: number }>(
    'SELECT spent_micros AS spent, reserved_micros AS reserved FROM budget_usage WHERE scope = $1',
    [subject.scope],
  );
  const [e] = await setup.query<{ n: number; sum: number }>(
    'SELECT count(*)::int AS n, COALESCE(sum(cost_micros), 0)::int AS sum FROM usage_events WHERE org_id = $1',
    [subject.orgId],
  );
  return { quota: q, budget: b, events: e };
}

const usage = { apiKeyId: null, kind: 'translate' as const, model: 'm', items: 1, outcome: 'ok' as const };

beforeAll(async () => {
  testDb = await createTestDatabase(inject('postgresUrl'), 'meter_batch');
  setup = await openDatabase(testDb.url, { poolMax: 2 });
  await migrate(setup);
  sequentialMeter = createMeter(setup);
});
afterAll(async () => {
  await setup?.close();
  await testDb?.drop();
});

describe('metering batches (group commit)', () => {
  // Quota 90 tokens and budget 700 (7 reservations of 100): the quota refuses first (request 3 takes 50 tokens).
  // Quota 1e6 and budget 450: the budget refuses from the 5th on, undoing each refused request's quota reservation.
  // Both with a rate limit of 8 per window; then quota 90 and budget 450 without a rate limit (a request without a
  // gate only reserves): the budget refuses first, after a request that fits the quota exactly.
  for (const [quota, cap, gated] of [
    [90, 700, true],
    [1e6, 450, true],
    [90, 450, false],
  ] as const) {
    it(`a batch answers each request as the same requests one after the other would (quota ${quota}, cap ${cap}${gated ? ', rate limit 8' : ''})`, async () => {
      const r = await replica();
      try {
        const batched = await org(`batched-${quota}-${cap}-${gated}`, quota, cap);
        const sequential = await org(`sequential-${quota}-${cap}-${gated}`, quota, cap);
        const gate = (bucket: string, decisions: number[]): RateLimitGate | undefined =>
          gated
            ? { bucket, limit: 8, windowMs: 60_000, onDecision: (d) => void decisions.push(d.remaining) }
            : undefined;
        const tokens = (i: number) => (i === 3 ? 50 : 10);
        const batchedRemaining: number[] = [];
        const got = await Promise.all(
          Array.from({ length: 12 }, (_, i) =>
            outcome(r.meter.reserve(batched, tokens(i), 100, now, gate(`b:${batched.orgId}`, batchedRemaining))),
          ),
        );
        const sequentialRemaining: number[] = [];
        const want: string[] = [];
        for (let i = 0; i < 12; i++) {
          want.push(
            await outcome(
              sequentialMeter.reserve(
                sequential,
                tokens(i),
                100,
                now,
                gate(`s:${sequential.orgId}`, sequentialRemaining),
              ),
            ),
          );
        }
        expect(r.batches.filter((b) => b.kind === 'admit' && b.size > 1).length).toBeGreaterThan(0);
        expect(r.fallbacks).toEqual([]);
        expect(got).toEqual(want);
        expect(want).toContain(cap === 700 ? '402:quota_exceeded' : '402:budget_exceeded');
        if (gated) expect(want).toContain('429:rate_limited');
        expect(batchedRemaining.sort()).toEqual(sequentialRemaining.sort());
        const [cb, cs] = [await counters(batched), await counters(sequential)];
        expect(cb.quota).toEqual(cs.quota);
        expect(cb.budget).toEqual(cs.budget);
      } finally {
        await r.database.close();
      }
    });
  }

  it('a lone call is sent alone at once, one side of the statement: its hit, reservation and usage event all written', async () => {
    const r = await replica();
    try {
      const subject = await org('lone', 1_000, 1_000);
      const decisions: number[] = [];
      const bucket = `lone:${subject.orgId}`;
      const gate: RateLimitGate = {
        bucket,
        limit: 5,
        windowMs: 60_000,
        onDecision: (d) => void decisions.push(d.remaining),
      };
      const held = await r.meter.reserve(subject, 100, 300, now, gate);
      expect(r.batches).toEqual([{ kind: 'admit', size: 1 }]);
      expect(decisions).toEqual([4]);
      expect(await counters(subject)).toMatchObject({
        quota: { used: 0, reserved: 100 },
        budget: { spent: 0, reserved: 300 },
      });
      // Without a gate an admission touches no rate-limit window.
      const ungated = await r.meter.reserve(subject, 10, 10, now);
      const windows = await setup.query<{ bucket: string; count: number }>(
        'SELECT bucket, count FROM rate_limit_windows WHERE bucket LIKE $1',
        [`%${subject.orgId}`],
      );
      expect(windows).toEqual([{ bucket, count: 1 }]);
      const charged = await r.meter.settle(
        held,
        { tokens: 80, costMicros: 250 },
        { ...usage, tokensIn: 50, tokensOut: 30 },
      );
      await r.meter.settle(
        ungated,
        { tokens: 0, costMicros: 0 },
        { ...usage, tokensIn: 0, tokensOut: 0, outcome: 'upstream_error' },
      );
      expect(charged).toBe(250);
      expect(r.batches).toEqual([
        { kind: 'admit', size: 1 },
        { kind: 'admit', size: 1 },
        { kind: 'settle', size: 1 },
        { kind: 'settle', size: 1 },
      ]);
      expect(r.fallbacks).toEqual([]);
      expect(await counters(subject)).toEqual({
        quota: { used: 80, reserved: 0 },
        budget: { spent: 250, reserved: 0 },
        events: { n: 2, sum: 250 },
      });
    } finally {
      await r.database.close();
    }
  });

  it('settles a batch: every reservation released, the charge capped, one usage event per request', async () => {
    const r = await replica();
    try {
      const subject = await org('settle', 1_000_000, 1_000);
      const reservations = (
        await Promise.all(Array.from({ length: 8 }, () => r.meter.reserve(subject, 100, 100, now).catch(() => null)))
      ).filter((x): x is Reservation => x !== null);
      expect(reservations).toHaveLength(8);
      // Each reports 150 micro-units, more than it reserved: a charge never eats the headroom still reserved by the
      // others, so in order: 150 while it fits, then 100 (its own reservation) each; the total stops at the cap.
      const charged = await Promise.all(
        reservations.map((res) =>
          r.meter.settle(res, { tokens: 90, costMicros: 150 }, { ...usage, tokensIn: 60, tokensOut: 30 }),
        ),
      );
      expect(r.batches.filter((b) => b.kind === 'settle' && b.size > 1).length).toBeGreaterThan(0);
      expect(r.fallbacks).toEqual([]);
      expect(charged.reduce((a, b) => a + b, 0)).toBe(1_000);
      expect(charged).toEqual([150, 150, 150, 150, 100, 100, 100, 100]);
      const c = await counters(subject);
      expect(c.budget).toEqual({ spent: 1_000, reserved: 0 });
      expect(c.quota).toEqual({ used: 720, reserved: 0 });
      expect(c.events).toEqual({ n: 8, sum: 1_000 });
    } finally {
      await r.database.close();
    }
  });

  it('settlements and admissions that arrive together share one statement, the settlements first', async () => {
    const r = await replica();
    try {
      const subject = await org('mixed', 1e9, 500);
      const held = await Promise.all(Array.from({ length: 5 }, () => r.meter.reserve(subject, 10, 100, now)));
      const before = r.batches.length;
      // In one turn: five settlements (50 each: 250 spent, the 500 reserved released), then four admissions of 100.
      const [charged, admitted] = await Promise.all([
        Promise.all(
          held.map((res) =>
            r.meter.settle(res, { tokens: 5, costMicros: 50 }, { ...usage, tokensIn: 3, tokensOut: 2 }),
          ),
        ),
        Promise.all(Array.from({ length: 4 }, () => outcome(r.meter.reserve(subject, 10, 100, now)))),
      ]);
      expect(r.batches.slice(before)).toEqual([
        { kind: 'admit', size: 4 },
        { kind: 'settle', size: 5 },
      ]);
      expect(r.fallbacks).toEqual([]);
      expect(charged).toEqual([50, 50, 50, 50, 50]);
      expect(admitted).toEqual(['ok', 'ok', '402:budget_exceeded', '402:budget_exceeded']);
      const c = await counters(subject);
      expect(c.budget).toEqual({ spent: 250, reserved: 200 });
      expect(c.events).toEqual({ n: 5, sum: 250 });
    } finally {
      await r.database.close();
    }
  });

  it('two replicas batching over the same organizations in opposite orders never deadlock or overspend', async () => {
    const [a, b] = [await replica(), await replica()];
    try {
      const orgs = [await org('x1', 1e9, 40_000), await org('x2', 1e9, 40_000), await org('x3', 1e9, 40_000)];
      const round = (meter: ReturnType<typeof createMeter>, order: MeterSubject[]) =>
        Promise.all(
          Array.from({ length: 30 }, async (_, i) => {
            const subject = order[i % order.length]!;
            const res = await meter.reserve(subject, 10, 500, now).catch(() => null);
            if (res) await meter.settle(res, { tokens: 10, costMicros: 400 }, { ...usage, tokensIn: 5, tokensOut: 5 });
          }),
        );
      for (let i = 0; i < 6; i++) await Promise.all([round(a.meter, orgs), round(b.meter, [...orgs].reverse())]);
      expect(a.fallbacks).toEqual([]);
      expect(b.fallbacks).toEqual([]);
      for (const subject of orgs) {
        const c = await counters(subject);
        expect(c.budget!.reserved).toBe(0);
        expect(c.budget!.spent).toBeLessThanOrEqual(40_000);
        expect(c.events?.sum).toBe(c.budget!.spent);
      }
    } finally {
      await a.database.close();
      await b.database.close();
    }
  });

  it('one bad request in a batch fails alone: the others go through one by one', async () => {
    const r = await replica();
    try {
      const good = await org('good', 1e9, 1e9);
      // No such organization: its quota row violates the foreign key, so the batch statement fails as a whole.
      const missing: MeterSubject = { ...good, orgId: 'no-such-org', scope: 'org:no-such-org' };
      const got = await Promise.all([
        outcome(r.meter.reserve(good, 10, 10, now)),
        outcome(r.meter.reserve(missing, 10, 10, now)),
        outcome(r.meter.reserve(good, 10, 10, now)),
      ]);
      expect(got[0]).toBe('ok');
      expect(got[1]).not.toBe('ok');
      expect(got[2]).toBe('ok');
      expect(r.fallbacks).toHaveLength(1);
      expect((await counters(good)).budget).toEqual({ spent: 0, reserved: 20 });
    } finally {
      await r.database.close();
    }
  });
});
