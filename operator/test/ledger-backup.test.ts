// Backups, restore and restore drills of a LedgerCluster, end to end on the test control plane: REAL ledger node
// processes (the played kubelet, which also runs the backup and drill Jobs' pods and the validators' restore init
// containers with the pods' own environment and files) and a REAL S3-compatible server (SeaweedFS over TLS from a
// test CA). A cluster is backed up, its namespace deleted, and a new LedgerCluster restored from the bucket has the
// same chain and goes on finalizing; a drill sets BackupVerified=True, and after one byte of a segment is changed in
// the bucket, BackupVerified=False with the reason; a new cluster from that bucket is refused (Degraded,
// BackupRefused, with the height and the reason) and none of its nodes starts.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { S3Client } from '@scriptorium/ledger-node';
import { type BackupManifest, type Block, blockHash } from '@scriptorium/ledger-protocol';
import { freePort } from '@scriptorium/test-support/ports';
import { createTestS3Tls, startTestS3, type TestS3 } from '@scriptorium/test-support/s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeClient } from '../src/kube/client.ts';
import { RESOURCES, resourcePath } from '../src/kube/resources.ts';
import type { KubeObject } from '../src/kube/types.ts';
import type { Operator } from '../src/operator.ts';
import { exportIdentity } from '../src/plugin/rotate-key.ts';
import {
  chainStatus,
  condition,
  create,
  createNamespace,
  createSecret,
  eventually,
  fetchBlock,
  get,
  list,
  startTestbed,
  type Testbed,
} from './helpers.ts';
import { LedgerKubelet } from './ledger-kubelet.ts';

const NAMES = ['ledger-v0', 'ledger-v1', 'ledger-v2', 'ledger-v3'];
const BUCKET = 'ledger-backups';
const PREFIX = 'prod/ledger';
// Never due during the test: the test starts each Job from its CronJob, as `kubectl create job --from` does.
const NEVER = '0 0 1 1 *';

let bed: Testbed;
let client: KubeClient;
let operator: Operator;
let dir: string;
let s3: TestS3;
let bucket: S3Client;
let caPem: string;
let kubelet: LedgerKubelet;
const ports = new Map<string, number>();
const url = (v: string) => `http://127.0.0.1:${ports.get(v)}`;
const nodeUrl = (_lc: unknown, _spec: unknown, v: string) => url(v);

const chainOf = (v: string) => chainStatus(url(v));
const block = (v: string, h: number) => fetchBlock(url(v), h);

function store(credentials: string) {
  return {
    endpoint: s3.endpoint,
    bucket: BUCKET,
    prefix: PREFIX,
    credentials: {
      accessKeyId: { name: credentials, key: 'access-key-id' },
      secretAccessKey: { name: credentials, key: 'secret-access-key' },
    },
    caSecretRef: { name: credentials, key: 'ca.crt' },
  };
}

/** The bucket's keys and CA as a Secret of the namespace (the pods mount them; the operator never reads it). */
async function bucketSecret(ns: string): Promise<void> {
  await createSecret(client, ns, 'bucket', {
    'access-key-id': s3.accessKeyId,
    'secret-access-key': s3.secretAccessKey,
    'ca.crt': caPem,
  });
}

function ledgerCluster(ns: string, spec: Record<string, unknown>): KubeObject {
  return {
    apiVersion: 'scriptorium.dev/v1alpha1',
    kind: 'LedgerCluster',
    metadata: { name: 'ledger', namespace: ns },
    spec: {
      image: 'scriptorium/ledger-node:test',
      validators: 4,
      consensus: { roundTimeoutBaseMs: 1000, emptyBlockIntervalMs: 500 },
      tls: { mode: 'disabled' },
      ...spec,
    },
  };
}

/** Starts each validator's pod as a kubelet would (init containers first), until the cluster is Ready. */
async function startCluster(ns: string): Promise<void> {
  for (const name of NAMES) {
    await eventually(`pod of ${name}`, () => get(client, RESOURCES.Pod, ns, `${name}-0`), 60_000);
    expect(await kubelet.runInitContainers(ns, name)).toBe(true);
    await kubelet.start(ns, name);
  }
  await eventually(
    'Ready',
    async () => {
      await kubelet.play(ns);
      const lc = await get(client, RESOURCES.LedgerCluster, ns, 'ledger');
      if (condition(lc, 'Ready')?.status === 'True') return true;
      // Not ready yet: what the operator says, kept as the timeout's last error.
      const conditions = (lc?.status?.conditions ?? []) as Array<Record<string, string>>;
      throw new Error(conditions.map((c) => `${c.type}=${c.status} ${c.reason}: ${c.message}`).join('; '));
    },
    180_000,
  );
}

