// What each end-to-end file sets up first: the checkout's CRDs, a namespace of its own, and the operator chart
// as a Helm release in that namespace, watching only it.
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type E2eConfig, repoRoot } from './config.ts';
import { condition, type Kube, type KubeList, type KubeObject, waitFor } from './kube.ts';

/**
 * Applies the checkout's CRDs (helm installs a chart's crds/ only when they are missing, and never removes them) and
 * waits until both are Established: polled, since `kubectl wait` fails at once on a CRD created a moment ago.
 */
export async function applyCrds(k: Kube): Promise<void> {
  await k.kubectl(['apply', '--server-side', '--force-conflicts', '-f', join(repoRoot, 'crds')]);
  await waitFor(
    'the CRDs to be Established',
    async () => {
      for (const crd of ['translationservices.scriptorium.dev', 'ledgerclusters.scriptorium.dev']) {
        const obj = await k.getJson(['crd', crd]);
        if (condition(obj, 'Established')?.status !== 'True') return undefined;
      }
      return true;
    },
    { timeoutMs: 60_000, intervalMs: 1000 },
  );
}

/** A new namespace, labelled as the suite's. */
export async function createNamespace(k: Kube, namespace: string): Promise<void> {
  await k.kubectl(['create', 'namespace', namespace]);
  await k.kubectl(['label', 'namespace', namespace, 'app.kubernetes.io/part-of=scriptorium-e2e']);
}

/** The operator chart as the Helm release `release` in `namespace`, its operator watching only that namespace. */
export async function installOperator(k: Kube, config: E2eConfig, namespace: string, release = namespace) {
  await k.helm([
    'install',
    release,
    join(repoRoot, 'charts/scriptorium-operator'),
    '-n',
    namespace,
    '--set',
    `image.repository=${config.operatorImage.repository}`,
    '--set',
    `image.tag=${config.operatorImage.tag}`,
    '--set',
    `image.pullPolicy=${config.pullPolicy}`,
    '--set',
    `operator.watchNamespace=${namespace}`,
    '--wait',
    '--timeout',
    `${config.waitMs / 1000}s`,
  ]);
}

/**
 * Two operators must never reconcile the same objects: throws when one installed in the cluster watches every
 * namespace (it would reconcile each file's objects too).
 */
export async function refuseClusterWideOperator(k: Kube): Promise<void> {
  const operators = await k.getJson<
    KubeList<
      KubeObject & { spec: { template: { spec: { containers: { env?: { name: string; value?: string }[] }[] } } } }
    >
  >(['deployments', '-A', '-l', 'app.kubernetes.io/name=scriptorium-operator']);
  for (const d of operators.items) {
    const env = d.spec.template.spec.containers[0]?.env ?? [];
    const watch = env.find((e) => e.name === 'WATCH_NAMESPACE')?.value ?? '';
    if (watch === '') {
      throw new Error(
        `the operator ${d.metadata.namespace}/${d.metadata.name} watches every namespace; it would reconcile the suite's objects too (install it with operator.watchNamespace set, as make cluster-up's demo does)`,
      );
    }
  }
}

const execFileAsync = promisify(execFile);

/**
 * `kubectl scriptorium`, installed the documented way (`make kubectl-plugin BINDIR=…`, a folder of its own) and found
 * by kubectl itself as a plugin on PATH: returns a runner of `kubectl scriptorium ARGS` that gives its output.
 */
export async function kubectlPlugin(config: E2eConfig): Promise<(args: string[]) => Promise<string>> {
  const bin = mkdtempSync(join(tmpdir(), 'e2e-plugin-'));
  await execFileAsync('make', ['--no-print-directory', 'kubectl-plugin', `BINDIR=${bin}`], { cwd: repoRoot });
  const env = { ...process.env, KUBECONFIG: config.kubeconfig, PATH: `${bin}:${process.env.PATH ?? ''}` };
  return async (args) =>
    (await execFileAsync(config.kubectl, ['scriptorium', ...args], { env, timeout: 120_000 })).stdout;
}
