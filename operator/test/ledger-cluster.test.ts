import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { kubeBinDir, serviceAccountKubeconfig, type TestControlPlane } from '@scriptorium/kube-testenv';
import { freePort } from '@scriptorium/test-support/ports';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { FINALIZER, STATEFUL_SET } from '../src/controllers/ledger-cluster/index.ts';
import { KubeClient } from '../src/kube/client.ts';
import { loadStatic } from '../src/kube/kubeconfig.ts';
import { RESOURCES, type ResourceType, resourcePath } from '../src/kube/resources.ts';
import type { KubeObject } from '../src/kube/types.ts';
import type { Operator } from '../src/operator.ts';
import {
  condition,
  create,
  createNamespace,
  eventually,
  get,
  list,
  QUICK_ELECTION,
  startTestbed,
  type Testbed,
} from './helpers.ts';

// The LedgerCluster reconciler against a real kube-apiserver + kube-controller-manager (StatefulSet controller,
// garbage collector). No kubelet and no ledger nodes run here: the validators' pods stay Pending and the operator's
// node client points at a closed loopback port, so these tests cover the objects, their stability and the
// controller's decisions; real nodes are driven in operator/test/ledger-node-client.test.ts.
let bed: Testbed;
let plane: TestControlPlane;
let client: KubeClient;
let operator: Operator;
let closedPort: number;

const SAMPLE = join(import.meta.dirname, '../../deploy/samples/ledger-cluster.yaml');
const CHART = join(import.meta.dirname, '../../charts/scriptorium-operator');

function startOperator(identity: string, ledgerNow?: () => Date): Operator {
  return bed.newOperator({
    identity,
    ...QUICK_ELECTION,
    leaseName: 'scriptorium-operator-ledger-test',
    concurrency: 2,
    ledgerNodeUrl: () => `http://127.0.0.1:${closedPort}`,
    ...(ledgerNow ? { ledgerNow } : {}),
  });
}

function sample(namespace: string): KubeObject {
  const obj = parse(readFileSync(SAMPLE, 'utf8')) as KubeObject;
  return { ...obj, metadata: { ...obj.metadata, namespace } };
}

async function snapshot(ns: string) {
  const objects: KubeObject[] = [
    ...(await list(client, RESOURCES.LedgerCluster, ns)),
    ...(await list(client, RESOURCES.Service, ns)),
    ...(await list(client, STATEFUL_SET, ns)),
    ...(await list(client, RESOURCES.ConfigMap, ns, 'app.kubernetes.io/name=ledger-node')),
    ...(await list(client, RESOURCES.Secret, ns)),
  ];
  return Object.fromEntries(objects.map((o) => [`${o.kind}/${o.metadata.name}`, o.metadata.resourceVersion]));
}

beforeAll(async () => {
  closedPort = await freePort();
  bed = await startTestbed();
  ({ plane, client } = bed);
  operator = startOperator('ledger-operator-a');
  await operator.start();
  await eventually('operator leads', () => operator.isLeader && operator.ready);
});

afterAll(async () => {
  await bed?.stop();
});

