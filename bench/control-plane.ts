// What the operator benchmarks (operator, ledger-cluster) do on the test control plane before they measure: the
// operator's CRDs installed and served, a namespace; and the bounded poll both wait with.

import { buildCrds } from '@scriptorium/operator';
import type { KubeClient } from '@scriptorium/operator/kube';
import { RESOURCES, resourcePath } from '@scriptorium/operator/kube';

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` every `intervalMs` until it gives a value other than undefined or false; fails after `timeoutMs`. */
export async function until<T>(
  what: string,
  check: () => Promise<T | undefined | false>,
  timeoutMs: number,
  intervalMs = 1000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    await sleep(intervalMs);
  }
  throw new Error(`bench: timed out waiting for ${what}`);
}

/** Applies the operator's CRDs and waits until the API serves both kinds. */
export async function installCrds(client: KubeClient): Promise<void> {
  for (const crd of Object.values(buildCrds())) {
    const name = (crd.metadata as { name: string }).name;
    await client.request('PATCH', resourcePath(RESOURCES.CustomResourceDefinition, undefined, name), {
      body: crd,
      contentType: 'application/apply-patch+yaml',
      query: { fieldManager: 'bench', force: true },
    });
  }
  await until(
    'the CRDs served',
    async () => {
      try {
        await client.request('GET', resourcePath(RESOURCES.TranslationService, 'default'));
        await client.request('GET', resourcePath(RESOURCES.LedgerCluster, 'default'));
        return true;
      } catch {
        return false;
      }
    },
    60_000,
    500,
  );
}

export async function createNamespace(client: KubeClient, name: string): Promise<void> {
  await client.request('POST', resourcePath(RESOURCES.Namespace), {
    body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } },
  });
}
