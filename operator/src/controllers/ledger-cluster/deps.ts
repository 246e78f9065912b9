import type { LedgerCluster, LedgerClusterSpec } from '../../api/index.ts';
import { isNotFound } from '../../errors.ts';
import { RESOURCES, resourcePath } from '../../kube/resources.ts';
import type { KubeObject } from '../../kube/types.ts';
import type { Pem } from '../../specs/ledger-cluster/index.ts';
import type { ReconcilerDeps, ReconcileStats } from '../reconcile-frame.ts';
import type { NodeApi } from './observe.ts';

export { FINALIZER } from '../reconcile-frame.ts';
/** How often a healthy cluster is looked at again (height, members); sooner while something is in progress. */
export const RESYNC_MS = 15_000;
export const PROGRESS_MS = 3_000;
/** Validity of operator-issued validator certificates (the operator cannot rewrite a Secret, see docs/operator.md). */
export const NODE_CERT_DAYS = 365;

export type { ReconcileStats };

export interface LedgerReconcileDeps extends ReconcilerDeps {
  /** Node API client for one cluster (its token and CA). */
  nodeApi: (opts: { token?: string; caPem?: string; clientCert?: Pem }) => NodeApi;
  /** Resubmit a membership change that has not taken effect after this long (planner default 60 s). */
  resubmitAfterMs?: number;
  /** Base URL of a validator's API; the cluster DNS name by default (tests point it at loopback). */
  nodeUrl?: (lc: LedgerCluster, spec: LedgerClusterSpec, validator: string) => string;
  now?: () => Date;
}

export type Result = { requeueAfterMs?: number } | undefined;

/** Read a Secret's data (only our own key material or a referenced CA; never cached, never logged). */
export async function readSecret(
  deps: LedgerReconcileDeps,
  namespace: string,
  name: string,
): Promise<KubeObject | undefined> {
  try {
    return await deps.client.request<KubeObject>('GET', resourcePath(RESOURCES.Secret, namespace, name));
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}
