// LedgerCluster reconciler benchmark: on the test control plane (etcd + kube-apiserver + kube-controller-manager
// from @scriptorium/kube-testenv), create N LedgerClusters of 4 validators (TLS server mode: a CA and 4
// certificates each, 4 Ed25519 keys, genesis) and measure, with the operator in this process:
// - time until every cluster has all its objects and a status (first pass),
// - writes per cluster and API requests by verb,
// - writes during a steady period (the reconciler requeues every 3 s while pods are not Ready: target 0 writes),
// - the time of one steady reconcile (no kubelet and no nodes here: the node calls are refused at once).
// Writes bench/results/ledger-cluster.json. `BENCH_LEDGER_CLUSTERS` changes N (default 25).
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { startTestControlPlane } from '@scriptorium/kube-testenv';
import { Operator } from '@scriptorium/operator';
import type { KubeObject } from '@scriptorium/operator/kube';
import { KubeClient, RESOURCES, resourcePath } from '@scriptorium/operator/kube';
import { freePort } from '@scriptorium/test-support/ports';
import pino from 'pino';
import { createNamespace, installCrds, sleep, until } from '../control-plane.ts';

const N = Number(process.env.BENCH_LEDGER_CLUSTERS ?? 25);
const STEADY_MS = 20_000;
const LIMIT_MS = 240_000;
const repo = join(import.meta.dirname, '..', '..');

const load = loadavg()[0] ?? 0;
const plane = await startTestControlPlane({ controllerManagerArgs: ['--kube-api-qps=200', '--kube-api-burst=400'] });
const client = new KubeClient(plane.kubeConfig);
const closedPort = await freePort();
let operator: Operator | undefined;
try {
  await installCrds(client);
  const ns = 'bench-ledger';
  await createNamespace(client, ns);
  const operatorClient = new KubeClient(plane.kubeConfig);
  operator = new Operator({
    client: operatorClient,
    log: pino({ level: 'silent' }),
    identity: 'bench',
    leaseNamespace: 'default',
    leaderElection: false,
    concurrency: 4,
    resyncMs: 0,
    ledgerNodeUrl: () => `http://127.0.0.1:${closedPort}`,
  });
  await operator.start();
  await until('operator ready', async () => operator?.ready, 60_000, 500);

  const cpu0 = process.cpuUsage();
  const t0 = Date.now();
  for (let i = 0; i < N; i++) {
    await client.request('POST', resourcePath(RESOURCES.LedgerCluster, ns), {
      body: {
        apiVersion: 'scriptorium.dev/v1alpha1',
        kind: 'LedgerCluster',
        metadata: { name: `l${i}`, namespace: ns },
        spec: { image: 'scriptorium/ledger-node:bench', validators: 4, tls: { mode: 'server' } },
      },
    });
  }
  await until(
    'every cluster reconciled',
    async () => {
      const all = await client.request<{ items: KubeObject[] }>('GET', resourcePath(RESOURCES.LedgerCluster, ns));
      return all.items.filter((lc) => lc.status?.members?.length === 4).length === N;
    },
    LIMIT_MS,
    500,
  );
  const firstPassMs = Date.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const stats = { ...operator.ledger.stats };
  const counts = { ...operatorClient.counts };

  // Steady state: every cluster requeues itself every 3 s (pods never become Ready here).
  await sleep(3000);
  const before = { ...operator.ledger.stats };
  const steadyStart = Date.now();
  await sleep(STEADY_MS);
  const after = { ...operator.ledger.stats };
  const steadyReconciles = after.reconciles - before.reconciles;
  const result = {
    measuredAt: new Date().toISOString(),
    loadAverage1m: Number(load.toFixed(2)),
    clusters: N,
    validatorsPerCluster: 4,
    tls: 'server',
    firstPassSeconds: Number((firstPassMs / 1000).toFixed(2)),
    operatorCpuSecondsFirstPass: Number(((cpu.user + cpu.system) / 1e6).toFixed(2)),
    writesPerCluster: Number((stats.writes / N).toFixed(2)),
    statusWritesPerCluster: Number((stats.statusWrites / N).toFixed(2)),
    apiRequestsUntilReconciled: counts,
    steady: {
      seconds: (Date.now() - steadyStart) / 1000,
      reconciles: steadyReconciles,
      writes: after.writes - before.writes,
      statusWrites: after.statusWrites - before.statusWrites,
    },
    rssMB: Number((process.memoryUsage().rss / 1024 / 1024).toFixed(1)),
  };
  console.log(JSON.stringify(result, null, 2));
  writeFileSync(join(repo, 'bench/results/ledger-cluster.json'), `${JSON.stringify(result, null, 2)}\n`);
} finally {
  await operator?.stop().catch(() => {});
  client.close();
  await plane.stop();
}