async function tokenOf(ns: string): Promise<string> {
  const secret = await get(client, RESOURCES.Secret, ns, 'ledger-token');
  return Buffer.from(secret?.data?.token ?? '', 'base64').toString('utf8');
}

/** Submits records and waits until every one is final on ledger-v0. */
async function submitFinal(ns: string, tag: string, count: number): Promise<void> {
  const token = await tokenOf(ns);
  const ids = Array.from({ length: count }, (_, i) => `${tag}-${i}`);
  for (let i = 0; i < ids.length; i += 50) {
    const res = await fetch(`${url(NAMES[(i / 50) % NAMES.length] as string)}/mempool`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ records: ids.slice(i, i + 50).map((id) => ({ id, entity: 'urn:backup', value: i })) }),
    });
    expect(res.status).toBe(200);
  }
  const missing = new Set(ids);
  let scanned = 0;
  await eventually(
    `${tag}: every record final`,
    async () => {
      const tip = (await chainOf('ledger-v0'))?.height ?? 0;
      for (; scanned < tip; scanned++)
        for (const r of (await block('ledger-v0', scanned + 1)).records) missing.delete(r.id);
      return missing.size === 0;
    },
    90_000,
  );
}

/** Starts a Job from one of the cluster's CronJobs (as `kubectl create job --from=cronjob/…`), runs its pod. */
async function runJob(ns: string, cronJob: string, job: string): Promise<void> {
  const cj = await get(client, RESOURCES.CronJob, ns, cronJob);
  expect(cj, `CronJob ${cronJob}`).toBeDefined();
  await create(client, {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: job,
      namespace: ns,
      labels: cj?.spec.jobTemplate.metadata?.labels,
      ownerReferences: [
        { apiVersion: 'batch/v1', kind: 'CronJob', name: cronJob, uid: cj?.metadata.uid ?? '', controller: true },
      ],
    },
    spec: cj?.spec.jobTemplate.spec,
  });
  await eventually(`${job}: its pod ran`, async () => (await kubelet.runJobPods(ns)) > 0, 60_000);
}

async function clusterStatus(ns: string, what: string, check: (lc: KubeObject) => boolean): Promise<KubeObject> {
  return eventually(
    what,
    async () => {
      const lc = await get(client, RESOURCES.LedgerCluster, ns, 'ledger');
      return lc && check(lc) ? lc : undefined;
    },
    60_000,
  );
}

async function events(ns: string): Promise<string[]> {
  return (await list(client, RESOURCES.Event, ns))
    .filter((e: KubeObject) => e.regarding?.kind === 'LedgerCluster')
    .map((e: KubeObject) => `${e.reason}: ${e.note}`);
}

/**
 * The LedgerCluster's events matching `pattern`, once there are at least `count`: the operator records them after the
 * status it patches, so a test that just saw the status may have to wait for them.
 */
async function eventsMatching(ns: string, pattern: RegExp, count = 1): Promise<string[]> {
  return eventually(
    `${count} event(s) matching ${pattern}`,
    async () => {
      const found = (await events(ns)).filter((e) => pattern.test(e));
      return found.length >= count ? found : undefined;
    },
    30_000,
  );
}

async function manifest(): Promise<BackupManifest> {
  return JSON.parse(((await bucket.get(`${PREFIX}/manifest.json`)) as Buffer).toString('utf8')) as BackupManifest;
}

beforeAll(async () => {
  for (const name of NAMES) ports.set(name, await freePort());
  dir = mkdtempSync(join(tmpdir(), 'scriptorium-backup-'));
  const tls = createTestS3Tls(dir);
  caPem = tls.ca.toString('utf8');
  s3 = await startTestS3({ tls, buckets: [BUCKET] });
  bucket = new S3Client({
    endpoint: s3.endpoint,
    bucket: BUCKET,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    ca: tls.ca,
  });
  bed = await startTestbed();
  client = bed.client;
  operator = await bed.startOperator({ identity: 'ledger-backup', concurrency: 2, ledgerNodeUrl: nodeUrl });
  kubelet = new LedgerKubelet(client, dir, { ports });
}, 180_000);

