// Names of the node's metrics that another part reads: the operator reads these three from a validator's
// GET /metrics (Prometheus text) to tell whether consensus makes progress, since the spec's /chain carries no
// round and no pending work. The node registers its metrics under these names; the operator parses them.

/** Current consensus round at the open height (a gauge). */
export const ROUND_METRIC = 'scriptorium_ledger_round';
/** Records waiting in the node's mempool (a gauge). */
export const MEMPOOL_METRIC = 'scriptorium_ledger_mempool_records';
/** Rounds the node moved past a round 0 (a counter). */
export const ROUND_CHANGES_METRIC = 'scriptorium_ledger_round_changes_total';

/**
 * Changes a sweep found that no notification had announced (subscribe mode; a counter, by broker): notifications
 * lost between a broker and the node. The benchmark and the tests read it.
 */
export const MISSED_CHANGES_METRIC = 'scriptorium_ledger_missed_changes_total';
