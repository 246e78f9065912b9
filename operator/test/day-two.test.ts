// Day-two features against a real kube-apiserver + kube-controller-manager: a TranslationService on a managed
// CloudNativePG database (CloudNativePG's own Cluster CRD from its release manifest; the test plays CloudNativePG's
// status, as the other tests play the kubelet), and the `scriptorium.dev/reconcile: paused` annotation on both kinds.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { kubeBinDir, parseVersions, VERSIONS_FILE } from '@scriptorium/kube-testenv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { STATEFUL_SET } from '../src/controllers/ledger-cluster/index.ts';
import type { KubeClient } from '../src/kube/client.ts';
import { RESOURCES, resourcePath } from '../src/kube/resources.ts';
import type { KubeObject } from '../src/kube/types.ts';
import {
  completeMigration,
  condition,
  create,
  createNamespace,
  createSecret,
  eventually,
  get,
  list,
  startTestbed,
  type Testbed,
  translationService,
} from './helpers.ts';

let bed: Testbed;
let client: KubeClient;

const patch = (
  type: (typeof RESOURCES)[keyof typeof RESOURCES],
  ns: string,
  name: string,
  body: object,
  sub?: string,
) => client.request('PATCH', resourcePath(type, ns, name, sub), { contentType: 'application/merge-patch+json', body });

/** CloudNativePG's Cluster CRD, from the release manifest tools/kube/build.sh keeps beside the binaries. */
async function installCnpgCrd(): Promise<void> {
  const version = parseVersions(readFileSync(VERSIONS_FILE, 'utf8')).CNPG_VERSION as string;
  const manifest = readFileSync(join(kubeBinDir(), '..', 'cnpg', version, 'cnpg.yaml'), 'utf8');
  const crd = parseAllDocuments(manifest)
    .map((d) => d.toJS() as KubeObject)
    .find((o) => o?.kind === 'CustomResourceDefinition' && o.metadata.name === 'clusters.postgresql.cnpg.io');
  if (!crd) throw new Error('no Cluster CRD in the CloudNativePG manifest');
  await client.request(
    'PATCH',
    resourcePath(RESOURCES.CustomResourceDefinition, undefined, 'clusters.postgresql.cnpg.io'),
    {
      body: crd,
      contentType: 'application/apply-patch+yaml',
      query: { fieldManager: 'test', force: true },
    },
  );
  await eventually('CloudNativePG Clusters served', async () => {
    await client.request('GET', resourcePath(RESOURCES.CnpgCluster, 'default'));
    return true;
  });
}

beforeAll(async () => {
  bed = await startTestbed();
  client = bed.client;
  await bed.startOperator({ identity: 'day-two', concurrency: 2 });
});

afterAll(async () => {
  await bed?.stop();
});

describe('spec.database.cnpg', { timeout: 120_000 }, () => {
  it('without CloudNativePG: reported; with it: a Cluster owned by the TranslationService, its -app Secret wired, readiness in status', async () => {
    const ns = await createNamespace(client, 'cnpg');
    await create(
      client,
      translationService(ns, 'web', { database: { cnpg: { instances: 2, storage: { size: '2Gi' } } } }),
    );
    const missing = await eventually('CloudNativePG reported missing', async () => {
      const ts = await get(client, RESOURCES.TranslationService, ns, 'web');
      return condition(ts, 'Degraded')?.status === 'True' ? ts : undefined;
    });
    expect(condition(missing, 'Degraded')).toMatchObject({
      reason: 'ReconcileFailed',
      message: expect.stringMatching(/CloudNativePG/),
    });

    await installCnpgCrd();
    const cluster = await eventually(
      'the CloudNativePG Cluster',
      () => get(client, RESOURCES.CnpgCluster, ns, 'web-db'),
      60_000,
    );
    expect(cluster.spec).toMatchObject({
      instances: 2,
      storage: { size: '2Gi' },
      bootstrap: { initdb: { database: 'translation' } },
    });
    const ts = await get(client, RESOURCES.TranslationService, ns, 'web');
    expect(cluster.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'TranslationService', name: 'web', uid: ts?.metadata.uid, controller: true }),
    ]);
    // Nothing that needs the database starts before its primary serves.
    const waiting = await eventually('DatabaseNotReady', async () => {
      const got = await get(client, RESOURCES.TranslationService, ns, 'web');
      return condition(got, 'Progressing')?.reason === 'DatabaseNotReady' ? got : undefined;
    });
    expect(waiting.status.database).toMatchObject({ cluster: 'web-db', ready: false });
    expect((await list(client, RESOURCES.Job, ns)).length).toBe(0);

    // CloudNativePG reports the cluster healthy (the test plays its status, as it plays the kubelet).
    const healthy = { instances: 2, readyInstances: 2, phase: 'Cluster in healthy state', currentPrimary: 'web-db-1' };
    await patch(RESOURCES.CnpgCluster, ns, 'web-db', { status: healthy }, 'status');
    const job = await eventually('migration Job', async () => (await list(client, RESOURCES.Job, ns))[0], 60_000);
    const env = job.spec.template.spec.containers[0].env as Array<{ name: string; valueFrom?: unknown }>;
    expect(env.find((e) => e.name === 'DATABASE_URL')?.valueFrom).toEqual({
      secretKeyRef: { name: 'web-db-app', key: 'uri' },
    });
    await completeMigration(client, ns, job.metadata.name ?? '');
    const deployed = await eventually(
      'Deployment with the -app Secret',
      () => get(client, RESOURCES.Deployment, ns, 'web'),
      60_000,
    );
    const serveEnv = deployed.spec.template.spec.containers[0].env as Array<{ name: string; valueFrom?: unknown }>;
    expect(serveEnv.find((e) => e.name === 'DATABASE_URL')?.valueFrom).toEqual({
      secretKeyRef: { name: 'web-db-app', key: 'uri' },
    });
    const ready = await eventually('status.database ready', async () => {
      const got = await get(client, RESOURCES.TranslationService, ns, 'web');
      return got?.status?.database?.ready ? got : undefined;
    });
    expect(ready.status.database).toEqual({
      cluster: 'web-db',
      ready: true,
      instances: 2,
      readyInstances: 2,
      phase: 'Cluster in healthy state',
      primary: 'web-db-1',
    });

    // A switchover: the status follows (read every 10 s), and nothing is rolled.
    const generation = deployed.metadata.generation;
    await patch(
      RESOURCES.CnpgCluster,
      ns,
      'web-db',
      {
        status: {
          readyInstances: 1,
          phase: 'Switchover in progress',
          currentPrimary: 'web-db-1',
          targetPrimary: 'web-db-2',
        },
      },
      'status',
    );
    await eventually(
      'the switchover in status',
      async () => {
        const got = await get(client, RESOURCES.TranslationService, ns, 'web');
        return (
          got?.status?.database?.phase === 'Switchover in progress' &&
          condition(got, 'Progressing')?.reason === 'DatabaseNotReady'
        );
      },
      60_000,
    );
    await patch(RESOURCES.CnpgCluster, ns, 'web-db', { status: { ...healthy, currentPrimary: 'web-db-2' } }, 'status');
    await eventually(
      'the new primary in status',
      async () => {
        const got = await get(client, RESOURCES.TranslationService, ns, 'web');
        return got?.status?.database?.primary === 'web-db-2' && got.status.database.ready;
      },
      60_000,
    );
    expect((await get(client, RESOURCES.Deployment, ns, 'web'))?.metadata.generation).toBe(generation);
  });
});