afterAll(async () => {
  await kubelet?.stopAll();
  await bed?.stop();
  await bucket?.close();
  await s3?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('backups, restore and drills of a LedgerCluster', { timeout: 600_000 }, () => {
  let restoredNs: string;

  it('backup → the namespace deleted → a new LedgerCluster from the bucket: the same chain, then new blocks', async () => {
    const ns = await createNamespace(client, 'backup');
    await bucketSecret(ns);
    await create(
      client,
      ledgerCluster(ns, {
        genesis: { chainId: 'backup-test' },
        backup: { ...store('bucket'), schedule: NEVER, verify: { schedule: NEVER } },
      }),
    );
    await startCluster(ns);
    await submitFinal(ns, 'before', 300);

    // The backup Job: every finalized block up to the node's tip, in segments, and a manifest naming the chain.
    await runJob(ns, 'ledger-backup', 'backup-1');
    const backedUp = await clusterStatus(
      ns,
      'status.backup after the first backup',
      (lc) => lc.status?.backup?.lastJob === 'backup-1',
    );
    const first = await manifest();
    expect(backedUp.status.backup.lastHeight).toBe(first.height);
    expect(condition(backedUp, 'BackupBehind')).toMatchObject({ status: 'False', reason: 'Current' });
    const genesis = JSON.parse(
      (await get(client, RESOURCES.ConfigMap, ns, 'ledger-genesis'))?.data?.['genesis.json'] ?? '{}',
    ) as Block;
    expect(first.genesis_hash).toBe(blockHash(genesis.header));
    expect(first.tip_hash).toBe(blockHash((await block('ledger-v0', first.height)).header));

    // Incremental: the second backup uploads only what is new since the first.
    await submitFinal(ns, 'between', 100);
    await runJob(ns, 'ledger-backup', 'backup-2');
    await clusterStatus(ns, 'status.backup after the second backup', (lc) => lc.status?.backup?.lastJob === 'backup-2');
    const second = await manifest();
    expect(second.height).toBeGreaterThan(first.height);
    expect(second.segments.slice(0, first.segments.length)).toEqual(first.segments);
    expect(second.segments.at(-1)?.from).toBeGreaterThan(first.height);
    expect(await eventsMatching(ns, /^BackupCompleted:/, 2)).toHaveLength(2);
    const metrics = await operator.metrics.registry.metrics();
    expect(metrics).toMatch(new RegExp(`backup_height\\{[^}]*namespace="${ns}"[^}]*\\} ${second.height}`));

    // The chain's identity (genesis and keys), as `kubectl scriptorium keys export` gives it; then the namespace
    // goes, and with it the validators and their volumes.
    const identity = await exportIdentity(client, ns, 'ledger');
    const tipHash = second.tip_hash;
    await client.request('DELETE', resourcePath(RESOURCES.Namespace, undefined, ns));
    for (const name of NAMES) await kubelet.stop(ns, name);
    rmSync(join(dir, ns), { recursive: true, force: true });
    await eventually('the namespace gone', async () => !(await get(client, RESOURCES.Namespace, '', ns)), 120_000);

    // A new LedgerCluster in a new namespace, from the bucket.
    restoredNs = await createNamespace(client, 'restored');
    await bucketSecret(restoredNs);
    await create(client, {
      ...identity,
      metadata: { name: 'ledger-identity', namespace: restoredNs },
    });
    await create(
      client,
      ledgerCluster(restoredNs, {
        bootstrap: { fromBackup: { ...store('bucket'), identitySecretRef: { name: 'ledger-identity' } } },
        backup: { ...store('bucket'), schedule: NEVER, verify: { schedule: NEVER } },
      }),
    );
    await startCluster(restoredNs);
    for (const name of NAMES) {
      const pod = await get(client, RESOURCES.Pod, restoredNs, `${name}-0`);
      expect(pod?.status.initContainerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode: 0 });
    }
    // The same chain: the restored nodes' block at the backup's height is the backup's tip.
    for (const name of NAMES) expect(blockHash((await block(name, second.height)).header)).toBe(tipHash);
    // And it finalizes new blocks on top of it.
    await submitFinal(restoredNs, 'after', 100);
    expect((await chainOf('ledger-v0'))?.height).toBeGreaterThan(second.height);
  });

  it('a drill sets BackupVerified=True; after one byte of a segment changes in the bucket, False with the reason', async () => {
    const ns = restoredNs;
    // The restored cluster backs up to the same prefix: the same chain, so it carries on incrementally.
    await runJob(ns, 'ledger-backup', 'backup-3');
    await clusterStatus(ns, 'status.backup after backup-3', (lc) => lc.status?.backup?.lastJob === 'backup-3');
    await runJob(ns, 'ledger-backup-verify', 'drill-1');
    const verified = await clusterStatus(
      ns,
      'BackupVerified=True',
      (lc) => condition(lc, 'BackupVerified')?.status === 'True',
    );
    const m = await manifest();
    expect(condition(verified, 'BackupVerified')).toMatchObject({ reason: 'DrillPassed' });
    expect(verified.status.backup.verifiedHeight).toBe(m.height);
    await eventsMatching(ns, /^BackupVerified: Drill drill-1: .* to height/);
    expect(await operator.metrics.registry.metrics()).toMatch(
      new RegExp(`backup_verified\\{[^}]*namespace="${ns}"[^}]*\\} 1`),
    );

    // One byte of a segment in the middle of the chain, changed in the bucket.
    const segment = m.segments[Math.floor(m.segments.length / 2)] as BackupManifest['segments'][number];
    const bytes = (await bucket.get(`${PREFIX}/${segment.key}`)) as Buffer;
    const at = Math.floor(bytes.length / 2);
    bytes[at] = (bytes[at] as number) ^ 0x01;
    await bucket.put(`${PREFIX}/${segment.key}`, bytes);
    await runJob(ns, 'ledger-backup-verify', 'drill-2');
    const failed = await clusterStatus(
      ns,
      'BackupVerified=False',
      (lc) => condition(lc, 'BackupVerified')?.status === 'False',
    );
    const message = condition(failed, 'BackupVerified')?.message ?? '';
    expect(condition(failed, 'BackupVerified')).toMatchObject({ reason: 'DrillFailed' });
    expect(message).toContain(`height ${segment.from}`);
    expect(message).toContain(segment.key);
    await eventsMatching(ns, /^BackupVerifyFailed: Drill drill-2 failed at height/);
    expect(await operator.metrics.registry.metrics()).toMatch(
      new RegExp(`backup_verified\\{[^}]*namespace="${ns}"[^}]*\\} 0`),
    );
  });

  it('a new cluster from the tampered bucket is refused with the height and the reason, and no node starts', async () => {
    const ns = await createNamespace(client, 'refused');
    await bucketSecret(ns);
    const identity = await exportIdentity(client, restoredNs, 'ledger');
    await create(client, { ...identity, metadata: { name: 'ledger-identity', namespace: ns } });
    await create(
      client,
      ledgerCluster(ns, {
        bootstrap: { fromBackup: { ...store('bucket'), identitySecretRef: { name: 'ledger-identity' } } },
      }),
    );
    await eventually('pod of ledger-v0', () => get(client, RESOURCES.Pod, ns, 'ledger-v0-0'), 60_000);
    expect(await kubelet.runInitContainers(ns, 'ledger-v0')).toBe(false);
    expect(NAMES.filter((name) => kubelet.running(ns, name))).toEqual([]);
    const refused = await clusterStatus(
      ns,
      'Degraded: BackupRefused',
      (lc) => condition(lc, 'Degraded')?.reason === 'BackupRefused',
    );
    const m = await manifest();
    const tampered = m.segments[Math.floor(m.segments.length / 2)] as BackupManifest['segments'][number];
    expect(condition(refused, 'Degraded')?.message).toMatch(
      new RegExp(`ledger-v0: height ${tampered.from}: .*${tampered.key.replace(/\./g, '\\.')}`),
    );
    await eventsMatching(ns, /^BackupRefused: The backup was refused/);
    // Nothing was left where a node would start from.
    expect(existsSync(join(dir, ns, 'ledger-v0', 'data', 'blocks.wal'))).toBe(false);
  });
});
