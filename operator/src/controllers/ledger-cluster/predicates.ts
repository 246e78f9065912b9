import { LC_KIND } from '../../api/index.ts';
import { controllerOf, type KubeObject } from '../../kube/types.ts';
import { CLUSTER_LABEL } from '../../specs/ledger-cluster/index.ts';

/**
 * `namespace/name` of the LedgerCluster an object belongs to: its controller owner reference, or for pods (owned
 * by a StatefulSet) the `scriptorium.dev/ledger-cluster` label.
 */
export function ledgerOwnerKey(obj: KubeObject): string | undefined {
  const ref = controllerOf(obj);
  if (ref && ref.kind === LC_KIND && ref.apiVersion.startsWith('scriptorium.dev/'))
    return `${obj.metadata.namespace ?? ''}/${ref.name}`;
  const label = obj.metadata.labels?.[CLUSTER_LABEL];
  if (obj.kind === 'Pod' && label) return `${obj.metadata.namespace ?? ''}/${label}`;
  return undefined;
}

export { needsReconcile as ledgerNeedsReconcile } from '../controller-runtime.ts';

/** Whether a pod event matters: readiness or phase changed, or it appeared/disappeared. */
export function podChanged(obj: KubeObject, old: KubeObject | undefined): boolean {
  if (!old) return true;
  const ready = (p: KubeObject) =>
    (p.status?.conditions ?? []).find((c: { type: string }) => c.type === 'Ready')?.status ?? 'Unknown';
  return ready(obj) !== ready(old) || obj.status?.phase !== old.status?.phase || obj.metadata.uid !== old.metadata.uid;
}
