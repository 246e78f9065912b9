// Operator support for LedgerCluster: the cluster PKI, the HTTP client to ledger nodes and the pure
// membership planner. The LedgerCluster reconciler is their user.

export {
  type ChainView,
  DEFAULT_TIMEOUT_MS,
  LedgerNodeClient,
  type LedgerNodeClientOptions,
  LedgerNodeError,
  type LedgerNodeErrorKind,
  MAX_RESPONSE_BYTES,
  parseChainStatus,
} from './ledger-node-client.ts';
export {
  DEFAULT_RESUBMIT_AFTER_MS,
  type DesiredValidator,
  type ExternalValidator,
  isChangeApplied,
  type MembershipAction,
  type MembershipInput,
  type ObservedMember,
  type PendingChange,
  planMembership,
} from './membership.ts';
export { type ConsensusView, parseConsensusMetrics } from './node-metrics.ts';
export {
  CLOCK_SKEW_MS,
  certificateNeedsRenewal,
  createClusterCa,
  DEFAULT_CA_VALIDITY_DAYS,
  DEFAULT_NODE_VALIDITY_DAYS,
  issueNodeCertificate,
  type PemPair,
  PkiError,
} from './pki.ts';
