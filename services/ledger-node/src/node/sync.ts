// Pull sync: every NODE_SYNC__INTERVAL_MS, and at once when a message or block from the future arrives,
// poll every peer's GET /chain and pull the missing blocks from the highest one (GET /blocks/{i}), verified
// and stored strictly in order. Also the node's readiness: synced within 1 block of the best peer reached.
import type { Block, PeerSpec } from '@scriptorium/ledger-protocol';
import type { Transport } from '../network/transport.ts';
import type { ChainState } from './chain-state.ts';
import type { DriverLog } from './driver.ts';

/** Blocks pulled per pass before peers are polled again. */
const SYNC_BATCH = 256;
/** GET /blocks requests in flight while the current block is verified. */
const PULL_AHEAD = 8;

export interface SyncDeps {
  chain: ChainState;
  transport: Transport;
  peers: () => PeerSpec[];
  /** Applies a verified pulled block (append, prune, metrics, driver). */
  commit: (block: Block) => void;
  log: DriverLog & { warn(obj: object, msg: string): void };
}

export interface Readiness {
  ready: boolean;
  height: number;
  best_peer_height: number;
}

export class ChainSync {
  private readonly deps: SyncDeps;
  private readonly peerHeights = new Map<string, number>();
  private peerPollDone = false;
  private syncing = false;
  private again = false;
  private stopped = false;

  constructor(deps: SyncDeps) {
    this.deps = deps;
  }

  /** Starts a pass now, or another one right after the pass in progress. */
  request(): void {
    if (this.syncing) this.again = true;
    else void this.run();
  }

  stop(): void {
    this.stopped = true;
  }

  /** Polls every peer's /chain, then pulls missing blocks from the highest peer. */
  async run(): Promise<void> {
    if (this.syncing || this.stopped) return;
    this.syncing = true;
    try {
      do {
        this.again = false;
        const results = await Promise.all(this.deps.peers().map((peer) => this.poll(peer)));
        this.peerPollDone = true;
        const best = results.filter((r) => r !== undefined).sort((a, b) => b.height - a.height)[0];
        if (best && best.height > this.deps.chain.height) await this.pullFrom(best.peer, best.height);
      } while (this.again && !this.stopped);
    } finally {
      this.syncing = false;
    }
  }

  private async poll(peer: PeerSpec): Promise<{ peer: PeerSpec; height: number } | undefined> {
    try {
      const res = await this.deps.transport.get(peer, '/chain', 2000);
      const h = (res.body as { height?: unknown }).height;
      if (res.status === 200 && typeof h === 'number') {
        this.peerHeights.set(peer.publicKey, h);
        return { peer, height: h };
      }
    } catch {
      this.peerHeights.delete(peer.publicKey);
    }
    return undefined;
  }

  /**
   * Pulls blocks (chain height + 1 … target) from one peer, up to SYNC_BATCH per pass. Up to
   * PULL_AHEAD requests are in flight while the current block is verified, so the network wait
   * overlaps the (CPU-bound) verification. Blocks are still verified and stored strictly in order.
   */
  private async pullFrom(peer: PeerSpec, target: number): Promise<void> {
    const { chain, transport, log } = this.deps;
    const last = Math.min(target, chain.height + SYNC_BATCH);
    const inFlight = new Map<number, Promise<Awaited<ReturnType<Transport['get']>> | undefined>>();
    const fetch = (h: number) =>
      transport.get(peer, `/blocks/${h}`, 10_000).catch((err: Error) => {
        log.debug({ peer: peer.nodeId, err: err.message }, 'pull failed');
        return undefined;
      });
    let ahead = chain.height + 1;
    while (chain.height < last && !this.stopped) {
      while (ahead <= last && ahead <= chain.height + PULL_AHEAD) {
        inFlight.set(ahead, fetch(ahead));
        ahead++;
      }
      const next = chain.height + 1;
      const pending = inFlight.get(next) ?? fetch(next);
      inFlight.delete(next);
      const res = await pending;
      if (res?.status !== 200) break;
      if (chain.height >= next) continue; // finalized meanwhile by consensus or push
      const verdict = chain.verifyNext(res.body);
      if (!verdict.ok) {
        log.warn({ peer: peer.nodeId, height: next, reason: verdict.reason }, 'pulled block refused');
        break;
      }
      this.deps.commit(verdict.block);
    }
    await Promise.all(inFlight.values());
    if (chain.height < target && !this.stopped) this.again = true;
  }

  /** The height a peer answered in the last poll, or null when it did not answer. */
  heightOf(publicKey: string): number | null {
    return this.peerHeights.get(publicKey) ?? null;
  }

  /** Ready when within 1 block of the best peer reached in the last poll; a node without peers is ready. */
  readiness(): Readiness {
    let best = -1;
    for (const h of this.peerHeights.values()) best = Math.max(best, h);
    const height = this.deps.chain.height;
    const noPeers = this.deps.peers().length === 0;
    const ready = !this.stopped && (noPeers || (this.peerPollDone && (best < 0 ? false : best - height <= 1)));
    return { ready, height, best_peer_height: best };
  }
}
