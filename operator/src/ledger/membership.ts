// The membership planner: a pure function from what the operator wants and what it observes to the ONE next
// step that moves the chain's active validator set toward the spec (DESIGN.md "Membership"):
//   - one change at a time: while a submitted change has not taken effect, wait (resubmit after a timeout);
//   - ADD a new validator only once it runs, is ready and is caught up (height within 1 of the chain);
//   - REMOVE first; delete a retired validator's workload only once the chain no longer lists it;
//   - never a change that would leave fewer than a quorum (N − floor((N−1)/3)) of healthy validators, and none
//     while the current set lacks a healthy quorum (it could not be finalized);
//   - external validators count in the active set and in health, and their workloads are never deleted.
// No I/O, no clock: `now` is an input.
import { quorumSize, type ValidatorChange } from '@scriptorium/ledger-protocol';

export const DEFAULT_RESUBMIT_AFTER_MS = 60_000;

export interface DesiredValidator {
  /** Workload name (StatefulSet / member name). */
  name: string;
  publicKey: string;
}

/** An operator-run node the operator observes (a StatefulSet that exists), desired or retiring. */
export interface ObservedMember {
  name: string;
  publicKey: string;
  /** GET /ready answered 200. False when it answered 503 or could not be reached. */
  ready: boolean;
  /** Height from its GET /chain; undefined when unknown. */
  height: number | undefined;
}

/** A validator run by another organization (spec.externalValidators). */
export interface ExternalValidator {
  publicKey: string;
  /** Observed readiness when the operator can probe it; undefined counts as not healthy. */
  ready?: boolean;
  height?: number;
}

export interface PendingChange {
  change: ValidatorChange;
  /** Member the change was submitted through. */
  via?: string;
  submittedAt: Date;
}

export interface MembershipInput {
  /** Operator-run validators the spec wants, in spec order (retired names already left out). */
  desired: readonly DesiredValidator[];
  /** External validators from the spec. */
  external?: readonly ExternalValidator[];
  /** Every operator-run node that currently has a workload, desired or not. */
  members: readonly ObservedMember[];
  /**
   * The chain as one healthy node reports it (take the highest one): height and the active set's keys.
   * Undefined when no node could be read.
   */
  chain: { height: number; validators: readonly string[] } | undefined;
  /** The change submitted last (from status), if any. */
  pending?: PendingChange | undefined;
  now: Date;
  /** Resubmit a pending change that has not taken effect after this long (default 60 s). */
  resubmitAfterMs?: number;
}

export type MembershipAction =
  | { type: 'none' }
  | { type: 'wait'; reason: string }
  | { type: 'submit'; change: ValidatorChange; via: string; resubmission: boolean }
  | { type: 'deleteWorkload'; name: string };

/** True when the chain's active set already reflects the change (ADD: listed; REMOVE: not listed). */
export function isChangeApplied(change: ValidatorChange, activeSet: readonly string[]): boolean {
  return activeSet.includes(change.validator) === (change.action === 'ADD');
}

const short = (key: string) => `${key.slice(0, 8)}…`;

interface View {
  active: Set<string>;
  healthy: Set<string>;
  height: number;
  nameOf: Map<string, string>;
  memberByKey: Map<string, ObservedMember>;
}

function caughtUp(height: number | undefined, chainHeight: number): boolean {
  return height !== undefined && Number.isInteger(height) && height >= chainHeight - 1;
}

/** The guard: would the active set after `change` still hold a quorum of healthy validators? */
function quorumAfter(change: ValidatorChange, v: View): { ok: boolean; healthy: number; size: number; quorum: number } {
  const active = new Set(v.active);
  const healthy = new Set([...v.healthy].filter((k) => active.has(k)));
  if (change.action === 'ADD') {
    active.add(change.validator);
    if (v.healthy.has(change.validator)) healthy.add(change.validator);
  } else {
    active.delete(change.validator);
    healthy.delete(change.validator);
  }
  const quorum = quorumSize(active.size);
  return { ok: active.size > 0 && healthy.size >= quorum, healthy: healthy.size, size: active.size, quorum };
}

