import { quorumSize, type ValidatorChange } from '@scriptorium/ledger-protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type DesiredValidator,
  type ExternalValidator,
  isChangeApplied,
  type MembershipAction,
  type MembershipInput,
  type ObservedMember,
  planMembership,
} from './membership.ts';

const key = (i: number) => i.toString(16).repeat(64);
const EXT = 'e'.repeat(64);
const NOW = new Date('2026-11-22T10:00:00Z');
const H = 20;
const desired = (...ids: number[]): DesiredValidator[] => ids.map((i) => ({ name: `v${i}`, publicKey: key(i) }));
const member = (i: number, over: Partial<ObservedMember> = {}): ObservedMember => ({
  name: `v${i}`,
  publicKey: key(i),
  ready: true,
  height: H,
  ...over,
});
const chain = (...ids: number[]) => ({ height: H, validators: ids.map(key) });
const base = (over: Partial<MembershipInput>): MembershipInput => ({
  desired: desired(0, 1, 2, 3),
  members: [0, 1, 2, 3].map((i) => member(i)),
  chain: chain(0, 1, 2, 3),
  now: NOW,
  ...over,
});
const ago = (ms: number) => new Date(NOW.getTime() - ms);

describe('planMembership', () => {
  const cases: [string, Partial<MembershipInput>, MembershipAction | RegExp][] = [
    ['no chain status → wait', { chain: undefined }, /no ledger node answered/],
    ['steady state → none', {}, { type: 'none' }],
    [
      'fresh cluster, nodes still starting → none (genesis holds them)',
      { members: [0, 1, 2, 3].map((i) => member(i, { ready: false, height: 0 })) },
      { type: 'none' },
    ],
    [
      'scale up: the new node is ready and caught up → ADD via the first validator',
      {
        desired: desired(0, 1, 2, 3, 4),
        members: [0, 1, 2, 3, 4].map((i) => member(i, i === 4 ? { height: H - 1 } : {})),
      },
      { type: 'submit', change: { action: 'ADD', validator: key(4) }, via: 'v0', resubmission: false },
    ],
    [
      'scale up: the new node is not ready → wait',
      {
        desired: desired(0, 1, 2, 3, 4),
        members: [...[0, 1, 2, 3].map((i) => member(i)), member(4, { ready: false })],
      },
      /v4: not ready or not caught up/,
    ],
    [
      'scale up: the new node lags more than one block → wait',
      {
        desired: desired(0, 1, 2, 3, 4),
        members: [...[0, 1, 2, 3].map((i) => member(i)), member(4, { height: H - 2 })],
      },
      /v4: not ready or not caught up \(height 18 of 20\)/,
    ],
    ['scale up: no workload yet → wait', { desired: desired(0, 1, 2, 3, 4) }, /v4: no workload yet/],
    [
      'retire any one (v1) → REMOVE via v0',
      { desired: desired(0, 2, 3) },
      { type: 'submit', change: { action: 'REMOVE', validator: key(1) }, via: 'v0', resubmission: false },
    ],
    [
      'retire v0 → REMOVE submitted through another node',
      { desired: desired(1, 2, 3) },
      { type: 'submit', change: { action: 'REMOVE', validator: key(0) }, via: 'v1', resubmission: false },
    ],
    [
      'retired v1 still listed while its REMOVE is pending → wait, workload kept',
      {
        desired: desired(0, 2, 3),
        pending: { change: { action: 'REMOVE', validator: key(1) }, via: 'v0', submittedAt: ago(5000) },
      },
      /REMOVE v1 submitted, not finalized yet/,
    ],
    [
      'chain no longer lists retired v1 → delete its workload',
      {
        desired: desired(0, 2, 3),
        chain: chain(0, 2, 3),
        pending: { change: { action: 'REMOVE', validator: key(1) }, via: 'v0', submittedAt: ago(5000) },
      },
      { type: 'deleteWorkload', name: 'v1' },
    ],
    [
      'quorum guard: retiring healthy v1 while v2 is down would leave 2 of 3 → wait',
      { desired: desired(0, 2, 3), members: [0, 1, 2, 3].map((i) => member(i, i === 2 ? { ready: false } : {})) },
      /removing v1 would leave 2 healthy of 3 validators \(quorum 3\)/,
    ],
    [
      'retiring the one that is down is allowed (3 healthy of 3)',
      { desired: desired(0, 1, 2), members: [0, 1, 2, 3].map((i) => member(i, i === 3 ? { ready: false } : {})) },
      { type: 'submit', change: { action: 'REMOVE', validator: key(3) }, via: 'v0', resubmission: false },
    ],
    [
      'a stalled chain (3 healthy of 5, quorum 4): no change, even one that would restore a quorum',
      {
        desired: desired(0, 1, 2),
        chain: chain(0, 1, 2, 3, 4),
        members: [0, 1, 2, 3, 4].map((i) => member(i, i >= 3 ? { ready: false } : {})),
      },
      /3 healthy of 5 validators \(quorum 4\): no change can be finalized/,
    ],
    [
      'two to remove: the unhealthy one goes first',
      {
        desired: desired(0, 1, 2),
        chain: chain(0, 1, 2, 3, 4),
        members: [0, 1, 2, 3, 4].map((i) => member(i, i === 4 ? { ready: false } : {})),
      },
      { type: 'submit', change: { action: 'REMOVE', validator: key(4) }, via: 'v0', resubmission: false },
    ],
    [
      'ADD pending within the timeout → wait',
      {
        desired: desired(0, 1, 2, 3, 4),
        members: [0, 1, 2, 3, 4].map((i) => member(i)),
        pending: { change: { action: 'ADD', validator: key(4) }, via: 'v0', submittedAt: ago(59_000) },
      },
      /ADD v4 submitted, not finalized yet/,
    ],
    [
      'ADD pending past the timeout → resubmitted through another node',
      {
        desired: desired(0, 1, 2, 3, 4),
        members: [0, 1, 2, 3, 4].map((i) => member(i)),
        pending: { change: { action: 'ADD', validator: key(4) }, via: 'v0', submittedAt: ago(60_000) },
      },
      { type: 'submit', change: { action: 'ADD', validator: key(4) }, via: 'v1', resubmission: true },
    ],
    [
      'ADD pending past the timeout but the node is no longer ready → wait',
      {
        desired: desired(0, 1, 2, 3, 4),
        members: [0, 1, 2, 3, 4].map((i) => member(i, i === 4 ? { ready: false } : {})),
        pending: { change: { action: 'ADD', validator: key(4) }, submittedAt: ago(120_000) },
      },
      /not ready to resubmit/,
    ],
    [
      'applied pending change → next step (none)',
      {
        desired: desired(0, 1, 2, 3, 4),
        members: [0, 1, 2, 3, 4].map((i) => member(i)),
        chain: chain(0, 1, 2, 3, 4),
        pending: { change: { action: 'ADD', validator: key(4) }, submittedAt: ago(1000) },
      },
      { type: 'none' },
    ],
    [
      'lapsed ADD no longer wanted: its workload is kept, nothing else to do → wait',
      {
        members: [0, 1, 2, 3, 4].map((i) => member(i)),
        pending: { change: { action: 'ADD', validator: key(4) }, submittedAt: ago(120_000) },
      },
      /ADD v4 lapsed and is no longer wanted/,
    ],
    [
      'lapsed ADD no longer wanted whose workload is gone → none',
      { pending: { change: { action: 'ADD', validator: key(4) }, submittedAt: ago(120_000) } },
      { type: 'none' },
    ],
    [
      'external validator not probed counts as unhealthy: retiring v1 still leaves 3 of 4',
      {
        desired: desired(0, 2, 3),
        external: [{ publicKey: EXT }],
        chain: { height: H, validators: [...chain(0, 1, 2, 3).validators, EXT] },
      },
      { type: 'submit', change: { action: 'REMOVE', validator: key(1) }, via: 'v0', resubmission: false },
    ],
    [
      'external unhealthy + v2 down: 3 healthy of 5 is below quorum 4 → wait',
      {
        desired: desired(0, 2, 3),
        external: [{ publicKey: EXT }],
        chain: { height: H, validators: [...chain(0, 1, 2, 3).validators, EXT] },
        members: [0, 1, 2, 3].map((i) => member(i, i === 2 ? { ready: false } : {})),
      },
      /3 healthy of 5 validators \(quorum 4\): no change can be finalized/,
    ],
    [
      'external validator missing from the chain and observed ready → ADD',
      { external: [{ publicKey: EXT, ready: true, height: H }] },
      { type: 'submit', change: { action: 'ADD', validator: EXT }, via: 'v0', resubmission: false },
    ],
    [
      'external validator missing and not observed → wait',
      { external: [{ publicKey: EXT }] },
      /external eeeeeeee…: not ready/,
    ],
    [
      'every validator down, only the new node healthy → wait',
      {
        desired: desired(0, 1, 2, 3, 4),
        members: [0, 1, 2, 3, 4].map((i) => member(i, i < 4 ? { ready: false } : {})),
      },
      /0 healthy of 4 validators/,
    ],
    [
      'joining a chain only another organization validates: ADD through a healthy follower of ours',
      {
        desired: desired(0, 1, 2, 3, 4),
        external: [{ publicKey: EXT, ready: true, height: H }],
        chain: { height: H, validators: [EXT] },
        members: [0, 1, 2, 3, 4].map((i) => member(i, i === 4 ? {} : { ready: false })),
      },
      { type: 'submit', change: { action: 'ADD', validator: key(4) }, via: 'v4', resubmission: false },
    ],
    [
      'no healthy node of ours at all (only externals healthy) → wait',
      {
        desired: desired(0, 1, 2, 3, 4),
        external: [{ publicKey: EXT, ready: true, height: H }],
        chain: { height: H, validators: [EXT] },
        members: [0, 1, 2, 3, 4].map((i) => member(i, { ready: false })),
      },
      /v4: not ready or not caught up/,
    ],
    [
      'an unknown key in the active set is left alone (and counts as unhealthy)',
      { chain: { height: H, validators: [...chain(0, 1, 2, 3).validators, key(9)] } },
      { type: 'none' },
    ],
    [
      'duplicate key → wait, never a guess',
      { desired: [...desired(0, 1, 2, 3), { name: 'v9', publicKey: key(0) }] },
      /appears twice/,
    ],
    [
      'a member never added and no longer wanted → delete its workload',
      { members: [0, 1, 2, 3, 5].map((i) => member(i, i === 5 ? { ready: false } : {})) },
      { type: 'deleteWorkload', name: 'v5' },
    ],
  ];

  it.each(cases)('%s', (_name, over, expected) => {
    const action = planMembership(base(over));
    if (expected instanceof RegExp) {
      expect(action.type).toBe('wait');
      expect(action.type === 'wait' ? action.reason : '').toMatch(expected);
    } else expect(action).toEqual(expected);
  });

  it('isChangeApplied', () => {
    expect(isChangeApplied({ action: 'ADD', validator: key(1) }, [key(1)])).toBe(true);
    expect(isChangeApplied({ action: 'ADD', validator: key(1) }, [])).toBe(false);
    expect(isChangeApplied({ action: 'REMOVE', validator: key(1) }, [])).toBe(true);
    expect(isChangeApplied({ action: 'REMOVE', validator: key(1) }, [key(1)])).toBe(false);
  });
});

