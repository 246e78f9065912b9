// Peer registry: public key → address, seeded from configuration plus this node's own
// advertised spec. A re-announce with a new address for the same key updates the entry in place.
import { formatPeerSpec, type PeerSpec } from '@scriptorium/ledger-protocol';

const MAX_PEERS = 1024;

export class PeerRegistry {
  private readonly self: PeerSpec;
  private readonly peers = new Map<string, PeerSpec>();

  constructor(self: PeerSpec, seeds: PeerSpec[]) {
    this.self = self;
    this.merge(seeds);
  }

  get selfSpec(): PeerSpec {
    return this.self;
  }

  /** Adds unknown keys, updates the address of known ones; this node's own key is never overwritten. */
  merge(specs: PeerSpec[]): { added: number; updated: number } {
    let added = 0;
    let updated = 0;
    for (const spec of specs) {
      if (spec.publicKey === this.self.publicKey) continue;
      const known = this.peers.get(spec.publicKey);
      if (!known) {
        if (this.peers.size >= MAX_PEERS) continue;
        this.peers.set(spec.publicKey, { ...spec });
        added++;
      } else if (known.host !== spec.host || known.port !== spec.port || known.nodeId !== spec.nodeId) {
        known.host = spec.host;
        known.port = spec.port;
        known.nodeId = spec.nodeId;
        updated++;
      }
    }
    return { added, updated };
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
