// What the backup Jobs, the drill Jobs and the restore init containers said, read from their pods' termination
// messages (the commands' one-line JSON result), and what the LedgerCluster's status, conditions, Events and
// gauges make of it (pure: tested against fixture pods).
import type { LedgerCluster, LedgerClusterSpec, LedgerClusterStatus } from '../../api/index.ts';
import type { EventInput } from '../../kube/events.ts';
import type { KubeObject } from '../../kube/types.ts';
import { CLUSTER_LABEL, VALIDATOR_LABEL } from '../../specs/ledger-cluster/index.ts';
import { COMPONENT_LABEL } from '../../specs/meta.ts';
import type { ConditionInput } from '../../status/conditions.ts';
import type { Cond } from '../reconcile-frame.ts';

export interface JobResult {
  /** The Job (the pod's `job-name` label). */
  job: string;
  kind: 'backup' | 'backup-verify';
  ok: boolean;
  finishedAt: string;
  height?: number;
  reason?: string;
  segments?: number;
}

interface Terminated {
  exitCode?: number;
  message?: string;
  finishedAt?: string;
}

function parseResult(message: string | undefined): Record<string, unknown> | undefined {
  if (!message) return undefined;
  try {
    const value = JSON.parse(message) as unknown;
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function terminatedOf(statuses: unknown, name?: string): Terminated | undefined {
  const list = (statuses ?? []) as Array<{
    name: string;
    state?: { terminated?: Terminated };
    lastState?: { terminated?: Terminated };
  }>;
  const s = name ? list.find((c) => c.name === name) : list[0];
  return s?.state?.terminated ?? s?.lastState?.terminated;
}

/** Results of the cluster's finished backup and drill pods, oldest first. */
export function jobResults(pods: readonly KubeObject[], cluster: string): JobResult[] {
  const out: JobResult[] = [];
  for (const pod of pods) {
    const labels = pod.metadata.labels ?? {};
    const kind = labels[COMPONENT_LABEL];
    if (labels[CLUSTER_LABEL] !== cluster || (kind !== 'backup' && kind !== 'backup-verify')) continue;
    const t = terminatedOf(pod.status?.containerStatuses);
    if (!t?.finishedAt) continue;
    const r = parseResult(t.message);
    out.push({
      job: labels['job-name'] ?? labels['batch.kubernetes.io/job-name'] ?? pod.metadata.name ?? '',
      kind,
      ok: t.exitCode === 0 && r?.ok === true,
      finishedAt: t.finishedAt,
      ...(typeof r?.height === 'number' ? { height: r.height } : {}),
      ...(typeof r?.reason === 'string'
        ? { reason: r.reason }
        : t.exitCode !== 0 && !r
          ? { reason: `exit code ${t.exitCode}` }
          : {}),
      ...(typeof r?.segments === 'number' ? { segments: r.segments } : {}),
    });
  }
  return out.sort((a, b) => a.finishedAt.localeCompare(b.finishedAt));
}

export interface RestoreRefusal {
  validator: string;
  height?: number;
  reason: string;
}

/** Validators whose restore init container refused the backup (the node never started from it). */
export function restoreRefusals(pods: readonly KubeObject[], cluster: string): RestoreRefusal[] {
  const out: RestoreRefusal[] = [];
  for (const pod of pods) {
    const labels = pod.metadata.labels ?? {};
    if (labels[CLUSTER_LABEL] !== cluster || labels[COMPONENT_LABEL] !== 'validator') continue;
    const t = terminatedOf(pod.status?.initContainerStatuses, 'restore');
    if (!t || t.exitCode === 0) continue;
    const r = parseResult(t.message);
    out.push({
      validator: labels[VALIDATOR_LABEL] ?? pod.metadata.name ?? '',
      ...(typeof r?.height === 'number' ? { height: r.height } : {}),
      reason: typeof r?.reason === 'string' ? r.reason : `the restore exited with ${t.exitCode}`,
    });
  }
  return out;
}

export interface BackupReport {
  backup: LedgerClusterStatus['backup'];
  others: ConditionInput[];
  events: EventInput[];
  /** A refused restore: Degraded. */
  degraded: Cond | undefined;
  gauges: { height?: number; ageSeconds?: number; behind?: number; verified?: number; verifiedHeight?: number };
}

/**
 * The backup part of a reconcile's report: the newest backup and drill results against what the status already
 * shows (a result is reported, with its Event, once), `BackupBehind` (no successful backup within
 * `maxAgeSeconds`), `BackupVerified` (the newest drill), and a refused restore.
 */
export function backupReport(
  lc: LedgerCluster,
  spec: LedgerClusterSpec,
  results: readonly JobResult[],
  refusals: readonly RestoreRefusal[],
  chainHeight: number | undefined,
  now: Date,
): BackupReport {
  const before = lc.status?.backup ?? {};
  const backup = { ...before };
  const events: EventInput[] = [];
  const others: ConditionInput[] = [];
  const backups = results.filter((r) => r.kind === 'backup');
  const drills = results.filter((r) => r.kind === 'backup-verify');
  const latestOk = backups.filter((r) => r.ok).at(-1);
  if (latestOk && latestOk.finishedAt >= (backup.lastTime ?? '') && latestOk.job !== backup.lastJob) {
    backup.lastJob = latestOk.job;
    backup.lastTime = latestOk.finishedAt;
    if (latestOk.height !== undefined) backup.lastHeight = latestOk.height;
    delete backup.lastError;
    events.push({
      type: 'Normal',
      reason: 'BackupCompleted',
      action: 'Backup',
      note: `Backup ${latestOk.job}: the chain up to height ${latestOk.height ?? '?'} is in the bucket (${latestOk.segments ?? 0} new segments)`,
    });
  }
  const latest = backups.at(-1);
  if (latest && !latest.ok && latest.finishedAt > (backup.lastTime ?? '')) {
    const error =
      `${latest.job}: ${latest.height !== undefined ? `height ${latest.height}: ` : ''}${latest.reason ?? 'failed'}`.slice(
        0,
        1000,
      );
    if (error !== backup.lastError) {
      backup.lastError = error;
      events.push({ type: 'Warning', reason: 'BackupFailed', action: 'Backup', note: `Backup ${error}` });
    }
  }
  const drill = drills.at(-1);
  if (drill && drill.job !== backup.verifyJob) {
    backup.verifyJob = drill.job;
    backup.verifiedTime = drill.finishedAt;
    if (drill.ok && drill.height !== undefined) backup.verifiedHeight = drill.height;
    events.push(
      drill.ok
        ? {
            type: 'Normal',
            reason: 'BackupVerified',
            action: 'Verify',
            note: `Drill ${drill.job}: the backup restored and verified from genesis to height ${drill.height}, and its tip is the live chain's`,
          }
        : {
            type: 'Warning',
            reason: 'BackupVerifyFailed',
            action: 'Verify',
            note: `Drill ${drill.job} failed at height ${drill.height ?? '?'}: ${drill.reason ?? 'failed'}`.slice(
              0,
              1000,
            ),
          },
    );
  }
  const gauges: BackupReport['gauges'] = {};
  if (spec.backup) {
    const ageSeconds = backup.lastTime ? Math.max(0, (now.getTime() - Date.parse(backup.lastTime)) / 1000) : undefined;
    const behindBy =
      chainHeight !== undefined && backup.lastHeight !== undefined ? chainHeight - backup.lastHeight : undefined;
    const stale = ageSeconds === undefined || ageSeconds > spec.backup.maxAgeSeconds;
    const createdAgo = lc.metadata.creationTimestamp
      ? (now.getTime() - Date.parse(lc.metadata.creationTimestamp)) / 1000
      : 0;
    if (ageSeconds === undefined && createdAgo <= spec.backup.maxAgeSeconds) {
      others.push({
        type: 'BackupBehind',
        status: 'False',
        reason: 'NoBackupYet',
        message: 'No backup has finished yet',
      });
    } else if (stale) {
      others.push({
        type: 'BackupBehind',
        status: 'True',
        reason: ageSeconds === undefined ? 'NoBackup' : 'Stale',
        message:
          ageSeconds === undefined
            ? `No successful backup within ${spec.backup.maxAgeSeconds} s${backup.lastError ? ` (last error: ${backup.lastError})` : ''}`
            : `The last successful backup (height ${backup.lastHeight}) finished ${Math.round(ageSeconds)} s ago, more than ${spec.backup.maxAgeSeconds} s${behindBy !== undefined ? `; the chain is ${behindBy} blocks ahead` : ''}${backup.lastError ? ` (last error: ${backup.lastError})` : ''}`,
      });
    } else {
      others.push({
        type: 'BackupBehind',
        status: 'False',
        reason: 'Current',
        message: `Backed up to height ${backup.lastHeight} ${Math.round(ageSeconds ?? 0)} s ago${behindBy !== undefined ? ` (${behindBy} blocks behind the chain)` : ''}`,
      });
    }
    gauges.height = backup.lastHeight;
    gauges.ageSeconds = ageSeconds;
    gauges.behind =
      stale && ageSeconds !== undefined
        ? 1
        : ageSeconds === undefined && createdAgo > spec.backup.maxAgeSeconds
          ? 1
          : 0;
    if (spec.backup.verify) {
      if (!drill) {
        others.push({
          type: 'BackupVerified',
          status: 'Unknown',
          reason: 'NoDrillYet',
          message: 'No restore drill has finished yet',
        });
      } else if (drill.ok) {
        others.push({
          type: 'BackupVerified',
          status: 'True',
          reason: 'DrillPassed',
          message: `${drill.job}: restored into scratch and verified from genesis to height ${drill.height}; its tip matches the live chain`,
        });
      } else {
        others.push({
          type: 'BackupVerified',
          status: 'False',
          reason: 'DrillFailed',
          message: `${drill.job}: height ${drill.height ?? '?'}: ${drill.reason ?? 'failed'}`.slice(0, 2000),
        });
      }
      gauges.verified = drill ? (drill.ok ? 1 : 0) : undefined;
      gauges.verifiedHeight = backup.verifiedHeight;
    }
  }
  let degraded: Cond | undefined;
  if (refusals.length > 0) {
    const r = refusals[0] as RestoreRefusal;
    const message =
      `The backup was refused, nothing started from it: ${r.validator}: height ${r.height ?? '?'}: ${r.reason}`.slice(
        0,
        2000,
      );
    degraded = { status: 'True', reason: 'BackupRefused', message };
    events.push({ type: 'Warning', reason: 'BackupRefused', action: 'Restore', note: message });
  }
  const changed = JSON.stringify(backup) !== JSON.stringify(before);
  return {
    backup: changed || lc.status?.backup ? backup : undefined,
    others,
    events,
    degraded,
    gauges,
  };
}
