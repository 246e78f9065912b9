// Pull sync, the sync step the node and the simulator share: a pass asks every peer its height, then pulls the
// missing blocks from the highest one (a block it does not serve, or serves refused, from the next peer that has
// it), up to SYNC_BATCH per pass with PULL_AHEAD requests in flight, and hands them to the block applier strictly
// in height order (each fully verified there). A pass starts on `request()`:
// every NODE_SYNC__INTERVAL_MS, and at once when a message or block from the future arrives; a request during a
// pass runs another pass right after it. The network is a port (SyncNetwork: HTTP in production, messages in
// the simulator) whose answers come back as callbacks. Also the node's readiness: synced within 1 block of the
// best peer reached.
import type { Receipt } from './applier.ts';
import type { Log, SyncNetwork, SyncPeer } from './ports.ts';

/** Blocks pulled per pass before peers are polled again. */
export const SYNC_BATCH = 256;
/** Block requests in flight while the current block is verified. */
export const PULL_AHEAD = 8;

export interface SyncDeps<P extends SyncPeer> {
  chain: { readonly height: number };
  network: SyncNetwork<P>;
  /** Block receipt (BlockApplier.receive): verifies and applies the next block. */
  receive: (body: unknown, origin: 'pull') => Receipt;
  log: Pick<Log, 'warn'>;
}

export interface Readiness {
  ready: boolean;
  height: number;
  best_peer_height: number;
}

export class ChainSync<P extends SyncPeer = SyncPeer> {
  readonly #deps: SyncDeps<P>;
  readonly #peerHeights = new Map<string, number>();
  #peerPollDone = false;
  #syncing = false;
  #again = false;
  #stopped = false;
  /** The pass in progress: answers of an earlier (abandoned) pass are ignored. */
  #pass = 0;

  constructor(deps: SyncDeps<P>) {
    this.#deps = deps;
  }

  /** Starts a pass now, or another one right after the pass in progress. */
  request(): void {
    if (this.#syncing) this.#again = true;
    else this.#run();
  }

  stop(): void {
    this.#stopped = true;
    this.#pass++;
    this.#syncing = false;
  }

  get syncing(): boolean {
    return this.#syncing;
  }

  #run(): void {
    if (this.#syncing || this.#stopped) return;
    this.#syncing = true;
    this.#again = false;
    const pass = ++this.#pass;
    const peers = this.#deps.network.peers();
    const heights: Array<number | undefined> = new Array(peers.length);
    let waiting = peers.length;
    if (waiting === 0) {
      this.#polled(pass, peers, heights);
      return;
    }
    peers.forEach((peer, i) => {
      this.#deps.network.height(peer, (height) => {
        if (pass !== this.#pass) return;
        heights[i] = height;
        if (height === undefined) this.#peerHeights.delete(peer.publicKey);
        else this.#peerHeights.set(peer.publicKey, height);
        if (--waiting === 0) this.#polled(pass, peers, heights);
      });
    });
  }

  #polled(pass: number, peers: readonly P[], heights: Array<number | undefined>): void {
    this.#peerPollDone = true;
    // Every peer ahead of this node, the highest first (ties in registry order).
    const sources = peers
      .map((peer, i) => ({ peer, height: heights[i] ?? -1 }))
      .filter((s) => s.height > this.#deps.chain.height)
      .sort((a, b) => b.height - a.height);
    if (sources.length > 0) this.#pull(pass, sources, sources[0]?.height as number);
    else this.#end(pass);
  }

  /**
   * Pulls chain height + 1 … target (at most SYNC_BATCH), applied strictly in order. Each block is asked of the
   * highest peer first; a block that peer does not serve in time, or serves refused, is asked of the next peer that
   * has it, so one slow, starved or lying peer does not stall the sync. The pass ends when a block is refused or
   * missing from every peer that has it.
   */
  #pull(pass: number, sources: ReadonlyArray<{ peer: P; height: number }>, target: number): void {
    const { chain, network, log } = this.#deps;
    const last = Math.min(target, chain.height + SYNC_BATCH);
    const arrived = new Map<number, unknown>();
    /** Height → index (in `sources`) of the peer it was last asked of. */
    const askedOf = new Map<number, number>();
    let asked = chain.height;
    let inFlight = 0;
    let failed = false;
    let stepping = false;
    let again = false;
    const ask = (height: number, from: number) => {
      // The next peer, from `from` on, that has this height (the highest has every one up to the target).
      let i = from;
      while (i < sources.length && (sources[i]?.height ?? -1) < height) i++;
      if (i >= sources.length) return false;
      const source = sources[i] as { peer: P };
      askedOf.set(height, i);
      inFlight++;
      network.block(source.peer, height, (body) => {
        if (pass !== this.#pass) return;
        inFlight--;
        arrived.set(height, body);
        step();
      });
      return true;
    };
    /** A block that did not come, or came refused: asked of the next peer that has it; false when none is left. */
    const retry = (height: number) => ask(height, (askedOf.get(height) ?? 0) + 1);
    const sourceOf = (height: number) => sources[askedOf.get(height) ?? 0]?.peer.nodeId;
    const step = (): void => {
      if (stepping) {
        again = true;
        return;
      }
      stepping = true;
      do {
        again = false;
        while (!failed && chain.height < last && arrived.has(chain.height + 1)) {
          const next = chain.height + 1;
          const body = arrived.get(next);
          arrived.delete(next);
          if (body === undefined) {
            if (!retry(next)) {
              log.warn({ peer: sourceOf(next), height: next }, 'pull sync: no peer served the block in time');
              failed = true;
            }
            break;
          }
          const receipt = this.#deps.receive(body, 'pull');
          if (receipt.status === 'refused') {
            log.warn({ peer: sourceOf(next), height: next, reason: receipt.reason }, 'pulled block refused');
            if (!retry(next)) failed = true;
            break;
          }
        }
        for (const h of arrived.keys()) if (h <= chain.height) arrived.delete(h); // finalized meanwhile
        asked = Math.max(asked, chain.height);
        while (!failed && asked < last && asked < chain.height + PULL_AHEAD) ask(++asked, 0);
      } while (again);
      stepping = false;
      // Done once nothing is in flight: every asked height arrived and was applied (or the pass failed).
      if (inFlight > 0) return;
      // Short of the target: pull on at once; after a failure, not before the next request (the sync interval,
      // or a block from the future), so a block no peer serves is not asked for in a loop.
      if (chain.height < target && !failed) this.#again = true;
      this.#end(pass);
    };
    step();
  }

  #end(pass: number): void {
    if (pass !== this.#pass) return;
    this.#syncing = false;
    if (this.#again && !this.#stopped) this.#run();
  }

  /** The height a peer answered in the last poll, or null when it did not answer. */
  heightOf(publicKey: string): number | null {
    return this.#peerHeights.get(publicKey) ?? null;
  }

  /** Ready when within 1 block of the best peer reached in the last poll; a node without peers is ready. */
  readiness(): Readiness {
    let best = -1;
    for (const h of this.#peerHeights.values()) best = Math.max(best, h);
    const height = this.#deps.chain.height;
    const noPeers = this.#deps.network.peers().length === 0;
    const ready = !this.#stopped && (noPeers || (this.#peerPollDone && (best < 0 ? false : best - height <= 1)));
    return { ready, height, best_peer_height: best };
  }
}