describe('scriptorium.dev/reconcile: paused', { timeout: 180_000 }, () => {
  it('a paused TranslationService: nothing it owns is put back until the annotation goes; status says so', async () => {
    const ns = await createNamespace(client, 'pause');
    await createSecret(client, ns, 'db-app', { uri: 'postgres://app@db/app' });
    await create(client, translationService(ns, 'web'));
    await eventually('Service', () => get(client, RESOURCES.Service, ns, 'web'));
    await patch(RESOURCES.TranslationService, ns, 'web', {
      metadata: { annotations: { 'scriptorium.dev/reconcile': 'paused' } },
    });
    const paused = await eventually('Paused=True', async () => {
      const got = await get(client, RESOURCES.TranslationService, ns, 'web');
      return condition(got, 'Paused')?.status === 'True' ? got : undefined;
    });
    expect(paused.status.paused).toBe(true);
    // Drift while paused stays: the deleted Service is not recreated, a spec change is not applied.
    await client.request('DELETE', resourcePath(RESOURCES.Service, ns, 'web'));
    await patch(RESOURCES.TranslationService, ns, 'web', { spec: { ingress: { host: 'web.example.com' } } });
    await new Promise((r) => setTimeout(r, 4000));
    expect(await get(client, RESOURCES.Service, ns, 'web')).toBeUndefined();
    expect(await get(client, RESOURCES.Ingress, ns, 'web')).toBeUndefined();
    const events = await list(client, RESOURCES.Event, ns);
    expect(events.some((e) => e.reason === 'Paused')).toBe(true);

    await client.request('PATCH', resourcePath(RESOURCES.TranslationService, ns, 'web'), {
      contentType: 'application/json-patch+json',
      body: [{ op: 'remove', path: '/metadata/annotations/scriptorium.dev~1reconcile' }],
    });
    await eventually(
      'Service and Ingress back',
      async () =>
        (await get(client, RESOURCES.Service, ns, 'web')) && (await get(client, RESOURCES.Ingress, ns, 'web')),
    );
    const resumed = await eventually('Paused=False', async () => {
      const got = await get(client, RESOURCES.TranslationService, ns, 'web');
      return condition(got, 'Paused')?.status === 'False' ? got : undefined;
    });
    expect(resumed.status.paused).toBeUndefined();
  });

  it('a paused LedgerCluster: a scale-up creates nothing until the annotation goes', async () => {
    const ns = await createNamespace(client, 'pause-lc');
    await create(client, {
      apiVersion: 'scriptorium.dev/v1alpha1',
      kind: 'LedgerCluster',
      metadata: { name: 'ledger', namespace: ns },
      spec: { image: 'scriptorium/ledger-node:test', validators: 3, tls: { mode: 'disabled' } },
    });
    await eventually('3 StatefulSets', async () => (await list(client, STATEFUL_SET, ns)).length === 3);
    await patch(RESOURCES.LedgerCluster, ns, 'ledger', {
      metadata: { annotations: { 'scriptorium.dev/reconcile': 'paused' } },
    });
    await eventually(
      'Paused=True',
      async () => condition(await get(client, RESOURCES.LedgerCluster, ns, 'ledger'), 'Paused')?.status === 'True',
    );
    await patch(RESOURCES.LedgerCluster, ns, 'ledger', { spec: { validators: 4 } });
    await new Promise((r) => setTimeout(r, 4000));
    expect((await list(client, STATEFUL_SET, ns)).length).toBe(3);
    await patch(RESOURCES.LedgerCluster, ns, 'ledger', {
      metadata: { annotations: { 'scriptorium.dev/reconcile': 'active' } },
    });
    await eventually('the fourth StatefulSet', async () => (await list(client, STATEFUL_SET, ns)).length === 4);
    expect(condition(await get(client, RESOURCES.LedgerCluster, ns, 'ledger'), 'Paused')?.status).toBe('False');
  });
});