/**
 * A healthy operator-run node to submit through: an active validator, preferring desired ones in spec order; when
 * this cluster has none in the set yet (it is joining another organization's chain), a healthy follower of its own,
 * which gossips the change to the validators.
 */
function pickVia(v: View, desired: readonly DesiredValidator[], avoid: readonly string[]): string | undefined {
  const candidates = [...desired.map((d) => d.publicKey), ...v.memberByKey.keys()];
  for (const activeOnly of [true, false]) {
    let fallback: string | undefined;
    for (const key of candidates) {
      const member = v.memberByKey.get(key);
      if (!member || (activeOnly && !v.active.has(key)) || !v.healthy.has(key)) continue;
      if (!avoid.includes(key) && !avoid.includes(member.name)) return member.name;
      fallback ??= member.name;
    }
    if (fallback !== undefined) return fallback;
  }
  return undefined;
}

function describeGuard(change: ValidatorChange, name: string, g: ReturnType<typeof quorumAfter>): string {
  const verb = change.action === 'ADD' ? 'adding' : 'removing';
  return `${verb} ${name} would leave ${g.healthy} healthy of ${g.size} validators (quorum ${g.quorum})`;
}

function submitOrWait(
  change: ValidatorChange,
  name: string,
  v: View,
  input: MembershipInput,
  resubmission: boolean,
): MembershipAction {
  // The change itself must be finalized by the current set: without a healthy quorum it would only sit in mempools.
  const healthyNow = [...v.active].filter((k) => v.healthy.has(k)).length;
  const quorumNow = quorumSize(v.active.size);
  if (healthyNow < quorumNow)
    return {
      type: 'wait',
      reason: `the chain has ${healthyNow} healthy of ${v.active.size} validators (quorum ${quorumNow}): no change can be finalized`,
    };
  const guard = quorumAfter(change, v);
  if (!guard.ok) return { type: 'wait', reason: describeGuard(change, name, guard) };
  // Through another node than the one the change is about, and on resubmission than the one that lost it.
  const avoid = [change.validator, ...(resubmission && input.pending?.via ? [input.pending.via] : [])];
  const via = pickVia(v, input.desired, avoid);
  if (via === undefined) return { type: 'wait', reason: `no healthy operator-run validator to submit through` };
  return { type: 'submit', change, via, resubmission };
}

/**
 * Plans the next membership step. Call it on every reconcile; apply the action; on `submit`, record
 * `{change, via, submittedAt: now}` as the pending change; clear it once `isChangeApplied` holds.
 * @example planMembership({ desired, members, chain: { height: 40, validators: keys }, now: new Date() })
 */
