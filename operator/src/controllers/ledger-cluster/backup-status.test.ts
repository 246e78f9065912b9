import { describe, expect, it } from 'vitest';
import type { LedgerClusterStatus } from '../../api/index.ts';
import type { KubeObject } from '../../kube/types.ts';
import { fixture, parsedSpec } from '../../specs/ledger-cluster/fixtures.ts';
import { backupReport, jobResults, restoreRefusals } from './backup-status.ts';

const store = {
  endpoint: 'https://s3.example:9000',
  bucket: 'backups',
  credentials: { accessKeyId: { name: 's', key: 'id' }, secretAccessKey: { name: 's', key: 'key' } },
};
const lcWith = (status: LedgerClusterStatus = {}) => ({
  ...fixture({ backup: { ...store, maxAgeSeconds: 3600, verify: { schedule: '@daily' } } }),
  status,
});
const now = new Date('2026-11-27T12:00:00Z');

function jobPod(component: string, job: string, finishedAt: string, exitCode: number, message: object): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `${job}-x`,
      labels: { 'scriptorium.dev/ledger-cluster': 'ledger', 'app.kubernetes.io/component': component, 'job-name': job },
    },
    status: {
      containerStatuses: [
        { name: component, state: { terminated: { exitCode, finishedAt, message: JSON.stringify(message) } } },
      ],
    },
  };
}

describe('backup status', () => {
  const ok = jobPod('backup', 'ledger-backup-1', '2026-11-27T11:30:00Z', 0, { ok: true, height: 120, segments: 2 });
  const failed = jobPod('backup', 'ledger-backup-2', '2026-11-27T11:45:00Z', 1, {
    ok: false,
    height: 0,
    reason: 'no node answered',
  });
  const drillOk = jobPod('backup-verify', 'ledger-backup-verify-1', '2026-11-27T11:40:00Z', 0, {
    ok: true,
    height: 120,
  });
  const drillBad = jobPod('backup-verify', 'ledger-backup-verify-2', '2026-11-27T11:50:00Z', 1, {
    ok: false,
    height: 57,
    reason: 'segment segments/000000000040-000000000080.ndjson.gz: SHA-256 1a2b… differs from the manifest’s 9f8e…',
  });

  it('reads the results from the pods’ termination messages, oldest first', () => {
    expect(jobResults([failed, ok, drillOk], 'ledger').map((r) => [r.job, r.ok, r.height])).toEqual([
      ['ledger-backup-1', true, 120],
      ['ledger-backup-verify-1', true, 120],
      ['ledger-backup-2', false, 0],
    ]);
    expect(jobResults([ok], 'other')).toEqual([]);
  });

  it('a successful backup: status, an Event once, BackupBehind False; a failure after it is kept as the last error', () => {
    const lc = lcWith();
    const first = backupReport(lc, parsedSpec(lc), jobResults([ok], 'ledger'), [], 130, now);
    expect(first.backup).toMatchObject({
      lastHeight: 120,
      lastJob: 'ledger-backup-1',
      lastTime: '2026-11-27T11:30:00Z',
    });
    expect(first.events.map((e) => e.reason)).toEqual(['BackupCompleted']);
    expect(first.others.find((c) => c.type === 'BackupBehind')).toMatchObject({ status: 'False', reason: 'Current' });
    expect(first.gauges).toMatchObject({ height: 120, ageSeconds: 1800, behind: 0 });
    // The same result again: no new Event.
    const again = backupReport(
      lcWith({ backup: first.backup }),
      parsedSpec(lc),
      jobResults([ok], 'ledger'),
      [],
      130,
      now,
    );
    expect(again.events).toEqual([]);
    const afterFailure = backupReport(
      lcWith({ backup: first.backup }),
      parsedSpec(lc),
      jobResults([ok, failed], 'ledger'),
      [],
      130,
      now,
    );
    expect(afterFailure.backup?.lastError).toMatch(/no node answered/);
    expect(afterFailure.events.map((e) => e.reason)).toEqual(['BackupFailed']);
  });

  it('falls behind when the last success is older than maxAgeSeconds', () => {
    const lc = lcWith();
    const later = new Date('2026-11-27T13:00:01Z');
    const r = backupReport(lc, parsedSpec(lc), jobResults([ok], 'ledger'), [], 500, later);
    expect(r.others.find((c) => c.type === 'BackupBehind')).toMatchObject({
      status: 'True',
      reason: 'Stale',
      message: expect.stringMatching(/height 120.*380 blocks ahead/),
    });
    expect(r.gauges.behind).toBe(1);
  });

  it('BackupVerified follows the newest drill: True after a good one, False with the reason after a bad one', () => {
    const lc = lcWith();
    const good = backupReport(lc, parsedSpec(lc), jobResults([ok, drillOk], 'ledger'), [], 130, now);
    expect(good.others.find((c) => c.type === 'BackupVerified')).toMatchObject({
      status: 'True',
      reason: 'DrillPassed',
    });
    expect(good.gauges).toMatchObject({ verified: 1, verifiedHeight: 120 });
    const bad = backupReport(
      lcWith({ backup: good.backup }),
      parsedSpec(lc),
      jobResults([ok, drillOk, drillBad], 'ledger'),
      [],
      130,
      now,
    );
    expect(bad.others.find((c) => c.type === 'BackupVerified')).toMatchObject({
      status: 'False',
      reason: 'DrillFailed',
      message: expect.stringMatching(/height 57: segment .* SHA-256/),
    });
    expect(bad.events.map((e) => e.reason)).toEqual(['BackupVerifyFailed']);
    expect(bad.gauges.verified).toBe(0);
    expect(
      backupReport(lc, parsedSpec(lc), [], [], 1, now).others.find((c) => c.type === 'BackupVerified')?.status,
    ).toBe('Unknown');
  });

  it('a refused restore is Degraded with the validator, the height and the reason', () => {
    const pod: KubeObject = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'ledger-v0-0',
        labels: {
          'scriptorium.dev/ledger-cluster': 'ledger',
          'app.kubernetes.io/component': 'validator',
          'scriptorium.dev/validator': 'ledger-v0',
        },
      },
      status: {
        initContainerStatuses: [
          {
            name: 'restore',
            lastState: {
              terminated: {
                exitCode: 1,
                message: '{"ok":false,"height":41,"reason":"segment … is missing from the bucket"}',
              },
            },
          },
        ],
      },
    };
    const refusals = restoreRefusals([pod], 'ledger');
    expect(refusals).toEqual([{ validator: 'ledger-v0', height: 41, reason: 'segment … is missing from the bucket' }]);
    const lc = lcWith();
    const r = backupReport(lc, parsedSpec(lc), [], refusals, undefined, now);
    expect(r.degraded).toMatchObject({
      reason: 'BackupRefused',
      message: expect.stringMatching(/ledger-v0: height 41: segment/),
    });
    expect(r.events.map((e) => e.reason)).toContain('BackupRefused');
  });
});
