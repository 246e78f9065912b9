import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../kube/types.ts';
import { fixture, parsedSpec } from '../../specs/ledger-cluster/fixtures.ts';
import { pendingFromStatus, pendingSettled, planStep } from './membership-plan.ts';
import { type NodeApi, observeNodes } from './observe.ts';
import { ledgerNeedsReconcile, ledgerOwnerKey, podChanged } from './predicates.ts';
import { diagnosisEvents, ledgerStatus, type Snapshot } from './status.ts';

const key = (i: number) => i.toString(16).padStart(2, '0').repeat(32);
const meta = (extra: Partial<KubeObject['metadata']> = {}) => ({ name: 'x', namespace: 'ns', ...extra });

describe('predicates', () => {
  it('maps owned objects by controller reference and pods by the cluster label', () => {
    const owned: KubeObject = {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: meta({
        ownerReferences: [
          { apiVersion: 'scriptorium.dev/v1alpha1', kind: 'LedgerCluster', name: 'ledger', uid: 'u', controller: true },
        ],
      }),
    };
    expect(ledgerOwnerKey(owned)).toBe('ns/ledger');
    const pod: KubeObject = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: meta({ labels: { 'scriptorium.dev/ledger-cluster': 'ledger' } }),
    };
    expect(ledgerOwnerKey(pod)).toBe('ns/ledger');
    expect(ledgerOwnerKey({ ...pod, kind: 'Service' })).toBeUndefined();
  });
  it('ignores status-only updates of the resource and pod updates that change nothing that matters', () => {
    const a: KubeObject = { apiVersion: 'v', kind: 'LedgerCluster', metadata: meta({ generation: 1 }) };
    expect(ledgerNeedsReconcile({ ...a, status: { height: 9 } }, a)).toBe(false);
    expect(ledgerNeedsReconcile({ ...a, metadata: meta({ generation: 2 }) }, a)).toBe(true);
    const pod = (ready: string): KubeObject => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: meta({ uid: 'p' }),
      status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready }] },
    });
    expect(podChanged(pod('True'), pod('True'))).toBe(false);
    expect(podChanged(pod('True'), pod('False'))).toBe(true);
  });
});

describe('observeNodes', () => {
  it('takes the active set from the highest node and records unreachable ones without throwing', async () => {
    const api: NodeApi = {
      async chain(url) {
        if (url === 'down') throw new Error('connect ECONNREFUSED');
        return url === 'a' ? { height: 7, validators: [key(1)] } : { height: 9, validators: [key(1), key(2)] };
      },
      async ready(url) {
        return url === 'b';
      },
      async submitMembership() {},
    };
    const seen = await observeNodes(api, [
      { name: 'a', publicKey: key(1), podReady: true, url: 'a' },
      { name: 'b', publicKey: key(2), podReady: true, url: 'b' },
      { name: 'c', publicKey: key(3), podReady: false, url: 'down' },
    ]);
    expect(seen.height).toBe(9);
    expect(seen.activeKeys).toEqual([key(1), key(2)]);
    expect(seen.unreachable).toEqual(['c']);
    expect(seen.members.find((m) => m.name === 'a')).toMatchObject({ reachable: true, ready: false, height: 7 });
    expect(seen.members.find((m) => m.name === 'c')?.error).toContain('ECONNREFUSED');
  });
});

