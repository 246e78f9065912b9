export { LedgerClusterController, type LedgerControllerOptions } from './controller.ts';
export { type ChainSummary, type ClusterObservation, type NodeApi, observeNodes } from './observe.ts';
export { ledgerNeedsReconcile, ledgerOwnerKey, podChanged } from './predicates.ts';
export { FINALIZER, type LedgerReconcileDeps, reconcileLedgerCluster } from './reconcile.ts';
export { PVC, STATEFUL_SET } from './resources.ts';
