// Operator benchmark: on the test control plane (etcd + kube-apiserver + kube-controller-manager from
// @scriptorium/kube-testenv), create N TranslationServices and measure, with the operator as a separate process:
// - time until every one is reconciled (first pass: status written; full: Deployment and CronJobs created after
//   the migration Job, which this script completes by playing the kubelet),
// - writes per object (the operator's scriptorium_operator_writes_total),
// - writes during a quiet resync (target 0),
// - the operator's RSS.
// Writes bench/results/operator.json. `BENCH_OPERATOR_OBJECTS` changes N (default 300).
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestControlPlane } from '@scriptorium/kube-testenv';
import type { KubeObject } from '@scriptorium/operator/kube';
import { KubeClient, RESOURCES, resourcePath } from '@scriptorium/operator/kube';
import { freePort } from '@scriptorium/test-support/ports';
import { createNamespace, installCrds, sleep, until } from '../control-plane.ts';

const N = Number(process.env.BENCH_OPERATOR_OBJECTS ?? 300);
const RESYNC_SECONDS = 20;
const LIMIT_MS = 240_000;
const repo = join(import.meta.dirname, '..', '..');
const started = Date.now();

async function pool<T>(items: T[], width: number, fn: (item: T) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await fn(items[next++] as T);
    }),
  );
}