describe('LedgerCluster reconciler', { timeout: 180_000 }, () => {
  let ns: string;

  it('creates every object of the sample, each owned by the LedgerCluster', async () => {
    ns = await createNamespace(client, 'lc');
    await create(client, sample(ns));
    const lc = await eventually('status with members', async () => {
      const got = await get(client, RESOURCES.LedgerCluster, ns, 'ledger');
      return got?.status?.members?.length === 4 ? got : undefined;
    });
    expect(lc.metadata.finalizers).toContain(FINALIZER);
    expect(lc.status.selector).toBe(
      'app.kubernetes.io/name=ledger-node,app.kubernetes.io/component=validator,scriptorium.dev/ledger-cluster=ledger',
    );
    expect(condition(lc, 'Progressing')).toMatchObject({ status: 'True', reason: 'ValidatorsStarting' });
    expect(condition(lc, 'Ready')?.status).toBe('False');
    expect(lc.status.members.map((m: { name: string; role: string }) => [m.name, m.role])).toEqual([
      ['ledger-v0', 'validator'],
      ['ledger-v1', 'validator'],
      ['ledger-v2', 'validator'],
      ['ledger-v3', 'validator'],
    ]);

    const expected: Array<[ResourceType, string]> = [
      [RESOURCES.Secret, 'ledger-token'],
      [RESOURCES.Secret, 'ledger-ca'],
      [RESOURCES.ConfigMap, 'ledger-genesis'],
      [RESOURCES.ConfigMap, 'ledger-peers'],
      [RESOURCES.Service, 'ledger'],
      [RESOURCES.PodDisruptionBudget, 'ledger'],
    ];
    for (let i = 0; i < 4; i++) {
      expected.push(
        [RESOURCES.Secret, `ledger-v${i}-key`],
        [RESOURCES.Secret, `ledger-v${i}-tls`],
        [RESOURCES.Service, `ledger-v${i}`],
        [STATEFUL_SET, `ledger-v${i}`],
      );
    }
    for (const [type, name] of expected) {
      const obj = await eventually(`${type.kind} ${name}`, () => get(client, type, ns, name));
      expect(obj.metadata.ownerReferences?.[0], `${type.kind} ${name}`).toMatchObject({
        kind: 'LedgerCluster',
        uid: lc.metadata.uid,
        controller: true,
      });
    }

    // Genesis: immutable, the four validators' keys, the sample's chain id.
    const genesis = await get(client, RESOURCES.ConfigMap, ns, 'ledger-genesis');
    expect(genesis?.immutable).toBe(true);
    const block = JSON.parse(genesis?.data['genesis.json']);
    expect(block.header.chain_id).toBe('scriptorium-demo-1');
    const keys: string[] = [];
    for (let i = 0; i < 4; i++) {
      const secret = await get(client, RESOURCES.Secret, ns, `ledger-v${i}-key`);
      const file = JSON.parse(Buffer.from(secret?.data['key.json'], 'base64').toString('utf8'));
      expect(file.public_key).toMatch(/^[0-9a-f]{64}$/);
      expect(file.private_key).toMatch(/^[0-9a-f]{64}$/);
      expect(secret?.metadata.annotations?.['scriptorium.dev/public-key']).toBe(file.public_key);
      keys.push(file.public_key);
    }
    expect(block.validator_changes.map((c: { validator: string }) => c.validator).sort()).toEqual([...keys].sort());
    // The status never carries key material.
    expect(JSON.stringify(lc.status)).not.toMatch(/[0-9a-f]{64}/);

    // The API server accepted the StatefulSet: one replica, the PVC template, and the controller made the pod.
    const sts = await get(client, STATEFUL_SET, ns, 'ledger-v0');
    expect(sts?.spec.replicas).toBe(1);
    expect(sts?.spec.volumeClaimTemplates[0].spec.resources.requests.storage).toBe('1Gi');
    await eventually(
      'pod of ledger-v0',
      async () => (await get(client, RESOURCES.Pod, ns, 'ledger-v0-0')) !== undefined,
    );
    const pod = await get(client, RESOURCES.Pod, ns, 'ledger-v0-0');
    const env = Object.fromEntries(
      pod?.spec.containers[0].env.map((e: { name: string; value?: string }) => [e.name, e.value]),
    );
    expect(env.NODE_CONSENSUS__ADVERTISE).toBe(`ledger-v0.${ns}.svc:8000`);
    expect(env.NODE_TLS__MODE).toBe('server');
    const peers = (await get(client, RESOURCES.ConfigMap, ns, 'ledger-peers'))?.data.peers.split(',');
    expect(peers).toHaveLength(4);
    expect(peers[1]).toBe(`ledger-v1@ledger-v1.${ns}.svc:8000|${keys[1]}`);

    // Events were recorded for the creations.
    const events = await eventually('Created Events', async () => {
      const all = (await list(client, RESOURCES.Event, ns)).filter((e) => e.regarding?.kind === 'LedgerCluster');
      return all.some((e) => e.reason === 'Created') ? all : undefined;
    });
    expect(events.map((e) => e.note).join(' ')).toContain('StatefulSet ledger-v0');
  });

  it('a second reconcile writes nothing', async () => {
    await new Promise((resolve) => setTimeout(resolve, 2000)); // let the StatefulSet controller settle
    const before = await snapshot(ns);
    const stats = { ...operator.ledger.stats };
    operator.ledger.queue.add(`${ns}/ledger`);
    await eventually('reconciled again', () => operator.ledger.stats.reconciles > stats.reconciles + 1);
    expect(operator.ledger.stats.writes).toBe(stats.writes);
    expect(operator.ledger.stats.statusWrites).toBe(stats.statusWrites);
    expect(await snapshot(ns)).toEqual(before);
  });

  it('keeps keys, CA, token and genesis across an operator restart, writing nothing', async () => {
    const before = await snapshot(ns);
    await operator.stop();
    const restarted = startOperator('ledger-operator-b');
    await restarted.start();
    operator = restarted;
    await eventually('restarted operator leads', () => restarted.isLeader && restarted.ready);
    await eventually('reconciled', () => restarted.ledger.stats.reconciles >= 2);
    expect(restarted.ledger.stats.writes).toBe(0);
    expect(restarted.ledger.stats.statusWrites).toBe(0);
    expect(await snapshot(ns)).toEqual(before);
  });

  it('renews certificates in the last third of their lifetime: a new Secret generation, the StatefulSet moves to it', async () => {
    await operator.stop();
    const later = Date.now() + 300 * 86_400_000;
    const moved = startOperator('ledger-operator-c', () => new Date(later));
    await moved.start();
    operator = moved;
    await eventually('operator c leads', () => moved.isLeader && moved.ready);
    for (let i = 0; i < 4; i++) {
      const renewed = await eventually(`ledger-v${i}-tls-1`, () =>
        get(client, RESOURCES.Secret, ns, `ledger-v${i}-tls-1`),
      );
      expect(renewed.metadata.annotations?.['scriptorium.dev/tls-generation']).toBe('1');
      expect(Date.parse(renewed.metadata.annotations?.['scriptorium.dev/not-before'] ?? '')).toBeGreaterThan(
        Date.now(),
      );
      // Pods are not Ready here (no kubelet), so every StatefulSet may move at once.
      await eventually(`StatefulSet ledger-v${i} on the new Secret`, async () => {
        const sts = await get(client, STATEFUL_SET, ns, `ledger-v${i}`);
        const tls = sts?.spec.template.spec.volumes.find((v: { name: string }) => v.name === 'tls');
        return tls?.secret.secretName === `ledger-v${i}-tls-1`;
      });
    }
    const events = await eventually('CertificateRenewed Events', async () => {
      const all = (await list(client, RESOURCES.Event, ns)).filter((e) => e.reason === 'CertificateRenewed');
      return all.length >= 4 ? all : undefined;
    });
    expect(events[0]?.note).toContain('New certificate for');
    // Renewed once, not again on the next reconciles.
    const count = (await list(client, RESOURCES.Secret, ns)).length;
    const reconciles = moved.ledger.stats.reconciles;
    operator.ledger.queue.add(`${ns}/ledger`);
    await eventually('reconciled again', () => moved.ledger.stats.reconciles > reconciles);
    expect((await list(client, RESOURCES.Secret, ns)).length).toBe(count);
  });

  it('spec.ingress: an Ingress to the client Service routing only the open reads and /ui; removed with the field', async () => {
    const ns = await createNamespace(client, 'lc-ingress');
    const withIngress = sample(ns);
    withIngress.spec = {
      ...withIngress.spec,
      validators: 1,
      ingress: { host: 'ledger.example.com', className: 'nginx', tlsSecretName: 'ledger-tls' },
    };
    await create(client, withIngress);
    const ingress = await eventually('the Ingress', () => get(client, RESOURCES.Ingress, ns, 'ledger'));
    // Stored by the real API server, which validated the rules (path types, backends).
    expect(ingress.metadata.ownerReferences?.[0]).toMatchObject({
      kind: 'LedgerCluster',
      name: 'ledger',
      controller: true,
    });
    expect(ingress.spec.ingressClassName).toBe('nginx');
    expect(ingress.spec.tls).toEqual([{ hosts: ['ledger.example.com'], secretName: 'ledger-tls' }]);
    const [rule] = ingress.spec.rules;
    expect(rule.host).toBe('ledger.example.com');
    const routed = rule.http.paths.map((p: { path: string; pathType: string }) => `${p.pathType} ${p.path}`);
    expect(routed).toEqual([
      'Exact /health',
      'Exact /chain',
      'Prefix /blocks',
      'Prefix /proof',
      'Prefix /evidence',
      'Exact /checkpoint',
      'Exact /checkpoint/proof',
      'Exact /checkpoint/witnesses',
      'Prefix /ui',
    ]);
    for (const p of rule.http.paths) expect(p.backend).toEqual({ service: { name: 'ledger', port: { name: 'api' } } });
    // None of the peer, membership or admin routes, by any path type.
    for (const forbidden of [
      '/consensus',
      '/mempool',
      '/membership',
      '/block',
      '/peers',
      '/admin',
      '/metrics',
      '/checkpoint/sign',
      '/checkpoint/cosigned',
      '/',
    ])
      expect(
        routed.some((r: string) => r.endsWith(` ${forbidden}`)),
        forbidden,
      ).toBe(false);

    await client.request('PATCH', resourcePath(RESOURCES.LedgerCluster, ns, 'ledger'), {
      body: { spec: { ingress: null } },
      contentType: 'application/merge-patch+json',
    });
    await eventually(
      'the Ingress deleted',
      async () => (await get(client, RESOURCES.Ingress, ns, 'ledger')) === undefined,
    );
  });

  it('TLS disabled: no CA or certificates; deletion goes through the finalizer', async () => {
    const other = await createNamespace(client, 'lc-del');
    await create(client, {
      ...sample(other),
      spec: { ...sample(other).spec, validators: 1, tls: { mode: 'disabled' } },
    });
    await eventually('StatefulSet', () => get(client, STATEFUL_SET, other, 'ledger-v0'));
    expect(await get(client, RESOURCES.Secret, other, 'ledger-ca')).toBeUndefined();
    expect(await get(client, RESOURCES.Secret, other, 'ledger-v0-tls')).toBeUndefined();
    await client.request('DELETE', resourcePath(RESOURCES.LedgerCluster, other, 'ledger'));
    await eventually(
      'LedgerCluster gone',
      async () => (await get(client, RESOURCES.LedgerCluster, other, 'ledger')) === undefined,
    );
    await eventually(
      'StatefulSet gone',
      async () => (await get(client, STATEFUL_SET, other, 'ledger-v0')) === undefined,
    );
    await eventually(
      'owned objects collected',
      async () =>
        (await get(client, RESOURCES.ConfigMap, other, 'ledger-genesis')) === undefined &&
        (await get(client, RESOURCES.Secret, other, 'ledger-v0-key')) === undefined,
      60_000,
    );
  });

  it("the chart's RBAC is enough: as its ServiceAccount the operator creates a cluster and scales it, never refused", async () => {
    await operator.stop();
    // The chart's ServiceAccount, ClusterRole and binding, rendered by helm and applied as they would be installed.
    const system = await createNamespace(client, 'system');
    const rbac = execFileSync(
      join(kubeBinDir(), 'helm'),
      ['template', 'scriptorium', CHART, '--namespace', system, '--show-only', 'templates/serviceaccount.yaml'].concat([
        '--show-only',
        'templates/clusterrole.yaml',
        '--show-only',
        'templates/clusterrolebinding.yaml',
      ]),
      { encoding: 'utf8' },
    );
    execFileSync('kubectl', ['--kubeconfig', plane.kubeconfigPath, 'apply', '--server-side', '-f', '-'], {
      input: rbac,
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    const path = await serviceAccountKubeconfig(plane, { namespace: system, name: 'scriptorium-scriptorium-operator' });
    const access = loadStatic(path);
    if (!access) throw new Error('the ServiceAccount kubeconfig did not load');
    const asChart = bed.newOperator({
      identity: 'ledger-operator-sa',
      client: new KubeClient(access),
      leaseNamespace: system,
      concurrency: 2,
      ledgerNodeUrl: () => `http://127.0.0.1:${closedPort}`,
    });
    await asChart.start();
    operator = asChart;
    // Every informer listed and watched: a refused list would never sync.
    await eventually('operator as the ServiceAccount synced', () => asChart.ready);
    const sa = await createNamespace(client, 'lc-sa');
    await create(client, sample(sa));
    await eventually('4 StatefulSets', async () => (await list(client, STATEFUL_SET, sa)).length === 4);
    await client.request('PATCH', resourcePath(RESOURCES.LedgerCluster, sa, 'ledger'), {
      contentType: 'application/merge-patch+json',
      body: { spec: { validators: 5 } },
    });
    await eventually('ledger-v4 with its key, certificate and Service', async () =>
      Boolean(
        (await get(client, STATEFUL_SET, sa, 'ledger-v4')) &&
          (await get(client, RESOURCES.Secret, sa, 'ledger-v4-tls')) &&
          (await get(client, RESOURCES.Service, sa, 'ledger-v4')),
      ),
    );
    const lc = await eventually('status with 5 members', async () => {
      const got = await get(client, RESOURCES.LedgerCluster, sa, 'ledger');
      return got?.status?.members?.length === 5 ? got : undefined;
    });
    expect(condition(lc, 'Degraded')?.reason).not.toMatch(/ApplyFailed|ReconcileFailed/);
    const errors = await asChart.metrics.registry.getSingleMetricAsString(
      'scriptorium_operator_reconcile_errors_total',
    );
    expect(errors).not.toContain('KUBE_403');
    const restarts = await asChart.metrics.registry.getSingleMetricAsString(
      'scriptorium_operator_watch_restarts_total',
    );
    expect(restarts).not.toMatch(/ledger-\w+"\} [1-9]/);
  });
});