describe('membership step', () => {
  const names = new Map([
    ['ledger-v0', key(0)],
    ['ledger-v1', key(1)],
  ]);
  it('reads the pending change from status by validator name (or an external key)', () => {
    const since = '2026-11-22T10:00:00Z';
    expect(
      pendingFromStatus({ kind: 'REMOVE', validator: 'ledger-v1', since, via: 'ledger-v0' }, (n) => names.get(n)),
    ).toEqual({ change: { action: 'REMOVE', validator: key(1) }, via: 'ledger-v0', submittedAt: new Date(since) });
    expect(pendingFromStatus({ kind: 'ADD', validator: key(9), since }, () => undefined)?.change.validator).toBe(
      key(9),
    );
    expect(pendingFromStatus({ kind: 'ADD', validator: 'unknown', since }, () => undefined)).toBeUndefined();
    expect(pendingFromStatus({ kind: 'ADD', validator: 'ledger-v0' }, (n) => names.get(n))).toBeUndefined();
  });
  it('property: any status.pendingChange (edited by hand, hostile) yields a valid change or none, never a throw', () => {
    fc.assert(
      fc.property(
        fc.record({
          kind: fc.constantFrom('ADD' as const, 'REMOVE' as const),
          validator: fc.oneof(fc.string(), fc.constantFrom('ledger-v0', key(7))),
          since: fc.option(
            fc.oneof(
              fc.string(),
              fc.date().map((d) => (Number.isNaN(d.getTime()) ? 'x' : d.toISOString())),
            ),
            {
              nil: undefined,
            },
          ),
          via: fc.option(fc.string(), { nil: undefined }),
        }),
        (status) => {
          const p = pendingFromStatus(status, (n) => names.get(n));
          if (p) {
            expect(p.change.validator).toMatch(/^[0-9a-f]{64}$/);
            expect(Number.isFinite(p.submittedAt.getTime())).toBe(true);
          }
        },
      ),
      { numRuns: 300, seed: 7 },
    );
  });
  it('a REMOVE is settled once the chain no longer lists the key', () => {
    const pending = { change: { action: 'REMOVE' as const, validator: key(1) }, submittedAt: new Date() };
    const obs = (keys: string[]) => ({ members: [], height: 5, activeKeys: keys, unreachable: [] });
    expect(pendingSettled(pending, obs([key(0), key(1)]))).toBe(false);
    expect(pendingSettled(pending, obs([key(0)]))).toBe(true);
    expect(pendingSettled(pending, { members: [], height: undefined, activeKeys: undefined, unreachable: [] })).toBe(
      false,
    );
  });
  it('waits while no node answered, and asks for the retired validator to be removed once the chain is known', () => {
    const member = (i: number, height: number | undefined) => ({
      name: `ledger-v${i}`,
      publicKey: key(i),
      podReady: true,
      reachable: height !== undefined,
      ready: height !== undefined,
      height,
      activeKeys: undefined,
      error: undefined,
    });
    const desired = [0, 2, 3, 4].map((i) => ({ name: `ledger-v${i}`, publicKey: key(i) }));
    const unknown = planStep({
      desired,
      externalKeys: [],
      observation: {
        members: [0, 1, 2, 3].map((i) => member(i, undefined)),
        height: undefined,
        activeKeys: undefined,
        unreachable: [],
      },
      pending: undefined,
      now: new Date(),
    });
    expect(unknown.type).toBe('wait');
    const known = planStep({
      desired,
      externalKeys: [],
      observation: {
        members: [0, 1, 2, 3].map((i) => member(i, 10)),
        height: 10,
        activeKeys: [0, 1, 2, 3, 4].filter((i) => i !== 4).map(key),
        unreachable: [],
      },
      pending: undefined,
      now: new Date(),
    });
    // A replacement adds first: ledger-v4 is desired and not active yet, so the healthy ledger-v1 stays for now.
    expect(known).toMatchObject({ type: 'wait' });
    expect(known.type === 'wait' && known.reason).toContain('REMOVE ledger-v1 waits until ledger-v4');
    // An unhealthy retiring validator goes at once (the rest hold a quorum).
    const down = planStep({
      desired,
      externalKeys: [],
      observation: {
        members: [member(0, 10), member(1, undefined), member(2, 10), member(3, 10)],
        height: 10,
        activeKeys: [0, 1, 2, 3].map(key),
        unreachable: ['ledger-v1'],
      },
      pending: undefined,
      now: new Date(),
    });
    expect(down).toMatchObject({ type: 'submit', change: { action: 'REMOVE', validator: key(1) } });
    // A plain scale-down (nobody joining) removes a healthy validator.
    const shrink = planStep({
      desired: desired.slice(0, 3).filter((d) => d.name !== 'ledger-v4'),
      externalKeys: [],
      observation: {
        members: [0, 1, 2, 3].map((i) => member(i, 10)),
        height: 10,
        activeKeys: [0, 1, 2, 3].map(key),
        unreachable: [],
      },
      pending: undefined,
      now: new Date(),
    });
    expect(shrink).toMatchObject({ type: 'submit', change: { action: 'REMOVE' } });
  });
});

