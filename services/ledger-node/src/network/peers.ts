// Peer registry: public key → address, seeded from configuration plus this node's own
// advertised spec. A node's own re-announce with a new address updates its entry in place; hearsay only adds.
// A peer outside the active validator set that nobody has reached for a while (a retired validator whose pod and
// name are gone) is forgotten, and hearsay does not bring it back; its own announcement does.
import { formatPeerSpec, type PeerSpec } from '@scriptorium/ledger-protocol';

const MAX_PEERS = 1024;

export class PeerRegistry {
  private readonly self: PeerSpec;
  private readonly peers = new Map<string, PeerSpec>();
  /** Per peer, since when every attempt to reach it failed (absent: the last attempt succeeded, or none yet). */
  private readonly unreachableSince = new Map<string, number>();
  /** Keys forgotten as retired: hearsay about them is ignored until they announce themselves. */
  private readonly forgotten = new Set<string>();

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
    if (this.forgotten.has(spec.publicKey)) {
      if (!mayMove) return;
      this.forgotten.delete(spec.publicKey);
    }
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

  /** An attempt to reach the peer (the announce round's) succeeded or failed at `now` (ms). */
  noteReach(publicKey: string, reached: boolean, now: number): void {
    if (reached) this.unreachableSince.delete(publicKey);
    else if (this.peers.has(publicKey) && !this.unreachableSince.has(publicKey))
      this.unreachableSince.set(publicKey, now);
  }

  /**
   * Forgets the peers outside `active` (the validator set of the next height) that every attempt has failed to
   * reach for at least `afterMs`; returns them. An active validator is never forgotten, however long it is away.
   */
  forgetUnreachable(active: ReadonlySet<string>, now: number, afterMs: number): PeerSpec[] {
    const gone: PeerSpec[] = [];
    for (const [key, since] of this.unreachableSince) {
      const peer = this.peers.get(key);
      if (!peer || active.has(key) || now - since < afterMs) continue;
      this.peers.delete(key);
      this.unreachableSince.delete(key);
      if (this.forgotten.size >= MAX_PEERS) this.forgotten.delete(this.forgotten.values().next().value as string);
      this.forgotten.add(key);
      gone.push(peer);
    }
    return gone;
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
