/** What the operator learns from the ledger nodes themselves, over the cluster network. */

/** The part of a node's `GET /chain` the reconciler reads. */
export interface ChainSummary {
  height: number;
  /** Active validators' public keys. */
  validators: string[];
}

/** The node API the reconciler uses (H2b's `LedgerNodeClient` implements it). */
export interface NodeApi {
  chain(baseUrl: string): Promise<ChainSummary>;
  ready(baseUrl: string): Promise<boolean>;
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
  error: string | undefined;
}

export interface ClusterObservation {
  members: MemberObservation[];
  /** Highest height any node reported. */
  height: number | undefined;
  /** The active set (public keys) as reported by the node at the highest height, if any answered. */
  activeKeys: string[] | undefined;
  unreachable: string[];
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
        const [chain, ready] = await Promise.all([api.chain(m.url), api.ready(m.url).catch(() => false)]);
        return {
          name: m.name,
          publicKey: m.publicKey,
          podReady: m.podReady,
          reachable: true,
          ready,
          height: chain.height,
          activeKeys: chain.validators,
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
          error: err instanceof Error ? err.message.slice(0, 200) : 'unreachable',
        };
      }
    }),
  );
  let best: MemberObservation | undefined;
  for (const m of observed) {
    if (m.height !== undefined && (best?.height === undefined || m.height > best.height)) best = m;
  }
  return {
    members: observed,
    height: best?.height,
    activeKeys: best?.activeKeys,
    unreachable: observed.filter((m) => !m.reachable).map((m) => m.name),
  };
}
