// Pull sync, the sync step the node and the simulator share: a pass asks every peer its height, then pulls the
// missing blocks from the highest one, up to SYNC_BATCH per pass with PULL_AHEAD requests in flight, and hands
// them to the block applier strictly in height order (each fully verified there). A pass starts on `request()`:
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
    let best = -1;
    for (let i = 0; i < peers.length; i++) if ((heights[i] ?? -1) > (heights[best] ?? -1)) best = i;
    const target = heights[best] ?? -1;
    if (best >= 0 && target > this.#deps.chain.height) this.#pull(pass, peers[best] as P, target);
    else this.#end(pass);
  }

  /** Pulls chain height + 1 … target (at most SYNC_BATCH) from one peer; applied strictly in order. */
  #pull(pass: number, peer: P, target: number): void {
    const { chain, network, log } = this.#deps;
    const last = Math.min(target, chain.height + SYNC_BATCH);
    const arrived = new Map<number, unknown>();
    let asked = chain.height;
    let inFlight = 0;
    let failed = false;
    let stepping = false;
    let again = false;
    const ask = (height: number) => {
      inFlight++;
      network.block(peer, height, (body) => {
        if (pass !== this.#pass) return;
        inFlight--;
        arrived.set(height, body);
        step();
      });
    };
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
          if (body === undefined) failed = true;
          else {
            const receipt = this.#deps.receive(body, 'pull');
            if (receipt.status === 'refused') {
              log.warn({ peer: peer.nodeId, height: next, reason: receipt.reason }, 'pulled block refused');
              failed = true;
            }
          }
        }
        for (const h of arrived.keys()) if (h <= chain.height) arrived.delete(h); // finalized meanwhile
        asked = Math.max(asked, chain.height);
        while (!failed && asked < last && asked < chain.height + PULL_AHEAD) ask(++asked);
      } while (again);
      stepping = false;
      // Done once nothing is in flight: every asked height arrived and was applied (or the pass failed).
      if (inFlight > 0) return;
      if (chain.height < target) this.#again = true;
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