const names = ['ledger-v0', 'ledger-v1', 'ledger-v2', 'ledger-v3'];

/** What a reconcile saw of a 4-validator cluster at height 12 (`reachable` per validator). */
function snapshot(over: Partial<Snapshot> = {}, reachable = [true, true, true, true]): Snapshot {
  return {
    desired: names,
    members: names,
    keys: new Map(names.map((n, i) => [n, key(i)])),
    genesisSet: new Set(names),
    podReady: new Map(names.map((n) => [n, true])),
    observation: {
      members: names.map((n, i) => ({
        name: n,
        publicKey: key(i),
        podReady: true,
        reachable: reachable[i] ?? false,
        ready: reachable[i] ?? false,
        height: reachable[i] ? 12 : undefined,
        activeKeys: reachable[i] ? names.map((_, j) => key(j)) : undefined,
        error: reachable[i] ? undefined : 'refused',
      })),
      height: 12,
      activeKeys: names.map((_, j) => key(j)),
      unreachable: names.filter((_, i) => !reachable[i]),
    },
    membership: { pending: undefined, waiting: undefined, deleted: undefined },
    heldBack: [],
    ...over,
  };
}

describe('ledgerStatus', () => {
  const lc = fixture();
  const spec = parsedSpec(lc);
  it('all validators Ready and active: not progressing, not degraded, height and quorum from the chain', () => {
    const st = ledgerStatus(lc, spec, snapshot());
    expect(st.degraded.status).toBe('False');
    expect(st.progressing).toMatchObject({ status: 'False', reason: 'ValidatorsReady' });
    expect(st.fields).toMatchObject({ validators: 4, height: 12, activeValidators: 4, quorum: 3 });
    expect(st.fields.members.every((m: { role: string }) => m.role === 'validator')).toBe(true);
  });
  it('a Ready pod the operator cannot reach is NodesUnreachable; two of four is also below quorum', () => {
    expect(ledgerStatus(lc, spec, snapshot({}, [true, false, true, true])).degraded).toMatchObject({
      status: 'True',
      reason: 'NodesUnreachable',
    });
    // v1 and v2 down (pods not Ready, APIs unreachable): 2 of 4 answer, quorum is 3.
    const down = snapshot({}, [true, false, false, true]);
    const st = ledgerStatus(lc, spec, {
      ...down,
      podReady: new Map(names.map((n) => [n, n === 'ledger-v0' || n === 'ledger-v3'])),
      observation: {
        ...down.observation,
        members: down.observation.members.map((m) => ({ ...m, podReady: m.reachable })),
      },
    });
    expect(st.degraded).toMatchObject({ status: 'True', reason: 'QuorumAtRisk' });
    expect(st.progressing.reason).toBe('ValidatorsStarting');
  });
  it('Progressing names the rollout, then the membership change, then the planner wait', () => {
    expect(ledgerStatus(lc, spec, snapshot({ heldBack: ['ledger-v2'] })).progressing.reason).toBe('RollingOut');
    const pending = { kind: 'ADD' as const, validator: 'ledger-v4', since: '2026-11-22T10:00:00Z', via: 'ledger-v0' };
    const st = ledgerStatus(lc, spec, snapshot({ membership: { pending, waiting: undefined, deleted: undefined } }));
    expect(st.progressing).toMatchObject({ status: 'True', reason: 'MembershipChange' });
    expect(st.fields.pendingChange).toEqual(pending);
    expect(
      ledgerStatus(
        lc,
        spec,
        snapshot({ membership: { pending: undefined, waiting: 'x not caught up', deleted: undefined } }),
      ).progressing,
    ).toMatchObject({ reason: 'MembershipWaiting', message: 'x not caught up' });
  });
});

