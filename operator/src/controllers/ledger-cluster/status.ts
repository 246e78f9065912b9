import { quorumSize } from '@scriptorium/ledger-protocol';
import type { Gauge } from 'prom-client';
import type { Condition, LedgerCluster, LedgerClusterSpec } from '../../api/index.ts';
import type { EventInput } from '../../kube/events.ts';
import { RESOURCES } from '../../kube/resources.ts';
import type { KubeObject } from '../../kube/types.ts';
import type { Metrics } from '../../metrics.ts';
import { selectorString } from '../../specs/ledger-cluster/index.ts';
import { type ConditionInput, getCondition } from '../../status/conditions.ts';
import type { Status } from '../../status/status-writer.ts';
import { type Cond, type ConditionsReport, writeConditions } from '../reconcile-frame.ts';
import type { BackupReport } from './backup-status.ts';
import { type LedgerReconcileDeps, PROGRESS_MS, RESYNC_MS, type Result } from './deps.ts';
import type { PendingStatus } from './membership-plan.ts';
import type { ClusterObservation } from './observe.ts';
import type { RotationOutcome } from './rotation-plan.ts';

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
  /** When this reconcile looked (the clock of the stall diagnosis; now when absent). */
  now?: Date;
  /** Backups, drills and restores (backup-status.ts). */
  backup?: BackupReport;
  /** A key rotation's state after this reconcile's step. */
  keyRotation?: RotationOutcome;
}

export interface MembershipOutcome {
  pending: PendingStatus | undefined;
  /** Why no change could be made now (planner `wait`, or a failed submission). */
  waiting: string | undefined;
  /** A retired validator whose workload this reconcile deleted. */
  deleted: string | undefined;
}

/** Whether consensus makes progress: the stall and round-change-storm diagnosis of one reconcile (pure). */
export interface ProgressDiagnosis {
  /** When the operator first saw the current height (carried over while the height stays). */
  lastHeightChange: string | undefined;
  /** Seconds since then; undefined while no node reports a height. */
  secondsSinceHeightChange: number | undefined;
  /** Records or a membership change wait to be finalized. */
  pendingWork: boolean;
  /** No block for `stallAfterSeconds` while work is pending. */
  stalled: boolean;
  /** A validator is at `roundChangeStormRound` or higher at its open height. */
  storm: boolean;
  /** Seconds until a stall would be declared (the next look), when the height is still and work pending. */
  stallInSeconds: number | undefined;
}

export function diagnoseProgress(lc: LedgerCluster, spec: LedgerClusterSpec, s: Snapshot): ProgressDiagnosis {
  const now = s.now ?? new Date();
  const height = s.observation.height;
  const previous = lc.status?.lastHeightChange;
  let lastHeightChange = previous;
  if (height !== undefined && (height !== lc.status?.height || previous === undefined)) {
    lastHeightChange = now.toISOString().replace(/\.\d{3}Z$/, 'Z');
  }
  const since = lastHeightChange !== undefined ? Date.parse(lastHeightChange) : Number.NaN;
  const secondsSinceHeightChange =
    height !== undefined && Number.isFinite(since) ? Math.max(0, (now.getTime() - since) / 1000) : undefined;
  const pendingWork = (s.observation.pendingRecords ?? 0) > 0 || s.membership.pending !== undefined;
  const { stallAfterSeconds, roundChangeStormRound } = spec.diagnostics;
  const stalled =
    pendingWork && secondsSinceHeightChange !== undefined && secondsSinceHeightChange >= stallAfterSeconds;
  const stallInSeconds =
    pendingWork && !stalled && secondsSinceHeightChange !== undefined
      ? stallAfterSeconds - secondsSinceHeightChange
      : undefined;
  return {
    lastHeightChange,
    secondsSinceHeightChange,
    pendingWork,
    stalled,
    storm: s.observation.round !== undefined && s.observation.round >= roundChangeStormRound,
    stallInSeconds,
  };
}