// A /16 Service range: the default /24 holds only 253 ClusterIPs, fewer than the 300 Services of the bench.
// The controller-manager's default client limit (20 QPS) would make the Job and ReplicaSet controllers, not the
// operator, the bottleneck of the end-to-end figure.
const plane = await startTestControlPlane({
  apiServerArgs: ['--service-cluster-ip-range=10.96.0.0/16'],
  controllerManagerArgs: ['--kube-api-qps=200', '--kube-api-burst=400'],
});
const client = new KubeClient(plane.kubeConfig);
let operator: ReturnType<typeof spawn> | undefined;
let kubeletRunning = true;
try {
  await installCrds(client);
  const ns = 'bench';
  await createNamespace(client, ns);
  await client.request('POST', resourcePath(RESOURCES.Secret, ns), {
    body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db-app' }, stringData: { uri: 'postgres://bench' } },
  });

  const port = await freePort();
  operator = spawn(process.execPath, [join(repo, 'operator/src/main.ts')], {
    env: {
      ...process.env,
      KUBECONFIG: plane.kubeconfigPath,
      POD_NAMESPACE: 'default',
      POD_NAME: 'bench-operator',
      HTTP__PORT: String(port),
      HTTP__HOST: '127.0.0.1',
      RESYNC_SECONDS: String(RESYNC_SECONDS),
      RECONCILE__CONCURRENCY: process.env.BENCH_OPERATOR_CONCURRENCY ?? '16',
      LOG_LEVEL: process.env.BENCH_OPERATOR_LOG_LEVEL ?? 'error',
      // As in the image (operator/Dockerfile): a small young generation keeps RSS down.
      NODE_OPTIONS: '--max-semi-space-size=2',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const pid = operator.pid ?? 0;
  let rssMaxMb = 0;
  const rssMb = () => {
    try {
      const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
      return kb / 1024;
    } catch {
      return 0;
    }
  };
  const cpuSeconds = () => {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
      return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in clock ticks of 10 ms
    } catch {
      return 0;
    }
  };
  const rssTimer = setInterval(() => {
    rssMaxMb = Math.max(rssMaxMb, rssMb());
  }, 200);
  const metric = async (name: string): Promise<number> => {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    let sum = 0;
    for (const line of text.split('\n')) {
      if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) sum += Number(line.split(' ').pop());
    }
    return sum;
  };
  await until(
    'operator ready and leading',
    async () => {
      try {
        return (await metric('scriptorium_operator_leader')) === 1;
      } catch {
        return false;
      }
    },
    30_000,
  );

  // Play the kubelet for migration pods: each one succeeds as soon as the Job controller creates it.
  const kubelet = (async () => {
    while (kubeletRunning) {
      const pods = await client.request<{ items: KubeObject[] }>('GET', resourcePath(RESOURCES.Pod, ns), {
        query: { labelSelector: 'app.kubernetes.io/component=migration' },
      });
      const pending = pods.items.filter((p) => p.status?.phase !== 'Succeeded');
      await pool(pending, 8, async (pod) => {
        await client
          .request('PATCH', resourcePath(RESOURCES.Pod, ns, pod.metadata.name, 'status'), {
            body: { status: { phase: 'Succeeded' } },
            contentType: 'application/merge-patch+json',
          })
          .catch(() => {});
      });
      await sleep(1000);
    }
  })();

  const t0 = Date.now();
  await pool(
    Array.from({ length: N }, (_, i) => i),
    16,
    async (i) => {
      await client.request('POST', resourcePath(RESOURCES.TranslationService, ns), {
        body: {
          apiVersion: 'scriptorium.dev/v1alpha1',
          kind: 'TranslationService',
          metadata: { name: `svc-${i}` },
          spec: {
            image: 'scriptorium/translation:1.0.0',
            replicas: 1,
            database: { secretRef: { name: 'db-app', key: 'uri' } },
            // A rare worker schedule keeps the controller-manager from starting 300 Jobs a minute mid-measurement.
            schedules: { worker: '0 0 1 1 *', retention: '0 0 1 1 *' },
          },
        },
      });
    },
  );
  const createdMs = Date.now() - t0;
  const reasons = async () => {
    const items = (await client.request<{ items: KubeObject[] }>('GET', resourcePath(RESOURCES.TranslationService, ns)))
      .items;
    const progressing = items.map((ts) => {
      const observed = ts.status?.observedGeneration === ts.metadata.generation;
      const cond = (ts.status?.conditions ?? []).find((c: { type: string }) => c.type === 'Progressing');
      return observed ? (cond?.reason as string | undefined) : undefined;
    });
    return progressing;
  };
  let firstPassMs = 0;
  let lastProgress = Date.now();
  await until(
    `all ${N} reconciled`,
    async () => {
      const r = await reasons();
      if (Date.now() - lastProgress > 5000) {
        lastProgress = Date.now();
        const counts: Record<string, number> = {};
        for (const x of r) counts[x ?? 'pending'] = (counts[x ?? 'pending'] ?? 0) + 1;
        const depth = await metric('scriptorium_operator_workqueue_depth');
        console.error(
          `bench: ${((Date.now() - t0) / 1000).toFixed(0)} s ${JSON.stringify(counts)} queue=${depth} rss=${rssMb().toFixed(0)}MB`,
        );
      }
      if (!firstPassMs && r.length === N && r.every((x) => x !== undefined)) firstPassMs = Date.now() - t0;
      return r.length === N && r.every((x) => x === 'RollingOut' || x === 'RolloutComplete');
    },
    LIMIT_MS - (Date.now() - started),
  );
  const reconciledMs = Date.now() - t0;
  const cpuAtReconciled = cpuSeconds();
  kubeletRunning = false;
  await kubelet;
  const writesAfterReconcile = await metric('scriptorium_operator_writes_total');
  const requestsAfterReconcile: Record<string, number> = {};
  for (const verb of ['GET', 'POST', 'PATCH', 'PUT', 'DELETE', 'WATCH']) {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(`scriptorium_operator_api_requests{verb="${verb}"}`));
    requestsAfterReconcile[verb] = Number(line?.split(' ').pop() ?? 0);
  }
  const deployments = (await client.request<{ items: unknown[] }>('GET', resourcePath(RESOURCES.Deployment, ns))).items
    .length;

  // Quiet resync: wait until the controller-manager has settled (no operator write for 5 s: Deployment statuses
  // stop changing), then watch one full resync period.
  let stableSince = Date.now();
  let lastWrites = -1;
  await until(
    'a quiet system',
    async () => {
      const w = await metric('scriptorium_operator_writes_total');
      if (w !== lastWrites) {
        lastWrites = w;
        stableSince = Date.now();
      }
      return Date.now() - stableSince >= 5000;
    },
    120_000,
  );
  const writesBefore = await metric('scriptorium_operator_writes_total');
  const reconcilesBefore = await metric('scriptorium_operator_reconcile_total');
  await until(
    'a full resync',
    async () => (await metric('scriptorium_operator_reconcile_total')) - reconcilesBefore >= N,
    (RESYNC_SECONDS + 40) * 1000,
  );
  await until('queue drained', async () => (await metric('scriptorium_operator_workqueue_depth')) === 0, 30_000);
  await sleep(1000);
  const quietWrites = (await metric('scriptorium_operator_writes_total')) - writesBefore;
  const quietReconciles = (await metric('scriptorium_operator_reconcile_total')) - reconcilesBefore;
  const rssEndMb = rssMb();
  clearInterval(rssTimer);

  const result = {
    objects: N,
    concurrency: Number(process.env.BENCH_OPERATOR_CONCURRENCY ?? 16),
    createSeconds: +(createdMs / 1000).toFixed(2),
    firstPassSeconds: +(firstPassMs / 1000).toFixed(2),
    allReconciledSeconds: +(reconciledMs / 1000).toFixed(2),
    deployments,
    operatorCpuSecondsUntilReconciled: +cpuAtReconciled.toFixed(1),
    loadAverage1m: +(readFileSync('/proc/loadavg', 'utf8').split(' ')[0] ?? 0),
    writesPerObject: +(writesAfterReconcile / N).toFixed(2),
    apiRequestsUntilReconciled: requestsAfterReconcile,
    quietResync: { reconciles: quietReconciles, writes: quietWrites },
    operatorRssMb: { max: +rssMaxMb.toFixed(1), end: +rssEndMb.toFixed(1) },
    targets: { allReconciledSeconds: 60, quietResyncWrites: 0, operatorRssMb: 200 },
    met: {
      allReconciledSeconds: reconciledMs / 1000 <= 60,
      quietResyncWrites: quietWrites === 0,
      operatorRssMb: rssMaxMb < 200,
    },
    notes:
      'Reconciled = status.observedGeneration current and Progressing RollingOut/RolloutComplete (Deployment and CronJobs exist, after the migration Job succeeded). Writes = creates, applies, deletes and status writes by the operator. Machine: 2 shared cores; control plane, controller-manager, operator and this script on the same machine.',
    date: new Date().toISOString(),
  };
  console.log(JSON.stringify(result, null, 2));
  writeFileSync(join(repo, 'bench/results/operator.json'), `${JSON.stringify(result, null, 2)}\n`);
} finally {
  kubeletRunning = false;
  if (operator && operator.exitCode === null) {
    operator.kill('SIGTERM');
    await Promise.race([new Promise((resolve) => operator?.once('exit', resolve)), sleep(15_000)]);
    if (operator.exitCode === null) operator.kill('SIGKILL');
  }
  client.close();
  await plane.stop();
}
