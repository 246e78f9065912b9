import type { LedgerCluster, LedgerClusterSpec } from '../../api/index.ts';
import { RESOURCES } from '../../kube/resources.ts';
import { MANAGED_SELECTOR } from '../../specs/ledger-cluster/index.ts';
import { Controller, type ControllerDefinition, type ControllerOptions } from '../controller-runtime.ts';
import type { LedgerReconcileDeps } from './deps.ts';
import type { NodeApi } from './observe.ts';
import { ledgerOwnerKey, podChanged } from './predicates.ts';
import { reconcileLedgerCluster } from './reconcile.ts';
import { STATEFUL_SET } from './resources.ts';

export interface LedgerControllerOptions extends ControllerOptions {
  /** Node API client factory (a LedgerNodeClient in production). */
  nodeApi: (opts: { token?: string; caPem?: string }) => NodeApi;
  /** Base URL of a validator (default: its Service DNS name; tests point it at loopback). */
  nodeUrl?: (lc: LedgerCluster, spec: LedgerClusterSpec, validator: string) => string;
  /** Clock (tests). */
  now?: () => Date;
}

/**
 * The LedgerCluster controller: the custom resource and everything it owns (StatefulSets, Services, ConfigMaps,
 * PodDisruptionBudgets, the Ingress, Secret metadata, and the validator pods, so a pod's readiness re-triggers).
 */
export const LEDGER_CLUSTER_CONTROLLER: ControllerDefinition<LedgerReconcileDeps> = {
  name: 'ledgercluster',
  resource: RESOURCES.LedgerCluster,
  selector: MANAGED_SELECTOR,
  ownerKey: ledgerOwnerKey,
  watches: [
    { type: STATEFUL_SET },
    { type: RESOURCES.Service },
    { type: RESOURCES.ConfigMap },
    { type: RESOURCES.PodDisruptionBudget },
    { type: RESOURCES.Ingress },
    // The backup and restore-drill CronJobs.
    { type: RESOURCES.CronJob },
    // Metadata only: Secret data (keys, the CA key, the token) never enters the cache.
    { type: RESOURCES.Secret, metadataOnly: true },
    { type: RESOURCES.Pod, changed: podChanged },
  ],
  watchLabelPrefix: 'ledger-',
  reconcile: reconcileLedgerCluster,
};

export class LedgerClusterController extends Controller<LedgerReconcileDeps> {
  static readonly NAME = LEDGER_CLUSTER_CONTROLLER.name;

  constructor(options: LedgerControllerOptions) {
    super(LEDGER_CLUSTER_CONTROLLER, options, {
      nodeApi: options.nodeApi,
      nodeUrl: options.nodeUrl,
      ...(options.now ? { now: options.now } : {}),
    });
  }
}
