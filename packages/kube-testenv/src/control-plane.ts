import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { freePort } from '@scriptorium/test-support/ports';
import { type KubeBinary, kubeBinary } from './binaries.ts';
import { generatePki } from './certs.ts';
import { renderKubeconfig } from './kubeconfig.ts';
import { DIR_PREFIX, type ManagedProcess, reapOrphans, startProcess, stopProcess, waitUntil } from './processes.ts';

export interface TestControlPlaneOptions {
  /** Also run kube-controller-manager (garbage collection, Deployments → ReplicaSets, Jobs, …). Default true. */
  withControllerManager?: boolean;
  /** Extra kube-apiserver flags, e.g. `['--feature-gates=Foo=true']`. */
  apiServerArgs?: string[];
  /** Extra kube-controller-manager flags, e.g. `['--kube-api-qps=200', '--kube-api-burst=400']` for load tests. */
  controllerManagerArgs?: string[];
  /** How long to wait for each component to become ready. Default 120 s (2 shared cores). */
  startTimeoutMs?: number;
}

export interface TestControlPlane {
  /** Admin kubeconfig (group system:masters), certificates inlined. */
  kubeconfigPath: string;
  /** The same admin identity, loaded into @kubernetes/client-node (`kubeConfig.makeApiClient(CoreV1Api)`). */
  kubeConfig: KubeConfig;
  /** `https://127.0.0.1:<port>` */
  server: string;
  /** The control plane's own folder (PKI, logs, etcd data); removed by stop(). */
  dir: string;
  /** PEM of the cluster CA, for clients that build their own TLS settings. */
  caPem: string;
  /** Kill every process and delete the folder. Safe to call twice. */
  stop(): Promise<void>;
}

/** The Service CIDR; its first address is the `kubernetes` Service and is in the serving certificate. */
const SERVICE_CIDR = '10.96.0.0/24';
const SERVICE_IP = '10.96.0.1';

/**
 * Controllers kube-controller-manager must not run here: they need a cloud provider, real nodes
 * or a CNI. Everything else (`*`) runs, so garbage collection, Deployments, Jobs, CronJobs,
 * StatefulSets, namespaces, service accounts and EndpointSlices behave as in a real cluster.
 */
export const DISABLED_CONTROLLERS = [
  'node-ipam-controller',
  'node-lifecycle-controller',
  'cloud-node-lifecycle-controller',
  'node-route-controller',
  'service-lb-controller',
  'persistentvolume-attach-detach-controller',
  'taint-eviction-controller',
];

/** TLS client settings for the admin identity. */
interface AdminTls {
  ca: string;
  cert: string;
  key: string;
}

function get(url: string, tls: AdminTls | 'insecure' | null): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const options =
      tls === null
        ? {}
        : tls === 'insecure'
          ? // kube-controller-manager serves /healthz with a self-signed certificate it makes at start.
            { rejectUnauthorized: false }
          : { ca: tls.ca, cert: tls.cert, key: tls.key };
    const req = (tls === null ? httpRequest : request)(url, { ...options, timeout: 5_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error(`timeout on ${url}`)));
    req.on('error', reject);
    req.end();
  });
}

/**
 * Start a real Kubernetes control plane on loopback: etcd, kube-apiserver (RBAC, service
 * accounts, generated PKI) and, unless disabled, kube-controller-manager. Resolves once
 * `/readyz` answers ok and the controller manager is healthy.
 *
 * @example
 * const cp = await startTestControlPlane();
 * try { execFileSync('kubectl', ['--kubeconfig', cp.kubeconfigPath, 'get', 'ns']); } finally { await cp.stop(); }
 */
export async function startTestControlPlane(options: TestControlPlaneOptions = {}): Promise<TestControlPlane> {
  // A free port is only free until someone else binds it: with test files starting servers in
  // parallel, a component can lose its port between freePort() and its own bind. Start again
  // (fresh ports, fresh folder) in that one case, at most three times in all.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options);
    } catch (error) {
      const lostPort = error instanceof Error && /address already in use/i.test(error.message);
      if (!lostPort || attempt >= 3) throw error;
    }
  }
}

