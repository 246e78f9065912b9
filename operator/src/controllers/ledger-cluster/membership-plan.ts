// The membership step of a LedgerCluster reconcile: the pure planner (ledger/membership.ts) decides, this module acts (submit through
// one validator's POST /membership, or delete a retired validator's workload) and keeps status.pendingChange.
import type { LedgerClusterStatus } from '../../api/index.ts';
import { isChangeApplied, type MembershipAction, type PendingChange, planMembership } from '../../ledger/index.ts';
import type { ClusterObservation } from './observe.ts';

export type PendingStatus = NonNullable<LedgerClusterStatus['pendingChange']>;

/** The pending change recorded in status, in the planner's terms (names → public keys). */
export function pendingFromStatus(
  status: PendingStatus | undefined,
  keyOf: (name: string) => string | undefined,
): PendingChange | undefined {
  if (!status) return undefined;
  const key = keyOf(status.validator) ?? (/^[0-9a-f]{64}$/.test(status.validator) ? status.validator : undefined);
  const since = status.since ? Date.parse(status.since) : Number.NaN;
  if (!key || !Number.isFinite(since)) return undefined;
  return {
    change: { action: status.kind, validator: key },
    ...(status.via ? { via: status.via } : {}),
    submittedAt: new Date(since),
  };
}

export interface MembershipPlanInput {
  desired: ReadonlyArray<{ name: string; publicKey: string }>;
  externalKeys: readonly string[];
  observation: ClusterObservation;
  pending: PendingChange | undefined;
  now: Date;
  resubmitAfterMs?: number;
}

/**
 * Plan the next membership step from what the reconcile observed (pure): ledger/membership.ts's planner, plus one policy of the
 * reconciler: during a replacement (a desired validator not in the active set yet), a healthy validator is removed
 * only after the newcomer has joined, so the set never shrinks below its fault tolerance on the way
 * (4 → 5 → 4 rather than 4 → 3 → 4). An unhealthy one is removed at once (that helps liveness).
 */
export function planStep(input: MembershipPlanInput): MembershipAction {
  const action = planner(input);
  const active = input.observation.activeKeys;
  if (action.type !== 'submit' || action.change.action !== 'REMOVE' || !active) return action;
  const leaving = input.observation.members.find((m) => m.publicKey === action.change.validator);
  if (!leaving?.ready) return action;
  const joining = input.desired.filter((d) => !active.includes(d.publicKey));
  if (joining.length === 0) return action;
  return {
    type: 'wait',
    reason: `REMOVE ${leaving.name} waits until ${joining.map((d) => d.name).join(', ')} has joined (a replacement first adds, then removes)`,
  };
}

/**
 * The validators this cluster does not run, for the planner: the spec's external validators and every other key in
 * the active set (another organization's validators of a joined chain). An active one is as healthy as this cluster's
 * nodes saw it (the height their pull sync last read from it); one not in the set is never probed, so never ADDed
 * by this operator (whoever runs it adds it).
 */
export function othersOf(input: Pick<MembershipPlanInput, 'desired' | 'externalKeys' | 'observation'>) {
  const { observation } = input;
  const ours = new Set([...input.desired.map((d) => d.publicKey), ...observation.members.map((m) => m.publicKey)]);
  const active = new Set(observation.activeKeys ?? []);
  const keys = new Set([...input.externalKeys, ...[...active].filter((k) => !ours.has(k))]);
  return [...keys].map((publicKey) => {
    const seen = observation.peerHeights?.get(publicKey);
    return active.has(publicKey) && seen !== undefined && seen !== null
      ? { publicKey, ready: true, height: seen }
      : { publicKey };
  });
}

function planner(input: MembershipPlanInput): MembershipAction {
  const { observation } = input;
  return planMembership({
    desired: input.desired,
    external: othersOf(input),
    members: observation.members.map((m) => ({
      name: m.name,
      publicKey: m.publicKey,
      ready: m.ready,
      height: m.height,
    })),
    chain:
      observation.height !== undefined && observation.activeKeys
        ? { height: observation.height, validators: observation.activeKeys }
        : undefined,
    pending: input.pending,
    now: input.now,
    ...(input.resubmitAfterMs !== undefined ? { resubmitAfterMs: input.resubmitAfterMs } : {}),
  });
}

/** Whether the recorded pending change has taken effect on the observed chain. */
export function pendingSettled(pending: PendingChange | undefined, observation: ClusterObservation): boolean {
  return (
    pending !== undefined &&
    observation.activeKeys !== undefined &&
    isChangeApplied(pending.change, observation.activeKeys)
  );
}