describe('stall and round-change storm diagnosis', () => {
  const t0 = '2026-11-24T10:00:00Z';
  const at = (seconds: number) => new Date(Date.parse(t0) + seconds * 1000);
  const lc = { ...fixture(), status: { height: 12, lastHeightChange: t0 } };
  const spec = parsedSpec(lc); // defaults: stall after 60 s, storm from round 4
  /** `seconds` after t0, with the height, the highest round and the records waiting the nodes report. */
  const observed = (seconds: number, o: { height?: number; round?: number; pendingRecords?: number } = {}) => {
    const base = snapshot({ now: at(seconds) });
    const height = o.height ?? 12;
    return {
      ...base,
      observation: {
        ...base.observation,
        members: base.observation.members.map((m) => ({ ...m, height })),
        height,
        round: o.round ?? 0,
        pendingRecords: o.pendingRecords ?? 0,
      },
    };
  };

  it('no block for stallAfterSeconds with records pending is Progressing=False/Stalled, whatever else is under way', () => {
    const st = ledgerStatus(lc, spec, { ...observed(61, { pendingRecords: 30, round: 2 }), heldBack: ['ledger-v1'] });
    expect(st.progressing).toMatchObject({ status: 'False', reason: 'Stalled' });
    expect(st.progressing.message).toBe('No block finalized for 61 s (height 12, round 2) while 30 records wait');
    expect(st.fields).toMatchObject({ lastHeightChange: t0, round: 2, pendingRecords: 30 });
    expect(st.diagnosis).toMatchObject({ stalled: true, storm: false, secondsSinceHeightChange: 61 });
  });

  it('is not a stall before the time, without pending work, or once the height moved (the clock restarts)', () => {
    expect(ledgerStatus(lc, spec, observed(59, { pendingRecords: 30 })).diagnosis).toMatchObject({
      stalled: false,
      stallInSeconds: 1,
    });
    // An idle chain that stops is not this diagnosis (nothing waits).
    expect(ledgerStatus(lc, spec, observed(600)).diagnosis.stalled).toBe(false);
    const moved = ledgerStatus(lc, spec, observed(600, { height: 13, pendingRecords: 30 }));
    expect(moved.diagnosis).toMatchObject({ stalled: false, secondsSinceHeightChange: 0 });
    expect(moved.fields.lastHeightChange).toBe('2026-11-24T10:10:00Z');
    // A pending membership change is pending work too.
    const pending = { kind: 'ADD' as const, validator: 'ledger-v4' };
    const withChange = { ...observed(61), membership: { pending, waiting: undefined, deleted: undefined } };
    expect(ledgerStatus(lc, spec, withChange).progressing.message).toMatch(/while a membership change wait/);
  });

  it('RoundChangeStorm is True from the configured round on, and absent without node metrics', () => {
    const storm = ledgerStatus(lc, spec, observed(1, { round: 4 }));
    expect(storm.others).toEqual([
      expect.objectContaining({ type: 'RoundChangeStorm', status: 'True', reason: 'RoundsRising' }),
    ]);
    expect(storm.others?.[0]?.message).toBe(
      'A validator is at round 4 of height 13; its round timeout is 16 × the base',
    );
    expect(ledgerStatus(lc, spec, observed(1, { round: 3 })).others?.[0]).toMatchObject({ status: 'False' });
    const { round: _r, pendingRecords: _p, ...withoutMetrics } = observed(1).observation;
    expect(ledgerStatus(lc, spec, { ...observed(1), observation: withoutMetrics }).others).toEqual([]);
  });

  it('an Event when a stall or a storm starts (Warning) and when it ends (Normal), none while it lasts', () => {
    const stalled = ledgerStatus(lc, spec, observed(61, { pendingRecords: 1, round: 5 }));
    const started = diagnosisEvents(undefined, stalled);
    expect(started.map((e) => `${e.type}/${e.reason}`)).toEqual(['Warning/Stalled', 'Warning/RoundChangeStorm']);
    const asConditions = [
      { type: 'Progressing', ...stalled.progressing, lastTransitionTime: t0 },
      {
        type: 'RoundChangeStorm',
        status: 'True' as const,
        reason: 'RoundsRising',
        message: '',
        lastTransitionTime: t0,
      },
    ];
    expect(diagnosisEvents(asConditions, stalled)).toEqual([]);
    const healthy = ledgerStatus(lc, spec, observed(62, { height: 14 }));
    expect(diagnosisEvents(asConditions, healthy).map((e) => `${e.type}/${e.reason}`)).toEqual([
      'Normal/StallEnded',
      'Normal/RoundChangeStormEnded',
    ]);
  });
});