export function planMembership(input: MembershipInput): MembershipAction {
  const { chain } = input;
  if (chain === undefined) return { type: 'wait', reason: 'no ledger node answered GET /chain' };
  const external = input.external ?? [];

  const keys = [...input.desired.map((d) => d.publicKey), ...external.map((e) => e.publicKey)];
  if (new Set(keys).size !== keys.length)
    return { type: 'wait', reason: 'a public key appears twice among desired and external validators' };
  const desiredNames = input.desired.map((d) => d.name);
  if (new Set(desiredNames).size !== desiredNames.length)
    return { type: 'wait', reason: 'a validator name appears twice among desired validators' };

  const nameOf = new Map<string, string>();
  const memberByKey = new Map<string, ObservedMember>();
  for (const m of input.members) {
    memberByKey.set(m.publicKey, m);
    nameOf.set(m.publicKey, m.name);
  }
  for (const d of input.desired) nameOf.set(d.publicKey, d.name);
  for (const e of external) nameOf.set(e.publicKey, `external ${short(e.publicKey)}`);

  const healthy = new Set<string>();
  for (const m of input.members) if (m.ready && caughtUp(m.height, chain.height)) healthy.add(m.publicKey);
  for (const e of external)
    if (e.ready === true && (e.height === undefined || caughtUp(e.height, chain.height))) healthy.add(e.publicKey);
  const v: View = { active: new Set(chain.validators), healthy, height: chain.height, nameOf, memberByKey };
  const desiredKeys = new Set(input.desired.map((d) => d.publicKey));
  const externalKeys = new Set(external.map((e) => e.publicKey));
  const wanted = (key: string) => desiredKeys.has(key) || externalKeys.has(key);
  const name = (key: string) => nameOf.get(key) ?? short(key);

  // 1. One change at a time: a submitted change that has not taken effect blocks every other change.
  const pending = input.pending;
  const pendingOpen = pending !== undefined && !isChangeApplied(pending.change, chain.validators);
  if (pending !== undefined && pendingOpen) {
    const age = input.now.getTime() - pending.submittedAt.getTime();
    const limit = input.resubmitAfterMs ?? DEFAULT_RESUBMIT_AFTER_MS;
    const stillWanted = (pending.change.action === 'ADD') === wanted(pending.change.validator);
    const label = `${pending.change.action} ${name(pending.change.validator)}`;
    if (!(age >= limit)) return { type: 'wait', reason: `${label} submitted, not finalized yet` };
    if (stillWanted) {
      if (pending.change.action === 'ADD') {
        const m = memberByKey.get(pending.change.validator);
        if (!m || !healthy.has(m.publicKey))
          return {
            type: 'wait',
            reason: `${label} not finalized; ${name(pending.change.validator)} not ready to resubmit`,
          };
      }
      return submitOrWait(pending.change, name(pending.change.validator), v, input, true);
    }
    // Lapsed and no longer wanted: plan afresh (below). The change may still sit in the nodes' mempools and
    // land later, so the workload an open ADD names is kept (once it lands, step 4 removes it again).
  }
  const inFlightAdd = pendingOpen && pending?.change.action === 'ADD' ? pending.change.validator : undefined;
  const waits: string[] = [];
  if (inFlightAdd !== undefined && !wanted(inFlightAdd) && memberByKey.has(inFlightAdd))
    waits.push(
      `ADD ${name(inFlightAdd)} lapsed and is no longer wanted: its workload stays until the chain settles it`,
    );

  // 2. Clean up: a retired member the chain no longer lists can go.
  for (const m of input.members) {
    if (wanted(m.publicKey) || v.active.has(m.publicKey) || m.publicKey === inFlightAdd) continue;
    return { type: 'deleteWorkload', name: m.name };
  }

  // 3. ADD the first desired validator missing from the chain that is ready and caught up.
  const toAdd: { key: string; label: string }[] = [];
  for (const d of input.desired) if (!v.active.has(d.publicKey)) toAdd.push({ key: d.publicKey, label: d.name });
  for (const e of external) if (!v.active.has(e.publicKey)) toAdd.push({ key: e.publicKey, label: name(e.publicKey) });
  for (const { key, label } of toAdd) {
    const m = memberByKey.get(key);
    const isExternal = externalKeys.has(key);
    if (!isExternal && !m) {
      waits.push(`${label}: no workload yet`);
      continue;
    }
    if (!healthy.has(key)) {
      const h = isExternal ? external.find((e) => e.publicKey === key)?.height : m?.height;
      waits.push(`${label}: not ready or not caught up (height ${h ?? 'unknown'} of ${chain.height})`);
      continue;
    }
    const action = submitOrWait({ action: 'ADD', validator: key }, label, v, input, false);
    if (action.type === 'submit') return action;
    waits.push(action.type === 'wait' ? action.reason : label);
  }

  // 4. REMOVE an operator-run validator the spec no longer wants: unhealthy ones first (that helps liveness).
  const toRemove = input.members
    .filter((m) => v.active.has(m.publicKey) && !wanted(m.publicKey))
    .sort((a, b) => Number(healthy.has(a.publicKey)) - Number(healthy.has(b.publicKey)));
  for (const m of toRemove) {
    const action = submitOrWait({ action: 'REMOVE', validator: m.publicKey }, m.name, v, input, false);
    if (action.type === 'submit') return action;
    waits.push(action.type === 'wait' ? action.reason : m.name);
  }

  if (waits.length > 0) return { type: 'wait', reason: waits.join('; ') };
  return { type: 'none' };
}
