import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import type { TestControlPlane } from './control-plane.ts';
import { renderKubeconfig } from './kubeconfig.ts';

export interface ServiceAccountRef {
  namespace: string;
  name: string;
  /** Token lifetime; default one hour. */
  expirationSeconds?: number;
}

/**
 * A kubeconfig that authenticates as a ServiceAccount (bound token from the TokenRequest API), so a
 * process under test runs with exactly the RBAC a chart grants it instead of system:masters.
 * The ServiceAccount must exist. The file lives in the control plane's folder and goes with stop().
 *
 * @example
 * const path = await serviceAccountKubeconfig(plane, { namespace: 'scriptorium-system', name: 'operator' });
 * spawn('node', ['operator/src/main.ts'], { env: { ...process.env, KUBECONFIG: path } });
 */
export async function serviceAccountKubeconfig(plane: TestControlPlane, account: ServiceAccountRef): Promise<string> {
  const core = plane.kubeConfig.makeApiClient(CoreV1Api);
  const review = await core.createNamespacedServiceAccountToken({
    namespace: account.namespace,
    name: account.name,
    body: { spec: { audiences: [], expirationSeconds: account.expirationSeconds ?? 3600 } },
  });
  const token = review.status?.token;
  if (!token) throw new Error(`kube-testenv: no token issued for ${account.namespace}/${account.name}`);
  const path = join(plane.dir, `sa-${account.namespace}-${account.name}.kubeconfig`);
  const user = `system:serviceaccount:${account.namespace}:${account.name}`;
  await writeFile(path, renderKubeconfig({ server: plane.server, caPem: plane.caPem, token, user }), { mode: 0o600 });
  return path;
}
