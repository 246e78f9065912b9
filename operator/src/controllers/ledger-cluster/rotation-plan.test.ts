import { describe, expect, it } from 'vitest';
import type { ClusterObservation, MemberObservation } from './observe.ts';
import { ledgerNeedsReconcile } from './predicates.ts';
import {
  type KeyGeneration,
  planRotation,
  type RotationInput,
  type RotationState,
  runningGeneration,
} from './rotation-plan.ts';

const key = (s: string) => s.padEnd(64, '0');
const names = ['c-v0', 'c-v1', 'c-v2', 'c-v3'];
const now = new Date('2026-11-27T10:00:00Z');

function member(name: string, publicKey: string, over: Partial<MemberObservation> = {}): MemberObservation {
  return {
    name,
    publicKey,
    podReady: true,
    reachable: true,
    ready: true,
    height: 10,
    activeKeys: undefined,
    error: undefined,
    ...over,
  };
}

/** Four validators a..d; `active` the chain's set; `running` what each pod runs. */
function input(
  over: Partial<RotationInput> & { active?: string[]; down?: string[]; running?: Map<string, string> } = {},
): RotationInput {
  const running = over.running ?? new Map(names.map((n, i) => [n, key('abcd'[i] as string)]));
  const active = over.active ?? [...running.values()];
  const observation: ClusterObservation = {
    members: names.map((n) =>
      member(n, running.get(n) as string, over.down?.includes(n) ? { podReady: false, reachable: false } : {}),
    ),
    height: 10,
    activeKeys: active,
    unreachable: [],
  };
  const generations = new Map<string, KeyGeneration[]>(
    names.map((n, i) => [n, [{ generation: 0, publicKey: key('abcd'[i] as string) }]]),
  );
  return {
    request: 'c-v1',
    state: undefined,
    desired: names,
    generations,
    running,
    observation,
    settled: () => true,
    membershipPending: false,
    now,
    ...over,
  };
}

