import type { LedgerCluster, LedgerClusterSpec } from '../../api/index.ts';
import { RESOURCES } from '../../kube/resources.ts';
import type { KubeObject } from '../../kube/types.ts';
import { quorumOf, selectorString } from '../../specs/ledger-cluster/index.ts';
import type { Status } from '../../status/status-writer.ts';
import { type Cond, type ConditionsReport, writeConditions } from '../reconcile-frame.ts';
import { type LedgerReconcileDeps, PROGRESS_MS, RESYNC_MS, type Result } from './deps.ts';
import type { PendingStatus } from './membership-plan.ts';
import type { ClusterObservation } from './observe.ts';

export interface Snapshot {
  desired: string[];
  members: string[];
  keys: Map<string, string>;
  genesisSet: Set<string>;
  podReady: Map<string, boolean>;
  observation: ClusterObservation;
  membership: MembershipOutcome;
  /** Validators whose changed StatefulSet waits for another validator's rollout. */
  heldBack: string[];
}

export interface MembershipOutcome {
  pending: PendingStatus | undefined;
  /** Why no change could be made now (planner `wait`, or a failed submission). */
  waiting: string | undefined;
  /** A retired validator whose workload this reconcile deleted. */
  deleted: string | undefined;
}

/**
 * The status a reconcile reports, derived from what it saw (pure): conditions and the status fields.
 * `Progressing` names the first thing under way: pods starting, a held-back rollout, a membership change, the
 * planner's wait, a retirement.
 */
export function ledgerStatus(
  lc: LedgerCluster,
  spec: LedgerClusterSpec,
  s: Snapshot,
): ConditionsReport & { fields: Partial<Status> } {
  const active = s.observation.activeKeys ? new Set(s.observation.activeKeys) : undefined;
  const readyCount = s.desired.filter((v) => s.podReady.get(v)).length;
  const members = s.members.map((v) => {
    const seen = s.observation.members.find((m) => m.name === v);
    const key = s.keys.get(v) ?? '';
    const isValidator = active ? active.has(key) : s.genesisSet.has(v);
    return {
      name: v,
      role: isValidator ? ('validator' as const) : ('follower' as const),
      ...(seen?.height !== undefined ? { height: seen.height } : {}),
    };
  });
  const activeCount = active?.size;
  const quorum = activeCount !== undefined ? quorumOf(activeCount) : undefined;
  // Pods that are Ready but whose API the operator cannot reach: the operator's view is partial.
  const unreachableReady = s.observation.members.filter((m) => m.podReady && !m.reachable).map((m) => m.name);
  let degraded: Cond = { status: 'False', reason: 'AsExpected', message: 'All objects applied' };
  if (unreachableReady.length > 0) {
    degraded = {
      status: 'True',
      reason: 'NodesUnreachable',
      message: `The operator cannot reach the API of ${unreachableReady.join(', ')}`,
    };
  } else if (quorum !== undefined && activeCount !== undefined) {
    const healthyActive = s.observation.members.filter((m) => m.reachable && active?.has(m.publicKey)).length;
    const external = spec.externalValidators.filter((e) => active?.has(e.publicKey)).length;
    if (healthyActive + external < quorum) {
      degraded = {
        status: 'True',
        reason: 'QuorumAtRisk',
        message: `${healthyActive} of ${activeCount} active validators answer here (+${external} external); quorum is ${quorum}`,
      };
    }
  }
  let progressing: Cond;
  if (readyCount < s.desired.length) {
    const notReady = s.desired.filter((v) => !s.podReady.get(v));
    progressing = {
      status: 'True',
      reason: 'ValidatorsStarting',
      message: `${readyCount}/${s.desired.length} validators ready (waiting for ${notReady.slice(0, 5).join(', ')}${notReady.length > 5 ? ', …' : ''})`,
    };
  } else if (s.heldBack.length > 0) {
    progressing = {
      status: 'True',
      reason: 'RollingOut',
      message: `Updating one validator at a time; waiting: ${s.heldBack.slice(0, 5).join(', ')}${s.heldBack.length > 5 ? ', …' : ''}`,
    };
  } else if (s.membership.pending) {
    const p = s.membership.pending;
    progressing = {
      status: 'True',
      reason: 'MembershipChange',
      message: `${p.kind} ${p.validator} submitted${p.via ? ` through ${p.via}` : ''} at ${p.since ?? '?'}; waiting until it is final`,
    };
  } else if (s.membership.waiting) {
    progressing = { status: 'True', reason: 'MembershipWaiting', message: s.membership.waiting.slice(0, 1000) };
  } else if (s.members.length > s.desired.length) {
    progressing = {
      status: 'True',
      reason: 'Retiring',
      message: `Retiring ${s.members.filter((v) => !s.desired.includes(v)).join(', ')}`,
    };
  } else {
    progressing = {
      status: 'False',
      reason: 'ValidatorsReady',
      message: `${readyCount}/${s.desired.length} validators ready`,
    };
  }
  return {
    degraded,
    progressing,
    fields: {
      validators: readyCount,
      selector: selectorString(lc),
      height: s.observation.height,
      activeValidators: activeCount,
      quorum,
      members,
      pendingChange: s.membership.pending,
    },
  };
}

export async function reportStatus(
  deps: LedgerReconcileDeps,
  lcObj: KubeObject,
  spec: LedgerClusterSpec,
  s: Snapshot,
): Promise<Result> {
  const report = ledgerStatus(lcObj as LedgerCluster, spec, s);
  await writeConditions(deps, RESOURCES.LedgerCluster, lcObj, report);
  return { requeueAfterMs: report.progressing.status === 'True' ? PROGRESS_MS : RESYNC_MS };
}
