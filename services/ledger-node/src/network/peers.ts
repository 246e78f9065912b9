// Peer registry: public key → address, seeded from configuration plus this node's own
// advertised spec. A node's own re-announce with a new address updates its entry in place; hearsay only adds.
import { formatPeerSpec, type PeerSpec } from '@scriptorium/ledger-protocol';

const MAX_PEERS = 1024;

export class PeerRegistry {
  private readonly self: PeerSpec;
  private readonly peers = new Map<string, PeerSpec>();

  constructor(self: PeerSpec, seeds: PeerSpec[]) {
    this.self = self;
    // Configured seeds are first-hand: each one's address is taken as given.
    const counts = { added: 0, updated: 0 };
    for (const seed of seeds) this.put(seed, true, counts);
  }

  get selfSpec(): PeerSpec {
    return this.self;
  }

  /**
   * Merges an announcement (POST /peers, or a peer's GET /peers answer): its first spec is the announcer's own, and
   * a new address there updates the entry in place (spec section 4, rule 4); every later spec is hearsay, which adds
   * an unknown key but never moves a known one, because a stale copy that peers pass around would otherwise undo a
   * move until its owner announced again. `announcer`, when given, is the key the first spec must carry to count as
   * the announcer's own (a pulled answer); this node's own key is never overwritten.
   */
  mergeAnnouncement(specs: PeerSpec[], announcer?: string): { added: number; updated: number } {
    const counts = { added: 0, updated: 0 };
    specs.forEach((spec, i) => {
      const own = i === 0 && (announcer === undefined || spec.publicKey === announcer);
      this.put(spec, own, counts);
    });
    return counts;
  }

  private put(spec: PeerSpec, mayMove: boolean, counts: { added: number; updated: number }): void {
    if (spec.publicKey === this.self.publicKey) return;
    const known = this.peers.get(spec.publicKey);
    if (!known) {
      if (this.peers.size >= MAX_PEERS) return;
      this.peers.set(spec.publicKey, { ...spec });
      counts.added++;
    } else if (mayMove && (known.host !== spec.host || known.port !== spec.port || known.nodeId !== spec.nodeId)) {
      known.host = spec.host;
      known.port = spec.port;
      known.nodeId = spec.nodeId;
      counts.updated++;
    }
  }

  /** Other peers (not this node). */
  others(): PeerSpec[] {
    return [...this.peers.values()];
  }

  get(publicKey: string): PeerSpec | undefined {
    return this.peers.get(publicKey);
  }

  /** Every known spec, this node's own first. */
  specs(): string[] {
    return [formatPeerSpec(this.self), ...[...this.peers.values()].map(formatPeerSpec)];
  }

  get size(): number {
    return this.peers.size;
  }
}
