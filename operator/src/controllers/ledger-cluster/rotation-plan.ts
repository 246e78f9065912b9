// Validator key rotation as a pure planner over what the reconcile saw: the request (the
// `scriptorium.dev/rotate-key` annotation), the rotation's state in status (what survives an operator restart), the
// key Secrets of each validator (one per generation) and the chain. One validator at a time, one step per call:
//   NewKey   a new key Secret (generation g+1); the pod still runs generation g;
//   Restart  the StatefulSet mounts the new key: the pod restarts with it and follows the chain (its key is not in
//            the set yet), only while the other validators make a quorum of n on their own;
//   Add      ADD of the new key submitted once the pod runs it and has caught up; waits until it is final;
//   Remove   REMOVE of the old key submitted; waits until the chain no longer lists it; then the next validator.
// From the restart until the REMOVE is final one active key is run by nobody (the old one): the fault tolerance is
// f(n) − 1 before the ADD is final and f(n + 1) − 1 after it, and the chain keeps a quorum throughout (n ≥ 4;
// docs/operator.md has the arithmetic, and why the restart comes before the ADD).
import { quorumSize } from '@scriptorium/ledger-protocol';
import type { LedgerClusterStatus } from '../../api/index.ts';
import type { ClusterObservation } from './observe.ts';

export type RotationState = NonNullable<LedgerClusterStatus['keyRotation']>;

export interface KeyGeneration {
  generation: number;
  publicKey: string;
}

export interface RotationInput {
  /** The annotation's value (validator names, comma-separated), or undefined. */
  request: string | undefined;
  state: RotationState | undefined;
  /** Operator-run validators the spec wants. */
  desired: readonly string[];
  /** Each validator's key generations, oldest first. */
  generations: ReadonlyMap<string, readonly KeyGeneration[]>;
  /** The public key each validator's pod runs (`runningGeneration`). */
  running: ReadonlyMap<string, string>;
  observation: ClusterObservation;
  /** The validator's StatefulSet runs its current spec and its pod is Ready. */
  settled: (validator: string) => boolean;
  /** Another membership change waits to be final (one change at a time). */
  membershipPending: boolean;
  now: Date;
  resubmitAfterMs?: number;
}

/** A reconcile's rotation step, for the status. */
export interface RotationOutcome {
  state: RotationState | undefined;
  /** A rotation is under way (Progressing, reason RotatingKey). */
  active: boolean;
  /** What it waits for, or what failed. */
  message: string | undefined;
}

export type RotationAction =
  | { type: 'idle' }
  | { type: 'refuse'; reason: string }
  | { type: 'wait'; reason: string }
  | { type: 'newKey'; validator: string; generation: number; state: RotationState }
  | { type: 'submit'; change: { action: 'ADD' | 'REMOVE'; validator: string }; via: string; state: RotationState }
  | { type: 'advance'; state: RotationState; note: string };

const iso = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * The validators a request names, in order. A name may carry `@anything` (the plugin adds the time), so the same
 * validator can be asked again with a new annotation value.
 */
export function requestedValidators(request: string): string[] {
  return request
    .split(',')
    .map((s) => s.trim().replace(/@.*$/, ''))
    .filter(Boolean);
}

/**
 * The key generation a validator's pod runs. It changes only through a rotation's Restart step (its ADD final);
 * otherwise it is what the StatefulSet mounts now (`mounted`), or the newest generation for a validator without
 * one yet. A generation created but not recorded (an operator stopped in between) is never mounted by accident.
 */
export function runningGeneration(
  validator: string,
  generations: readonly KeyGeneration[],
  mounted: number | undefined,
  state: RotationState | undefined,
): KeyGeneration | undefined {
  if (state?.validator === validator && (state.step === 'Restart' || state.step === 'Add' || state.step === 'Remove')) {
    const rotated = generations.find((g) => g.publicKey === state.newKey);
    if (rotated) return rotated;
  }
  if (mounted !== undefined) {
    const current = generations.find((g) => g.generation === mounted);
    if (current) return current;
  }
  return generations.at(-1);
}

