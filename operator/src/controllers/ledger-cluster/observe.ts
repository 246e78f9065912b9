/** What the operator learns from the ledger nodes themselves, over the cluster network. */

/** The part of a node's `GET /chain` the reconciler reads. */
export interface ChainSummary {
  height: number;
  /** Active validators' public keys. */
  validators: string[];
}

/** The part of a node's `GET /metrics` the reconciler reads: consensus progress. */
export interface ConsensusSummary {
  /** Round at the open height. */
  round: number;
  /** Records waiting in the node's mempool. */
  mempoolRecords: number;
}

/** The node API the reconciler uses (`LedgerNodeClient` implements it). */
export interface NodeApi {
  chain(baseUrl: string): Promise<ChainSummary>;
  ready(baseUrl: string): Promise<boolean>;
  /** Consensus progress from the node's metrics; optional (without it, no stall or storm is diagnosed). */
  consensus?(baseUrl: string): Promise<ConsensusSummary>;
  submitMembership(baseUrl: string, change: { action: 'ADD' | 'REMOVE'; validator: string }): Promise<unknown>;
  /** Release connections (called after each reconcile). */
  close?(): Promise<void>;
}

export interface MemberObservation {
  name: string;
  publicKey: string;
  /** The pod is Ready (its StatefulSet reports a ready replica). */
  podReady: boolean;
  /** The node answered `/chain`. */
  reachable: boolean;
  /** The node answered `/ready` with 200 (caught up within one block). */
  ready: boolean;
  height: number | undefined;
  activeKeys: string[] | undefined;
  /** Round at the open height and records waiting, when the node's metrics answered. */
  consensus?: ConsensusSummary;
  error: string | undefined;
}

export interface ClusterObservation {
  members: MemberObservation[];
  /** Highest height any node reported. */
  height: number | undefined;
  /** The active set (public keys) as reported by the node at the highest height, if any answered. */
  activeKeys: string[] | undefined;
  unreachable: string[];
  /** Highest round any node is in at its open height (undefined: no node's metrics answered). */
  round?: number;
  /** Most records any node holds waiting (mempools converge by gossip). */
  pendingRecords?: number;
}

/**
 * Ask every validator for `/chain` and `/ready`, in parallel, each bounded by the client's timeout.
 * A node that cannot be reached is recorded as such (never thrown).
 */
export async function observeNodes(
  api: NodeApi,
  members: ReadonlyArray<{ name: string; publicKey: string; podReady: boolean; url: string }>,
): Promise<ClusterObservation> {
  const observed = await Promise.all(
    members.map(async (m): Promise<MemberObservation> => {
      try {
        const [chain, ready, consensus] = await Promise.all([
          api.chain(m.url),
          api.ready(m.url).catch(() => false),
          api.consensus?.(m.url).catch(() => undefined),
        ]);
        return {
          name: m.name,
          publicKey: m.publicKey,
          podReady: m.podReady,
          reachable: true,
          ready,
          height: chain.height,
          activeKeys: chain.validators,
          consensus: consensus ? { round: consensus.round, mempoolRecords: consensus.mempoolRecords } : undefined,
          error: undefined,
        };
      } catch (err) {
        return {
          name: m.name,
          publicKey: m.publicKey,
          podReady: m.podReady,
          reachable: false,
          ready: false,
          height: undefined,
          activeKeys: undefined,
          consensus: undefined,
          error: err instanceof Error ? err.message.slice(0, 200) : 'unreachable',
        };
      }
    }),
  );
  let best: MemberObservation | undefined;
  for (const m of observed) {
    if (m.height !== undefined && (best?.height === undefined || m.height > best.height)) best = m;
  }
  const seen = observed.flatMap((m) => (m.consensus ? [m.consensus] : []));
  return {
    members: observed,
    height: best?.height,
    activeKeys: best?.activeKeys,
    unreachable: observed.filter((m) => !m.reachable).map((m) => m.name),
    round: seen.length > 0 ? Math.max(...seen.map((c) => c.round)) : undefined,
    pendingRecords: seen.length > 0 ? Math.max(...seen.map((c) => c.mempoolRecords)) : undefined,
  };
}