async function startOnce(options: TestControlPlaneOptions): Promise<TestControlPlane> {
  const withControllerManager = options.withControllerManager ?? true;
  const timeout = options.startTimeoutMs ?? 120_000;
  const bin = (name: KubeBinary) => kubeBinary(name);
  // Resolve every binary before creating anything, so a missing build fails fast and cleanly.
  const etcdBin = bin('etcd');
  const apiServerBin = bin('kube-apiserver');
  const controllerManagerBin = withControllerManager ? bin('kube-controller-manager') : '';

  reapOrphans(tmpdir());
  const dir = mkdtempSync(join(tmpdir(), DIR_PREFIX));
  writeFileSync(join(dir, 'owner.pid'), `${process.pid}\n`);
  const processes: ManagedProcess[] = [];
  let stopped = false;
  const killNow = () => {
    for (const p of processes) p.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', killNow);

  const stop = async () => {
    if (stopped) return;
    stopped = true;
    process.removeListener('exit', killNow);
    // Reverse order: the controller manager first, etcd last.
    for (const p of [...processes].reverse()) await stopProcess(p);
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    const pki = await generatePki(dir, SERVICE_IP);
    const [caPem, adminCert, adminKey] = await Promise.all([
      readFile(pki.caCert, 'utf8'),
      readFile(pki.adminCert, 'utf8'),
      readFile(pki.adminKey, 'utf8'),
    ]);
    const tls: AdminTls = { ca: caPem, cert: adminCert, key: adminKey };

    const [etcdPort, etcdPeerPort, apiPort, kcmPort] = await Promise.all([
      freePort(),
      freePort(),
      freePort(),
      freePort(),
    ]);
    const etcdUrl = `http://127.0.0.1:${etcdPort}`;
    const etcd = await startProcess(dir, 'etcd', etcdBin, [
      `--name=test`,
      `--data-dir=${join(dir, 'etcd')}`,
      `--listen-client-urls=${etcdUrl}`,
      `--advertise-client-urls=${etcdUrl}`,
      `--listen-peer-urls=http://127.0.0.1:${etcdPeerPort}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeerPort}`,
      `--initial-cluster=test=http://127.0.0.1:${etcdPeerPort}`,
      '--unsafe-no-fsync',
      '--log-level=warn',
    ]);
    processes.push(etcd);
    await waitUntil(
      etcd,
      'healthy',
      async () => {
        const res = await get(`${etcdUrl}/health`, null);
        return res.status === 200 && res.body.includes('"true"');
      },
      timeout,
    );

    const server = `https://127.0.0.1:${apiPort}`;
    const apiServer = await startProcess(dir, 'kube-apiserver', apiServerBin, [
      `--etcd-servers=${etcdUrl}`,
      `--secure-port=${apiPort}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      `--cert-dir=${join(dir, 'apiserver-certs')}`,
      `--tls-cert-file=${pki.servingCert}`,
      `--tls-private-key-file=${pki.servingKey}`,
      `--client-ca-file=${pki.caCert}`,
      '--authorization-mode=RBAC',
      `--service-account-issuer=https://kubernetes.default.svc.cluster.local`,
      `--service-account-key-file=${pki.serviceAccountPublicKey}`,
      `--service-account-signing-key-file=${pki.serviceAccountKey}`,
      `--service-cluster-ip-range=${SERVICE_CIDR}`,
      '--allow-privileged=true',
      '--v=1',
      ...(options.apiServerArgs ?? []),
    ]);
    processes.push(apiServer);
    await waitUntil(
      apiServer,
      'ready (/readyz)',
      async () => (await get(`${server}/readyz`, tls)).status === 200,
      timeout,
    );

    const kubeconfigPath = join(dir, 'admin.kubeconfig');
    await writeFile(
      kubeconfigPath,
      renderKubeconfig({ server, caPem, certPem: adminCert, keyPem: adminKey, user: 'scriptorium-test-admin' }),
      { mode: 0o600 },
    );

    if (withControllerManager) {
      const kcmKubeconfig = join(dir, 'controller-manager.kubeconfig');
      const [kcmCert, kcmKey] = await Promise.all([
        readFile(pki.controllerManagerCert, 'utf8'),
        readFile(pki.controllerManagerKey, 'utf8'),
      ]);
      await writeFile(
        kcmKubeconfig,
        renderKubeconfig({ server, caPem, certPem: kcmCert, keyPem: kcmKey, user: 'system:kube-controller-manager' }),
        { mode: 0o600 },
      );
      const kcm = await startProcess(dir, 'kube-controller-manager', controllerManagerBin, [
        `--kubeconfig=${kcmKubeconfig}`,
        `--authentication-kubeconfig=${kcmKubeconfig}`,
        `--authorization-kubeconfig=${kcmKubeconfig}`,
        `--controllers=*,${DISABLED_CONTROLLERS.map((c) => `-${c}`).join(',')}`,
        '--use-service-account-credentials',
        `--service-account-private-key-file=${pki.serviceAccountKey}`,
        `--root-ca-file=${pki.caCert}`,
        `--cluster-signing-cert-file=${pki.caCert}`,
        `--cluster-signing-key-file=${pki.caKey}`,
        `--service-cluster-ip-range=${SERVICE_CIDR}`,
        '--leader-elect=false',
        `--secure-port=${kcmPort}`,
        '--bind-address=127.0.0.1',
        `--cert-dir=${join(dir, 'controller-manager-certs')}`,
        '--v=1',
        ...(options.controllerManagerArgs ?? []),
      ]);
      processes.push(kcm);
      await waitUntil(
        kcm,
        'healthy (/healthz)',
        async () => (await get(`https://127.0.0.1:${kcmPort}/healthz`, 'insecure')).status === 200,
        timeout,
      );
    }

    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(kubeconfigPath);
    return { kubeconfigPath, kubeConfig, server, dir, caPem, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
