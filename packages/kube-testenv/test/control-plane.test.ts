import { execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubeBinDir, startTestControlPlane, type TestControlPlane } from '../src/index.ts';

const repo = fileURLToPath(new URL('../../../', import.meta.url));

/** Poll until `check` returns a value, at most `timeoutMs`. */
async function eventually<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('test control plane', () => {
  let plane: TestControlPlane;

  beforeAll(async () => {
    plane = await startTestControlPlane();
  });

  afterAll(async () => {
    await plane?.stop();
  });

  it('serves the admin identity to kubectl over verified TLS', () => {
    const out = execFileSync('kubectl', ['--kubeconfig', plane.kubeconfigPath, 'auth', 'whoami', '-o', 'json'], {
      encoding: 'utf8',
    });
    const review = JSON.parse(out) as { status: { userInfo: { username: string; groups: string[] } } };
    expect(review.status.userInfo.username).toBe('scriptorium-test-admin');
    expect(review.status.userInfo.groups).toContain('system:masters');
  });

  it('runs the Deployment controller and garbage collection (kube-controller-manager)', async () => {
    const core = plane.kubeConfig.makeApiClient(CoreV1Api);
    const apps = plane.kubeConfig.makeApiClient(AppsV1Api);
    const namespace = 'kube-testenv-check';
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    // The service-account controller creates the namespace's default ServiceAccount.
    await eventually('the default ServiceAccount', async () => {
      const list = await core.listNamespacedServiceAccount({ namespace });
      return list.items.find((sa) => sa.metadata?.name === 'default');
    });

    const labels = { app: 'web' };
    const deployment = await apps.createNamespacedDeployment({
      namespace,
      body: {
        metadata: { name: 'web' },
        spec: {
          replicas: 1,
          selector: { matchLabels: labels },
          template: { metadata: { labels }, spec: { containers: [{ name: 'web', image: 'example.invalid/web:1' }] } },
        },
      },
    });

    const replicaSet = await eventually('a ReplicaSet owned by the Deployment', async () => {
      const list = await apps.listNamespacedReplicaSet({ namespace });
      return list.items.find((rs) => rs.metadata?.ownerReferences?.some((o) => o.uid === deployment.metadata?.uid));
    });
    expect(replicaSet.spec?.template?.spec?.containers[0]?.image).toBe('example.invalid/web:1');

    await apps.deleteNamespacedDeployment({ name: 'web', namespace });
    await eventually('garbage collection of the ReplicaSet', async () => {
      const list = await apps.listNamespacedReplicaSet({ namespace });
      return list.items.length === 0 ? true : undefined;
    });
  });

  describe('charts/lint.sh (make chart-lint) on this control plane', () => {
    const lint = (chart?: string) =>
      spawnSync('bash', [join(repo, 'charts/lint.sh')], {
        encoding: 'utf8',
        timeout: 240_000,
        env: {
          ...process.env,
          CHART_LINT_KUBECONFIG: plane.kubeconfigPath,
          SCRIPTORIUM_KUBE_BIN: kubeBinDir(),
          ...(chart ? { CHART_LINT_CHART: chart } : {}),
        },
      });

    it('passes: helm lint, schema refusals, server-side dry-run, RBAC can-i, kustomize base', () => {
      const run = lint();
      expect(run.stderr + run.stdout).toContain('chart-lint: ok');
      expect(run.status).toBe(0);
    }, 240_000);

    it('fails when the ClusterRole grows broader than the reconcilers need', () => {
      const copy = mkdtempSync(join(tmpdir(), 'chart-lint-'));
      try {
        cpSync(join(repo, 'charts/scriptorium-operator'), copy, { recursive: true });
        // A wildcard rule appended to the ClusterRole's rules.
        appendFileSync(
          join(copy, 'templates/clusterrole.yaml'),
          '\n{{- if .Values.rbac.create }}\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: too-broad\nrules:\n  - apiGroups: [""]\n    resources: [pods]\n    verbs: ["*"]\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: too-broad\nroleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: too-broad }\nsubjects:\n  - { kind: ServiceAccount, name: {{ include "scriptorium-operator.serviceAccountName" . }}, namespace: {{ .Release.Namespace }} }\n{{- end }}\n',
        );
        const run = lint(copy);
        expect(run.status).not.toBe(0);
        expect(run.stderr).toMatch(/may 'create pods'/);
      } finally {
        rmSync(copy, { recursive: true, force: true });
        execFileSync('kubectl', [
          '--kubeconfig',
          plane.kubeconfigPath,
          'delete',
          'clusterrolebinding,clusterrole',
          'too-broad',
          '--ignore-not-found',
        ]);
      }
    }, 240_000);
  });

  it('stop() kills every process and removes its folder', async () => {
    const second = await startTestControlPlane({ withControllerManager: false });
    const pids = execFileSync('cat', [`${second.dir}/pids`], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .map(Number);
    expect(pids).toHaveLength(2);
    await second.stop();
    expect(existsSync(second.dir)).toBe(false);
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow();
    await second.stop(); // idempotent
  });
});
