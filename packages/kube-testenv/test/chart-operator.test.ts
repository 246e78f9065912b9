// The chart's RBAC is enough for the real operator, and the sample works: the operator runs as the
// chart's ServiceAccount (a bound token, not system:masters) and reconciles
// deploy/samples/translation-service.yaml to Ready; a 403 anywhere in its log fails the test.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '@scriptorium/test-support/ports';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubeBinDir, serviceAccountKubeconfig, startTestControlPlane, type TestControlPlane } from '../src/index.ts';

const repo = fileURLToPath(new URL('../../../', import.meta.url));
const chart = join(repo, 'charts/scriptorium-operator');
const system = 'scriptorium-system';
const demo = 'scriptorium-demo';
const serviceAccount = 'scriptorium-scriptorium-operator';

async function eventually<T>(what: string, check: () => T | undefined, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const value = check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`timed out waiting for ${what}${last ? ` (last error: ${last})` : ''}`);
}

describe('the chart RBAC runs the real operator on the TranslationService sample', () => {
  let plane: TestControlPlane;
  let operator: ChildProcess | undefined;
  let operatorLog = '';
  const kubectl = (...args: string[]) =>
    execFileSync('kubectl', ['--kubeconfig', plane.kubeconfigPath, ...args], {
      encoding: 'utf8',
      timeout: 60_000,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
  const jsonpath = (path: string, ...target: string[]) => kubectl('get', ...target, '-o', `jsonpath=${path}`).trim();

  beforeAll(async () => {
    plane = await startTestControlPlane();
    kubectl('apply', '--server-side', '-f', join(chart, 'crds'));
    kubectl('wait', '--for=condition=Established', '--timeout=60s', '-f', join(chart, 'crds'));
    kubectl('create', 'namespace', system);
    const rbac = execFileSync(
      join(kubeBinDir(), 'helm'),
      ['template', 'scriptorium', chart, '--namespace', system, '--show-only', 'templates/serviceaccount.yaml']
        .concat(['--show-only', 'templates/clusterrole.yaml', '--show-only', 'templates/clusterrolebinding.yaml'])
        .concat(['--show-only', 'templates/leader-election-rbac.yaml']),
      { encoding: 'utf8' },
    );
    execFileSync('kubectl', ['--kubeconfig', plane.kubeconfigPath, 'apply', '--server-side', '-f', '-'], {
      input: rbac,
    });
    const kubeconfig = await serviceAccountKubeconfig(plane, { namespace: system, name: serviceAccount });
    operator = spawn(process.execPath, [join(repo, 'operator/src/main.ts')], {
      env: {
        PATH: process.env.PATH,
        KUBECONFIG: kubeconfig,
        POD_NAMESPACE: system,
        POD_NAME: 'operator-under-test',
        HTTP__HOST: '127.0.0.1',
        HTTP__PORT: String(await freePort()),
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    operator.stdout?.on('data', (chunk: Buffer) => {
      operatorLog += chunk.toString();
    });
    operator.stderr?.on('data', (chunk: Buffer) => {
      operatorLog += chunk.toString();
    });
  });

  afterAll(async () => {
    if (operator && operator.exitCode === null) {
      const exited = new Promise((resolve) => operator?.once('exit', resolve));
      operator.kill('SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 15_000))]);
      operator.kill('SIGKILL');
    }
    await plane?.stop();
  });

  /** The operator's log lines that mention a refusal, to explain a timeout. */
  const refusals = () =>
    operatorLog
      .split('\n')
      .filter((line) => /forbidden|\b403\b/i.test(line))
      .slice(0, 5)
      .join('\n');

  it('takes the Lease, reconciles the sample to Ready, and is never refused', async () => {
    try {
      await reconcileSample();
    } catch (error) {
      const why = refusals();
      throw why ? new Error(`${(error as Error).message}\noperator refusals:\n${why}`) : error;
    }
    expect(refusals()).toBe('');
  }, 180_000);

  it('the LedgerCluster sample: kubectl scale works and genesis is immutable (what e2e-kind.sh relies on)', () => {
    kubectl('create', 'namespace', 'ledger-sample');
    kubectl('apply', '-n', 'ledger-sample', '-f', join(repo, 'deploy/samples/ledger-cluster.yaml'));
    kubectl('scale', '-n', 'ledger-sample', 'ledgercluster/ledger', '--replicas=5');
    expect(jsonpath('{.spec.validators}', 'ledgercluster', 'ledger', '-n', 'ledger-sample')).toBe('5');
    let refusal = '';
    try {
      kubectl(
        'patch',
        '-n',
        'ledger-sample',
        'ledgercluster',
        'ledger',
        '--type=merge',
        '-p',
        '{"spec":{"genesis":{"chainId":"other"}}}',
      );
    } catch (error) {
      refusal = String((error as { stderr?: string }).stderr);
    }
    expect(refusal).toContain('genesis is immutable');
  });

  async function reconcileSample() {
    await eventually('the operator to hold the Lease', () =>
      jsonpath('{.spec.holderIdentity}', 'lease', 'scriptorium-operator', '-n', system) === 'operator-under-test'
        ? true
        : undefined,
    );

    kubectl('create', 'namespace', demo);
    kubectl('apply', '-n', demo, '-f', join(repo, 'deploy/samples/translation-service.yaml'));

    // Play the kubelet (there is none): the migration Job's pod succeeds, then the API pods become ready.
    const job = await eventually(
      'the migration Job',
      () => jsonpath('{.status.migration.job}', 'translationservice', 'translation', '-n', demo) || undefined,
    );
    const jobPods = await eventually('the migration pod', () => {
      const names = jsonpath('{.items[*].metadata.name}', 'pods', '-n', demo, '-l', `job-name=${job}`);
      return names ? names.split(' ') : undefined;
    });
    for (const pod of jobPods) {
      kubectl(
        'patch',
        'pod',
        pod,
        '-n',
        demo,
        '--subresource=status',
        '--type=merge',
        '-p',
        '{"status":{"phase":"Succeeded"}}',
      );
    }
    const apiSelector = 'app.kubernetes.io/instance=translation,app.kubernetes.io/component=api';
    const apiPods = await eventually('the API pods', () => {
      const names = jsonpath('{.items[*].metadata.name}', 'pods', '-n', demo, '-l', apiSelector);
      return names && names.split(' ').length === 2 ? names.split(' ') : undefined;
    });
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    const ready = JSON.stringify({
      status: {
        phase: 'Running',
        conditions: [
          { type: 'Ready', status: 'True', lastTransitionTime: now },
          { type: 'ContainersReady', status: 'True', lastTransitionTime: now },
        ],
      },
    });
    for (const pod of apiPods)
      kubectl('patch', 'pod', pod, '-n', demo, '--subresource=status', '--type=merge', '-p', ready);

    await eventually('the TranslationService to be Ready', () =>
      jsonpath('{.status.conditions[?(@.type=="Ready")].status}', 'translationservice', 'translation', '-n', demo) ===
      'True'
        ? true
        : undefined,
    );
    // Everything the sample asks for exists, made by the operator with the chart's permissions only.
    for (const kind of ['deployment', 'service', 'cronjobs', 'poddisruptionbudget']) {
      expect(
        jsonpath(
          '{.items[*].metadata.name}',
          kind,
          '-n',
          demo,
          '-l',
          'app.kubernetes.io/managed-by=scriptorium-operator',
        ),
      ).not.toBe('');
    }
    expect(kubectl('get', 'events', '-n', demo, '-o', 'name')).not.toBe('');
  }
});