// ---- properties -------------------------------------------------------------------------------------------

const healthyKeys = (input: MembershipInput): Set<string> => {
  const h = input.chain?.height ?? 0;
  const out = new Set<string>();
  for (const m of input.members) if (m.ready && m.height !== undefined && m.height >= h - 1) out.add(m.publicKey);
  for (const e of input.external ?? [])
    if (e.ready === true && (e.height === undefined || e.height >= h - 1)) out.add(e.publicKey);
  return out;
};

/** Checks one plan against the rules, computed independently of the planner. */
function checkPlan(input: MembershipInput, action: MembershipAction): void {
  const active = new Set(input.chain?.validators ?? []);
  const healthy = healthyKeys(input);
  const wanted = new Set([...input.desired.map((d) => d.publicKey), ...(input.external ?? []).map((e) => e.publicKey)]);
  const pending = input.pending;
  const pendingOpen = pending && input.chain && !isChangeApplied(pending.change, input.chain.validators);
  if (action.type === 'submit') {
    expect(input.chain).toBeDefined();
    const { change } = action;
    expect(isChangeApplied(change, [...active])).toBe(false);
    // One change at a time: with a change in flight, only that same change may be (re)submitted, after the timeout.
    if (pendingOpen && pending) {
      const lapsed = input.now.getTime() - pending.submittedAt.getTime() >= (input.resubmitAfterMs ?? 60_000);
      if (!lapsed) expect.unreachable('submitted while a change is in flight');
    }
    const after = new Set(active);
    if (change.action === 'ADD') after.add(change.validator);
    else after.delete(change.validator);
    expect([...active].filter((k) => healthy.has(k)).length).toBeGreaterThanOrEqual(quorumSize(active.size));
    const healthyAfter = [...after].filter((k) => healthy.has(k)).length;
    expect(healthyAfter).toBeGreaterThanOrEqual(quorumSize(after.size));
    expect(after.size).toBeGreaterThan(0);
    if (change.action === 'ADD') expect(healthy.has(change.validator)).toBe(true);
    // Through a healthy node of this cluster: an active validator when it has one, else a follower (a joining cluster).
    const via = input.members.find((m) => m.name === action.via);
    expect(via && healthy.has(via.publicKey)).toBe(true);
    const anyActive = input.members.some((m) => active.has(m.publicKey) && healthy.has(m.publicKey));
    if (anyActive) expect(active.has(via?.publicKey ?? '')).toBe(true);
  }
  if (action.type === 'deleteWorkload') {
    const m = input.members.find((x) => x.name === action.name);
    expect(m).toBeDefined();
    expect(active.has(m?.publicKey ?? '')).toBe(false);
    expect(wanted.has(m?.publicKey ?? '')).toBe(false);
    if (pendingOpen && pending?.change.action === 'ADD') expect(pending.change.validator).not.toBe(m?.publicKey);
  }
}