/**
 * The status a reconcile reports, derived from what it saw (pure): conditions and the status fields.
 * `Progressing` is False with reason `Stalled` while the chain makes no progress with work pending; otherwise it
 * names the first thing under way: pods starting, a held-back rollout, a membership change, the planner's wait, a
 * retirement. `RoundChangeStorm` is True while a validator's round at its open height is at the configured round
 * or higher (present once a node's metrics have answered).
 */
/** The witnessing part of the status (pure): per-witness fields, the coverage and the `Witnessed` condition. */
export interface WitnessingReport {
  fields: Pick<Status, 'witnessedSize' | 'unwitnessedSince' | 'witnesses'>;
  /** Undefined when no witness is configured or no node answered. */
  condition: ConditionInput | undefined;
  /** Seconds the oldest uncovered block has waited (0: all covered). */
  unwitnessedSeconds: number | undefined;
}

const rfc3339 = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

export function witnessingStatus(spec: LedgerClusterSpec, s: Snapshot): WitnessingReport {
  const view = s.observation.witnesses;
  if (spec.witnesses.length === 0 || !view)
    return {
      fields: { witnessedSize: undefined, unwitnessedSince: undefined, witnesses: undefined },
      condition: undefined,
      unwitnessedSeconds: undefined,
    };
  const now = (s.now ?? new Date()).getTime();
  const age = view.unwitnessed_since === null ? 0 : Math.max(0, (now - view.unwitnessed_since) / 1000);
  const threshold = view.threshold;
  const { unwitnessedAfterSeconds } = spec.witnessPolicy;
  const errors = view.witnesses
    .filter((w) => w.last_error)
    .map((w) => `${w.name}: ${w.last_error}`)
    .join('; ');
  let condition: ConditionInput;
  if (view.witnesses.length === 0)
    condition = {
      type: 'Witnessed',
      status: 'Unknown',
      reason: 'NotSubmitting',
      message: 'The validators do not submit checkpoints to the witnesses yet (their settings are rolling out)',
    };
  else if (view.unwitnessed_since === null)
    condition = {
      type: 'Witnessed',
      status: 'True',
      reason: 'PolicyMet',
      message: `Every block is in checkpoint ${view.witnessed_size} cosigned by ${threshold} of ${view.witnesses.length} witnesses`,
    };
  else if (age <= unwitnessedAfterSeconds)
    condition = {
      type: 'Witnessed',
      status: 'True',
      reason: 'CatchingUp',
      message: `Blocks from ${view.witnessed_size} are waiting ${Math.floor(age)} s for a checkpoint cosigned by ${threshold} of ${view.witnesses.length} witnesses (false after ${unwitnessedAfterSeconds} s)`,
    };
  else
    condition = {
      type: 'Witnessed',
      status: 'False',
      reason: 'Unwitnessed',
      message:
        `Blocks from ${view.witnessed_size} have been in no checkpoint cosigned by ${threshold} of ${view.witnesses.length} witnesses for ${Math.floor(age)} s${errors ? `: ${errors}` : ''}`.slice(
          0,
          1000,
        ),
    };
  return {
    fields: {
      witnessedSize: view.witnessed_size,
      unwitnessedSince: view.unwitnessed_since === null ? undefined : rfc3339(view.unwitnessed_since),
      witnesses: view.witnesses.map((w) => ({
        name: w.name,
        cosignedSize: w.size,
        behind: Math.max(0, view.size - w.size),
        ...(w.cosigned_at !== null ? { cosignedAt: rfc3339(w.cosigned_at * 1000) } : {}),
        ...(w.last_error ? { lastError: w.last_error.slice(0, 300) } : {}),
      })),
    },
    condition,
    unwitnessedSeconds: age,
  };
}