/** One step of the rotation. */
export function planRotation(input: RotationInput): RotationAction {
  const { observation: obs, now } = input;
  const state = input.state;
  const request = input.request?.trim() || undefined;
  // A request is served until done; a new annotation value is a new request (after the current one finishes).
  if (!state || state.step === 'Done') {
    if (!request) return { type: 'idle' };
    if (request === state?.request) return state.refused ? { type: 'idle' } : startNext(state, input);
    const names = requestedValidators(request);
    const unknown = names.filter((v) => !input.desired.includes(v));
    if (names.length === 0 || unknown.length > 0)
      return {
        type: 'refuse',
        reason: `cannot rotate ${unknown.join(', ') || '(no name)'}: not a validator this operator runs`,
      };
    return startNext({ request, step: 'Done', completed: [] }, input);
  }
  const v = state.validator;
  if (!v) return startNext(state, input);
  const active = obs.activeKeys ? new Set(obs.activeKeys) : undefined;
  if (!active || obs.height === undefined) return { type: 'wait', reason: 'waiting for the nodes to report the chain' };
  const n = active.size;
  const healthy = healthyValidators(input);
  const others = healthy.filter((h) => h !== v);
  switch (state.step) {
    case 'NewKey': {
      if (!state.newKey) return { type: 'wait', reason: `${v}'s new key is not recorded yet` };
      if (input.membershipPending) return { type: 'wait', reason: 'another membership change is not final yet' };
      // While the pod restarts and until the new key's ADD is final, v's old key is run by nobody: the others
      // must make a quorum of the n active keys on their own.
      const need = quorumSize(n);
      if (others.length < need)
        return {
          type: 'wait',
          reason: `${others.length} other validators are healthy; restarting ${v} with its new key needs ${need} (quorum of ${n}) without it`,
        };
      return {
        type: 'advance',
        state: { ...state, step: 'Restart', since: iso(now) },
        note: `restarting ${v} with its new key: it follows the chain until its ADD is final`,
      };
    }
    case 'Restart':
    case 'Add': {
      if (!state.newKey) return { type: 'wait', reason: `${v}'s new key is not recorded yet` };
      if (active.has(state.newKey)) {
        // The ADD is final: the old key goes.
        if (!state.oldKey || !active.has(state.oldKey)) return finish(state, `${v}'s old key is no longer active`);
        return {
          type: 'submit',
          change: { action: 'REMOVE', validator: state.oldKey },
          via: others[0] ?? v,
          state: { ...state, step: 'Remove', since: iso(now) },
        };
      }
      const me = obs.members.find((m) => m.name === v);
      const caughtUp =
        me?.podReady === true &&
        me.reachable &&
        me.publicKey === state.newKey &&
        me.height !== undefined &&
        me.height >= obs.height - 1;
      if (state.step === 'Restart' && (!input.settled(v) || !caughtUp))
        return { type: 'wait', reason: `${v} restarts with its new key and catches up` };
      const submittedAt = state.step === 'Add' && state.since ? Date.parse(state.since) : undefined;
      if (submittedAt !== undefined && now.getTime() - submittedAt < (input.resubmitAfterMs ?? 60_000))
        return { type: 'wait', reason: `ADD of ${v}'s new key submitted at ${state.since}; waiting until it is final` };
      if (input.membershipPending) return { type: 'wait', reason: 'another membership change is not final yet' };
      // Once the ADD is final, n + 1 keys are active and the old one is run by nobody until its REMOVE is final:
      // the others and v's new key must make a quorum of n + 1.
      const need = quorumSize(n + 1);
      if (others.length + (caughtUp ? 1 : 0) < need)
        return {
          type: 'wait',
          reason: `${others.length} other validators are healthy${caughtUp ? ` and ${v} runs its new key` : ''}; adding ${v}'s new key needs ${need} (quorum of ${n + 1})`,
        };
      return {
        type: 'submit',
        change: { action: 'ADD', validator: state.newKey },
        via: others[0] ?? v,
        state: { ...state, step: 'Add', since: iso(now) },
      };
    }
    case 'Remove': {
      if (!state.oldKey || !active.has(state.oldKey)) return finish(state, `REMOVE of ${v}'s old key is final`);
      const submittedAt = state.since ? Date.parse(state.since) : 0;
      if (now.getTime() - submittedAt < (input.resubmitAfterMs ?? 60_000))
        return {
          type: 'wait',
          reason: `REMOVE of ${v}'s old key submitted at ${state.since}; waiting until it is final`,
        };
      return {
        type: 'submit',
        change: { action: 'REMOVE', validator: state.oldKey },
        via: others[0] ?? v,
        state: { ...state, since: iso(now) },
      };
    }
    default:
      return { type: 'idle' };
  }
}

/** Operator-run validators whose key is active, whose pod is Ready and whose node is within 1 block of the chain. */
function healthyValidators(input: RotationInput): string[] {
  const active = new Set(input.observation.activeKeys ?? []);
  const height = input.observation.height ?? 0;
  return input.observation.members
    .filter(
      (m) =>
        input.desired.includes(m.name) &&
        m.podReady &&
        m.reachable &&
        active.has(m.publicKey) &&
        m.height !== undefined &&
        m.height >= height - 1,
    )
    .map((m) => m.name);
}

function finish(state: RotationState, note: string): RotationAction {
  const completed = [...(state.completed ?? []), state.validator ?? ''];
  const next: RotationState = { request: state.request, step: 'Done', completed };
  return { type: 'advance', state: next, note: `${note}: ${state.validator} rotated` };
}

/** The next validator of the request: a new key generation for it, or Done. */
function startNext(state: RotationState, input: RotationInput): RotationAction {
  const done = new Set(state.completed ?? []);
  const next = requestedValidators(state.request).find((v) => !done.has(v));
  if (!next)
    return state.step === 'Done'
      ? { type: 'idle' }
      : { type: 'advance', state: { ...state, step: 'Done' }, note: 'every requested key is rotated' };
  const gens = input.generations.get(next) ?? [];
  const running = input.running.get(next);
  const newest = gens.at(-1);
  if (!newest || !running) return { type: 'wait', reason: `${next} has no key yet` };
  const base = {
    request: state.request,
    validator: next,
    oldKey: running,
    since: iso(input.now),
    completed: state.completed ?? [],
  };
  // A newer generation than the one running that the chain does not list: made by an earlier reconcile that did
  // not get to record it. It becomes this rotation's new key.
  if (newest.publicKey !== running && !(input.observation.activeKeys ?? []).includes(newest.publicKey))
    return {
      type: 'advance',
      state: { ...base, step: 'NewKey', newKey: newest.publicKey },
      note: `rotating ${next}: its new key (generation ${newest.generation}) exists`,
    };
  const current = newest;
  return {
    type: 'newKey',
    validator: next,
    generation: current.generation + 1,
    state: { ...base, step: 'NewKey' },
  };
}