const arbInput: fc.Arbitrary<MembershipInput> = fc
  .record({
    n: fc.integer({ min: 1, max: 9 }),
    activeMask: fc.array(fc.boolean(), { minLength: 10, maxLength: 10 }),
    desiredMask: fc.array(fc.boolean(), { minLength: 10, maxLength: 10 }),
    memberMask: fc.array(fc.boolean(), { minLength: 10, maxLength: 10 }),
    ready: fc.array(fc.boolean(), { minLength: 10, maxLength: 10 }),
    lag: fc.array(fc.integer({ min: -1, max: 3 }), { minLength: 10, maxLength: 10 }),
    externals: fc.array(fc.record({ inChain: fc.boolean(), ready: fc.option(fc.boolean(), { nil: undefined }) }), {
      maxLength: 2,
    }),
    pending: fc.option(
      fc.record({ action: fc.constantFrom('ADD' as const, 'REMOVE' as const), who: fc.nat(9), ageMs: fc.nat(120_000) }),
      { nil: undefined },
    ),
    chainKnown: fc.boolean(),
  })
  .map((w) => {
    const ids = Array.from({ length: 10 }, (_, i) => i);
    const inActive = (i: number) => i < w.n || w.activeMask[i] === true;
    const external: ExternalValidator[] = w.externals.map((e, j) => ({
      publicKey: (j === 0 ? 'c' : 'd').repeat(64), // never one of key(0..9)
      ...(e.ready === undefined ? {} : { ready: e.ready, height: H }),
    }));
    const validators = [
      ...ids.filter(inActive).map(key),
      ...external.filter((_, j) => w.externals[j]?.inChain).map((e) => e.publicKey),
    ];
    return {
      desired: desired(...ids.filter((i) => w.desiredMask[i])),
      external,
      members: ids
        .filter((i) => w.memberMask[i] || inActive(i))
        .map((i) => member(i, { ready: w.ready[i] === true, height: H - (w.lag[i] ?? 0) })),
      chain: w.chainKnown || validators.length > 0 ? { height: H, validators } : undefined,
      ...(w.pending
        ? {
            pending: {
              change: { action: w.pending.action, validator: key(w.pending.who) },
              via: 'v0',
              submittedAt: ago(w.pending.ageMs),
            },
          }
        : {}),
      now: NOW,
    } satisfies MembershipInput;
  });