export function ledgerStatus(
  lc: LedgerCluster,
  spec: LedgerClusterSpec,
  s: Snapshot,
): ConditionsReport & {
  fields: Partial<Status>;
  diagnosis: ProgressDiagnosis;
  quorumAtRisk: boolean;
  witnessing: WitnessingReport;
} {
  const diagnosis = diagnoseProgress(lc, spec, s);
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
  const quorum = activeCount !== undefined ? quorumSize(activeCount) : undefined;
  const healthyActive = s.observation.members.filter((m) => m.reachable && active?.has(m.publicKey)).length;
  // Validators this cluster does not run: the spec's external ones, and another organization's in a joined chain,
  // counted healthy when this cluster's nodes reached them lately (their pull sync).
  const ours = new Set(s.observation.members.map((m) => m.publicKey));
  const notOurs = [...(active ?? [])].filter((k) => !ours.has(k));
  const external = notOurs.filter(
    (k) =>
      (s.observation.peerHeights?.get(k) ?? null) !== null ||
      (s.observation.peerHeights === undefined && spec.externalValidators.some((e) => e.publicKey === k)),
  ).length;
  const quorumAtRisk = quorum !== undefined && healthyActive + external < quorum;
  // Pods that are Ready but whose API the operator cannot reach: the operator's view is partial.
  const unreachableReady = s.observation.members.filter((m) => m.podReady && !m.reachable).map((m) => m.name);
  let degraded: Cond = { status: 'False', reason: 'AsExpected', message: 'All objects applied' };
  if (unreachableReady.length > 0) {
    degraded = {
      status: 'True',
      reason: 'NodesUnreachable',
      message: `The operator cannot reach the API of ${unreachableReady.join(', ')}`,
    };
  } else if (s.backup?.degraded) {
    degraded = s.backup.degraded;
  } else if (quorumAtRisk) {
    degraded = {
      status: 'True',
      reason: 'QuorumAtRisk',
      message: `${healthyActive} of ${activeCount} active validators answer here (+${external} external); quorum is ${quorum}`,
    };
  }
  let progressing: Cond;
  if (diagnosis.stalled) {
    const records = s.observation.pendingRecords ?? 0;
    const what = [records > 0 ? `${records} records` : '', s.membership.pending ? 'a membership change' : '']
      .filter(Boolean)
      .join(' and ');
    progressing = {
      status: 'False',
      reason: 'Stalled',
      message: `No block finalized for ${Math.floor(diagnosis.secondsSinceHeightChange ?? 0)} s (height ${s.observation.height}, round ${s.observation.round ?? '?'}) while ${what} wait`,
    };
  } else if (readyCount < s.desired.length) {
    const notReady = s.desired.filter((v) => !s.podReady.get(v));
    progressing = {
      status: 'True',
      reason: 'ValidatorsStarting',
      message: `${readyCount}/${s.desired.length} validators ready (waiting for ${notReady.slice(0, 5).join(', ')}${notReady.length > 5 ? ', …' : ''})`,
    };
  } else if (s.keyRotation?.active) {
    const r = s.keyRotation.state;
    progressing = {
      status: 'True',
      reason: 'RotatingKey',
      message:
        `Rotating ${r?.validator}'s key: step ${r?.step}${r?.since ? ` since ${r.since}` : ''}${s.keyRotation.message ? ` (${s.keyRotation.message})` : ''}`.slice(
          0,
          1000,
        ),
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
  const others: ConditionInput[] = [...(s.backup?.others ?? [])];
  if (s.observation.round !== undefined) {
    const round = s.observation.round;
    others.push(
      diagnosis.storm
        ? {
            type: 'RoundChangeStorm',
            status: 'True',
            reason: 'RoundsRising',
            message: `A validator is at round ${round} of height ${(s.observation.height ?? 0) + 1}; its round timeout is ${2 ** Math.min(round, 30)} × the base`,
          }
        : {
            type: 'RoundChangeStorm',
            status: 'False',
            reason: 'RoundsNormal',
            message: `Highest round at the open height: ${round} (storm from ${spec.diagnostics.roundChangeStormRound})`,
          },
    );
  }
  const witnessing = witnessingStatus(spec, s);
  if (witnessing.condition) others.push(witnessing.condition);
  return {
    degraded,
    progressing,
    others,
    ...(spec.witnesses.length === 0 ? { drop: ['Witnessed'] } : {}),
    diagnosis,
    quorumAtRisk,
    witnessing,
    fields: {
      ...witnessing.fields,
      validators: readyCount,
      selector: selectorString(lc),
      height: s.observation.height,
      lastHeightChange: diagnosis.lastHeightChange,
      round: s.observation.round,
      pendingRecords: s.observation.pendingRecords,
      activeValidators: activeCount,
      quorum,
      members,
      pendingChange: s.membership.pending,
      ...(s.backup ? { backup: s.backup.backup } : {}),
      ...(s.keyRotation ? { keyRotation: s.keyRotation.state } : {}),
    },
  };
}

/** The Events of a diagnosis that started or ended with this reconcile (pure): a Warning to start, Normal to end. */
export function diagnosisEvents(before: Condition[] | undefined, report: ConditionsReport): EventInput[] {
  const events: EventInput[] = [];
  const wasStalled = getCondition(before, 'Progressing')?.reason === 'Stalled';
  const isStalled = report.progressing.reason === 'Stalled';
  if (isStalled && !wasStalled) {
    events.push({ type: 'Warning', reason: 'Stalled', action: 'Diagnose', note: report.progressing.message });
  } else if (wasStalled && !isStalled) {
    events.push({ type: 'Normal', reason: 'StallEnded', action: 'Diagnose', note: 'Blocks are finalized again' });
  }
  const witnessed = report.others?.find((c) => c.type === 'Witnessed');
  const wasWitnessed = getCondition(before, 'Witnessed')?.status;
  if (witnessed?.status === 'False' && wasWitnessed !== 'False') {
    events.push({ type: 'Warning', reason: 'Unwitnessed', action: 'Diagnose', note: witnessed.message });
  } else if (wasWitnessed === 'False' && witnessed?.status === 'True') {
    events.push({ type: 'Normal', reason: 'WitnessedAgain', action: 'Diagnose', note: witnessed.message });
  }
  const storm = report.others?.find((c) => c.type === 'RoundChangeStorm');
  const wasStorm = getCondition(before, 'RoundChangeStorm')?.status === 'True';
  if (storm?.status === 'True' && !wasStorm) {
    events.push({ type: 'Warning', reason: 'RoundChangeStorm', action: 'Diagnose', note: storm.message });
  } else if (wasStorm && storm?.status === 'False') {
    events.push({ type: 'Normal', reason: 'RoundChangeStormEnded', action: 'Diagnose', note: storm.message });
  }
  return events;
}

export async function reportStatus(
  deps: LedgerReconcileDeps,
  lcObj: KubeObject,
  spec: LedgerClusterSpec,
  s: Snapshot,
): Promise<Result> {
  const lc = lcObj as LedgerCluster;
  const report = ledgerStatus(lc, spec, s);
  // The gauges first: once the status shows a diagnosis, /metrics shows it too.
  recordClusterMetrics(deps.metrics, lc, s, report);
  await writeConditions(deps, RESOURCES.LedgerCluster, lcObj, report);
  for (const event of diagnosisEvents(lc.status?.conditions, report)) await deps.recorder.record(lcObj, event);
  for (const event of s.backup?.events ?? []) await deps.recorder.record(lcObj, event);
  const { diagnosis } = report;
  // Witnessing waits on the clock too: look again soon while blocks wait for a witnessed checkpoint.
  const unwitnessed = (report.witnessing.unwitnessedSeconds ?? 0) > 0;
  if (report.progressing.status === 'True' || diagnosis.stalled || diagnosis.storm || unwitnessed)
    return { requeueAfterMs: PROGRESS_MS };
  // A still height with work pending is looked at again when it would count as a stall.
  if (diagnosis.stallInSeconds !== undefined) {
    return { requeueAfterMs: Math.min(RESYNC_MS, Math.max(PROGRESS_MS, Math.ceil(diagnosis.stallInSeconds * 1000))) };
  }
  return { requeueAfterMs: RESYNC_MS };
}

/** The cluster's gauges on the operator's /metrics (the alert rules and the dashboard read them). */
function recordClusterMetrics(
  metrics: Metrics | undefined,
  lc: LedgerCluster,
  s: Snapshot,
  report: ReturnType<typeof ledgerStatus>,
): void {
  if (!metrics) return;
  const labels = { namespace: lc.metadata.namespace ?? '', name: lc.metadata.name };
  const { diagnosis, fields } = report;
  const set = (gauge: Gauge<'namespace' | 'name'>, value: number | undefined) => {
    if (value === undefined) gauge.remove(labels);
    else gauge.set(labels, value);
  };
  const active = s.observation.activeKeys ? new Set(s.observation.activeKeys) : undefined;
  set(metrics.ledger.height, s.observation.height);
  set(metrics.ledger.round, s.observation.round);
  set(metrics.ledger.pendingRecords, s.observation.pendingRecords);
  set(metrics.ledger.secondsSinceHeightChange, diagnosis.secondsSinceHeightChange);
  set(metrics.ledger.stalled, diagnosis.stalled ? 1 : 0);
  set(metrics.ledger.roundChangeStorm, diagnosis.storm ? 1 : 0);
  set(metrics.ledger.activeValidators, fields.activeValidators as number | undefined);
  set(metrics.ledger.quorum, fields.quorum as number | undefined);
  set(
    metrics.ledger.reachableValidators,
    active ? s.observation.members.filter((m) => m.reachable && active.has(m.publicKey)).length : undefined,
  );
  set(metrics.ledger.unreachableValidators, s.observation.unreachable.length);
  set(metrics.ledger.quorumAtRisk, report.quorumAtRisk ? 1 : 0);
  const backup = s.backup?.gauges ?? {};
  set(metrics.ledger.backupHeight, backup.height);
  set(metrics.ledger.backupAgeSeconds, backup.ageSeconds);
  set(metrics.ledger.backupBehind, backup.behind);
  set(metrics.ledger.backupVerified, backup.verified);
  set(metrics.ledger.backupVerifiedHeight, backup.verifiedHeight);
  const { witnessing } = report;
  set(metrics.ledger.witnessed, witnessing.condition ? (witnessing.condition.status === 'True' ? 1 : 0) : undefined);
  set(metrics.ledger.unwitnessedSeconds, witnessing.unwitnessedSeconds);
  const seen = new Set<string>();
  for (const w of witnessing.fields.witnesses ?? []) {
    seen.add(w.name);
    metrics.ledgerWitness.cosignedSize.set({ ...labels, witness: w.name }, w.cosignedSize);
    metrics.ledgerWitness.behind.set({ ...labels, witness: w.name }, w.behind);
  }
  // Witnesses the status showed last time and no longer lists: their series go.
  for (const old of lc.status?.witnesses ?? [])
    if (!seen.has(old.name))
      for (const g of Object.values(metrics.ledgerWitness)) g.remove({ ...labels, witness: old.name });
}

/** Removes a deleted cluster's gauges. */
export function forgetClusterMetrics(metrics: Metrics | undefined, lc: KubeObject): void {
  if (!metrics) return;
  const labels = { namespace: lc.metadata.namespace ?? '', name: lc.metadata.name ?? '' };
  for (const gauge of Object.values(metrics.ledger)) gauge.remove(labels);
  const witnesses = (lc as LedgerCluster).status?.witnesses ?? [];
  for (const w of witnesses)
    for (const gauge of Object.values(metrics.ledgerWitness)) gauge.remove({ ...labels, witness: w.name });
}
