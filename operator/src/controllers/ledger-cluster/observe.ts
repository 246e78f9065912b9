/** What the operator learns from the ledger nodes themselves, over the cluster network. */
import type { WitnessStatusBody } from '@scriptorium/ledger-protocol';

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

/** What a node reports of witnessing (GET /checkpoint/witnesses). */
export type WitnessSummary = WitnessStatusBody;

/** What a node's peer registry says of one peer (GET /ui/peers): the height it last saw it at (null: no answer). */
export interface PeerSighting {
  publicKey: string;
  address: string;
  heightSeen: number | null;
}

/** The node API the reconciler uses (`LedgerNodeClient` implements it). */
export interface NodeApi {
  chain(baseUrl: string): Promise<ChainSummary>;
  ready(baseUrl: string): Promise<boolean>;
  /** Consensus progress from the node's metrics; optional (without it, no stall or storm is diagnosed). */
  consensus?(baseUrl: string): Promise<ConsensusSummary>;
  submitMembership(baseUrl: string, change: { action: 'ADD' | 'REMOVE'; validator: string }): Promise<unknown>;
  /** Witnessing as the node sees it; optional (without it, no witness status). */
  witnessStatus?(baseUrl: string): Promise<WitnessSummary>;
  /** The node's peer registry with the height it last saw each peer at; optional. */
  peersView?(
    baseUrl: string,
  ): Promise<{ peers: ReadonlyArray<{ public_key: string; address: string; height_seen: number | null }> }>;
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
  /** What it says of witnessing, when it answered. */
  witnesses?: WitnessSummary;
  /** What it saw of its peers, when it answered. */
  peers?: PeerSighting[];
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
  /** Witnessing as the most advanced node reports it (largest witnessed size, then size). */
  witnesses?: WitnessSummary;
  /**
   * Validators this cluster does not run (another organization's, external ones), by public key: the best height any
   * of this cluster's nodes last saw each at (null: none reached it). How healthy they are, as our validators see them.
   */
  peerHeights?: Map<string, number | null>;
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
        const [chain, ready, consensus, witnesses, peers] = await Promise.all([
          api.chain(m.url),
          api.ready(m.url).catch(() => false),
          api.consensus?.(m.url).catch(() => undefined),
          api.witnessStatus?.(m.url).catch(() => undefined),
          api.peersView?.(m.url).catch(() => undefined),
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
          ...(witnesses ? { witnesses } : {}),
          ...(peers
            ? {
                peers: peers.peers.map((p) => ({
                  publicKey: p.public_key,
                  address: p.address,
                  heightSeen: p.height_seen,
                })),
              }
            : {}),
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
  let witnesses: WitnessSummary | undefined;
  for (const m of observed) {
    const w = m.witnesses;
    if (!w) continue;
    if (
      !witnesses ||
      w.witnessed_size > witnesses.witnessed_size ||
      (w.witnessed_size === witnesses.witnessed_size && w.size > witnesses.size)
    )
      witnesses = w;
  }
  const ours = new Set(members.map((m) => m.publicKey));
  const peerHeights = new Map<string, number | null>();
  for (const m of observed)
    for (const p of m.peers ?? []) {
      if (ours.has(p.publicKey)) continue;
      const known = peerHeights.get(p.publicKey);
      if (known === undefined || (p.heightSeen !== null && (known === null || p.heightSeen > known)))
        peerHeights.set(p.publicKey, p.heightSeen);
    }
  return {
    members: observed,
    height: best?.height,
    activeKeys: best?.activeKeys,
    unreachable: observed.filter((m) => !m.reachable).map((m) => m.name),
    round: seen.length > 0 ? Math.max(...seen.map((c) => c.round)) : undefined,
    pendingRecords: seen.length > 0 ? Math.max(...seen.map((c) => c.mempoolRecords)) : undefined,
    ...(witnesses ? { witnesses } : {}),
    peerHeights,
  };
}

/**
 * One view of witnessing from every node's: the coverage of the node that holds the largest witnessed checkpoint
 * (then the largest size); per witness the largest size any node saw it cosign, and the last error of the node that
 * submitted to it last (only the submitting node knows why a witness refused).
 */
export function mergeWitnessViews(views: readonly WitnessSummary[]): WitnessSummary | undefined {
  let best: WitnessSummary | undefined;
  for (const w of views)
    if (
      !best ||
      w.witnessed_size > best.witnessed_size ||
      (w.witnessed_size === best.witnessed_size && w.size > best.size)
    )
      best = w;
  if (!best) return undefined;
  return {
    ...best,
    witnesses: best.witnesses.map((w) => {
      const all = views.flatMap((v) => v.witnesses.filter((x) => x.name === w.name));
      const largest = all.reduce((a, b) => (b.size > a.size ? b : a), w);
      const latest = all.reduce((a, b) => ((b.last_attempt ?? -1) > (a.last_attempt ?? -1) ? b : a), w);
      return {
        ...w,
        size: largest.size,
        cosigned_at: largest.cosigned_at,
        last_error: latest.last_error,
        last_attempt: latest.last_attempt,
      };
    }),
  };
}