describe('planMembership properties', () => {
  it('never below quorum, never a second change in flight, never deletes a listed or wanted workload', () => {
    fc.assert(
      fc.property(arbInput, (input) => {
        checkPlan(input, planMembership(input));
      }),
      { numRuns: 2000, seed: 7 },
    );
  });

  it('simulated reconcile loops: one change at a time, and convergence once every node is healthy', () => {
    const spec = fc.record({
      initial: fc.integer({ min: 1, max: 7 }),
      target: fc.integer({ min: 1, max: 8 }),
      retire: fc.array(fc.nat(7), { maxLength: 2 }),
      faults: fc.array(fc.record({ step: fc.nat(15), who: fc.nat(9), down: fc.boolean() }), { maxLength: 6 }),
      applyDelay: fc.integer({ min: 0, max: 3 }),
    });
    fc.assert(
      fc.property(spec, (s) => {
        const names = (count: number, retire: number[]) => {
          const out: number[] = [];
          for (let i = 0; out.length < count && i < 10; i++) if (!retire.includes(i)) out.push(i);
          return out;
        };
        const active = new Set(names(s.initial, []).map(key));
        const members = new Map<number, ObservedMember>();
        for (const i of names(s.initial, [])) members.set(i, member(i));
        const wantIds = names(s.target, s.retire);
        let height = H;
        let now = NOW.getTime();
        let pending: MembershipInput['pending'];
        const mempool: { change: ValidatorChange; due: number }[] = [];
        const down = new Set<number>();
        let quietSteps = 0;
        for (let step = 0; step < 80; step++) {
          for (const f of s.faults) if (f.step === step) f.down ? down.add(f.who) : down.delete(f.who);
          if (step === 20) down.clear(); // phase 2: every node healthy
          // Running nodes are ready and follow the chain; a stopped one keeps its last height.
          for (const [i, m] of members) {
            const alive = !down.has(i);
            members.set(i, { ...m, ready: alive, height: alive ? height : m.height });
          }
          // The reconciler keeps a workload for every desired validator; a new one is ready one step later.
          for (const i of wantIds) if (!members.has(i)) members.set(i, member(i, { ready: false, height: 0 }));
          const input: MembershipInput = {
            desired: desired(...wantIds),
            members: [...members.values()],
            chain: { height, validators: [...active] },
            pending,
            now: new Date(now),
          };
          const action = planMembership(input);
          checkPlan(input, action);
          if (action.type === 'submit') {
            const inFlight = mempool.filter((c) => !isChangeApplied(c.change, [...active]));
            for (const c of inFlight) expect(c.change, 'a second change while one is in flight').toEqual(action.change);
            mempool.push({ change: action.change, due: step + s.applyDelay });
            pending = { change: action.change, via: action.via, submittedAt: new Date(now) };
          } else if (action.type === 'deleteWorkload') {
            const i = [...members.values()].findIndex((m) => m.name === action.name);
            const id = [...members.keys()][i] as number;
            expect(active.has(key(id))).toBe(false);
            members.delete(id);
          }
          // The chain finalizes a block when a quorum of the active set is healthy; due changes take effect.
          const healthyActive = [...active].filter((k) => {
            const id = Number.parseInt(k[0] as string, 16);
            return members.has(id) && !down.has(id);
          }).length;
          if (healthyActive >= quorumSize(active.size)) {
            height++;
            for (const c of mempool.splice(0)) {
              if (c.due > step) {
                mempool.push(c);
                continue;
              }
              if (c.change.action === 'ADD') active.add(c.change.validator);
              else if (active.size > 1) active.delete(c.change.validator);
            }
          }
          now += 10_000;
          quietSteps = step >= 20 && action.type === 'none' ? quietSteps + 1 : 0;
          if (quietSteps >= 2) break;
        }
        expect([...active].sort()).toEqual(wantIds.map(key).sort());
        expect([...members.keys()].sort()).toEqual([...wantIds].sort());
      }),
      { numRuns: 300, seed: 11 },
    );
  });
});