describe('key rotation planner', () => {
  it('walks NewKey → Restart → Add → Remove → Done for one validator', () => {
    const start = planRotation(input());
    expect(start).toMatchObject({
      type: 'newKey',
      validator: 'c-v1',
      generation: 1,
      state: { step: 'NewKey', oldKey: key('b') },
    });
    const created: RotationState = { ...(start as { state: RotationState }).state, newKey: key('e') };
    const gens = input().generations as Map<string, KeyGeneration[]>;
    gens.set('c-v1', [...(gens.get('c-v1') ?? []), { generation: 1, publicKey: key('e') }]);
    // The new key exists, the pod still runs the old one.
    expect(runningGeneration('c-v1', gens.get('c-v1') ?? [], 0, created)?.publicKey).toBe(key('b'));

    // The other three make a quorum of 4 on their own: restart with the new key.
    const restart = planRotation(input({ state: created, generations: gens }));
    expect(restart).toMatchObject({ type: 'advance', state: { step: 'Restart' } });
    const restarting = (restart as { state: RotationState }).state;
    expect(runningGeneration('c-v1', gens.get('c-v1') ?? [], 0, restarting)?.publicKey).toBe(key('e'));

    // Until its pod is settled and caught up with the new key, nothing is submitted.
    const runningNew = new Map(names.map((n, i) => [n, n === 'c-v1' ? key('e') : key('abcd'[i] as string)]));
    const four = [key('a'), key('b'), key('c'), key('d')];
    expect(
      planRotation(
        input({
          state: restarting,
          generations: gens,
          active: four,
          running: runningNew,
          settled: (v) => v !== 'c-v1',
        }),
      ),
    ).toMatchObject({ type: 'wait', reason: expect.stringMatching(/restarts with its new key/) });
    const add = planRotation(input({ state: restarting, generations: gens, active: four, running: runningNew }));
    expect(add).toMatchObject({
      type: 'submit',
      change: { action: 'ADD', validator: key('e') },
      state: { step: 'Add' },
    });
    expect((add as { via: string }).via).not.toBe('c-v1');
    const adding = (add as { state: RotationState }).state;
    // Not final yet: wait (the pod keeps the new key).
    expect(planRotation(input({ state: adding, generations: gens, active: four, running: runningNew }))).toMatchObject({
      type: 'wait',
    });
    expect(runningGeneration('c-v1', gens.get('c-v1') ?? [], 1, adding)?.publicKey).toBe(key('e'));

    // The ADD is final: REMOVE the old key.
    const five = [key('a'), key('b'), key('c'), key('d'), key('e')];
    const remove = planRotation(input({ state: adding, generations: gens, active: five, running: runningNew }));
    expect(remove).toMatchObject({
      type: 'submit',
      change: { action: 'REMOVE', validator: key('b') },
      state: { step: 'Remove' },
    });

    const removing = (remove as { state: RotationState }).state;
    const after = [key('a'), key('c'), key('d'), key('e')];
    const done = planRotation(input({ state: removing, generations: gens, active: after, running: runningNew }));
    expect(done).toMatchObject({ type: 'advance', state: { step: 'Done', completed: ['c-v1'] } });
    // The same request again: nothing more to do.
    expect(
      planRotation(
        input({
          state: (done as { state: RotationState }).state,
          generations: gens,
          active: after,
          running: runningNew,
        }),
      ),
    ).toEqual({
      type: 'idle',
    });
  });

  it('never restarts a validator unless the others make a quorum without it, nor during another change', () => {
    const created: RotationState = {
      request: 'c-v1',
      validator: 'c-v1',
      step: 'NewKey',
      oldKey: key('b'),
      newKey: key('e'),
      completed: [],
    };
    const oneDown = planRotation(input({ state: created, down: ['c-v3'] }));
    expect(oneDown).toMatchObject({
      type: 'wait',
      reason: expect.stringMatching(/2 other validators are healthy; restarting c-v1 .* needs 3 \(quorum of 4\)/),
    });
    expect(planRotation(input({ state: created, membershipPending: true }))).toMatchObject({ type: 'wait' });
    // Restarted, but another validator went down meanwhile: the ADD waits (4 of 5 needed once it is final).
    const restarting: RotationState = { ...created, step: 'Restart' };
    const runningNew = new Map(names.map((n, i) => [n, n === 'c-v1' ? key('e') : key('abcd'[i] as string)]));
    expect(
      planRotation(
        input({
          state: restarting,
          running: runningNew,
          active: [key('a'), key('b'), key('c'), key('d')],
          down: ['c-v3'],
        }),
      ),
    ).toMatchObject({
      type: 'wait',
      reason: expect.stringMatching(/needs 4 \(quorum of 5\)/),
    });
  });

  it('serves a list one validator at a time, refuses names it does not run, and resumes from status alone', () => {
    const two: RotationState = { request: 'c-v1,c-v2', step: 'Done', completed: ['c-v1'] };
    expect(planRotation(input({ request: 'c-v1,c-v2', state: two }))).toMatchObject({
      type: 'newKey',
      validator: 'c-v2',
    });
    expect(planRotation(input({ request: 'c-v9' }))).toMatchObject({
      type: 'refuse',
      reason: expect.stringMatching(/c-v9/),
    });
    expect(planRotation(input({ request: 'c-v9', state: { request: 'c-v9', step: 'Done', refused: 'x' } }))).toEqual({
      type: 'idle',
    });
    // A new key Secret made by a reconcile that stopped before recording it becomes the rotation's new key.
    const gens = input().generations as Map<string, KeyGeneration[]>;
    gens.set('c-v1', [...(gens.get('c-v1') ?? []), { generation: 1, publicKey: key('e') }]);
    expect(planRotation(input({ generations: gens }))).toMatchObject({
      type: 'advance',
      state: { step: 'NewKey', newKey: key('e'), oldKey: key('b') },
    });
    // …and is not mounted by the StatefulSet before the rotation's Restart step.
    expect(runningGeneration('c-v1', gens.get('c-v1') ?? [], 0, undefined)?.generation).toBe(0);
  });

  it('a changed rotate-key or reconcile annotation triggers a reconcile', () => {
    const a = { apiVersion: 'v', kind: 'LedgerCluster', metadata: { name: 'c', generation: 1 } };
    const annotated = (k: string, v: string) => ({ ...a, metadata: { ...a.metadata, annotations: { [k]: v } } });
    expect(ledgerNeedsReconcile(annotated('scriptorium.dev/rotate-key', 'c-v1'), a)).toBe(true);
    expect(ledgerNeedsReconcile(annotated('scriptorium.dev/reconcile', 'paused'), a)).toBe(true);
    expect(ledgerNeedsReconcile(annotated('other', 'x'), a)).toBe(false);
  });
});
