// Pull sync, the sync step the node and the simulator share: a pass asks every peer its height (going on with those
// that answered after POLL_DEADLINE_MS), then pulls the
// missing blocks from the highest one (a block it does not serve, or serves refused, from the next peer that has
// it), up to SYNC_BATCH per pass with PULL_AHEAD requests in flight, and hands them to the block applier strictly
// in height order (each fully verified there). A pass starts on `request()`:
// every NODE_SYNC__INTERVAL_MS, and at once when a message or block from the future arrives; a request during a
// pass runs another pass right after it. The network is a port (SyncNetwork: HTTP in production, messages in
// the simulator) whose answers come back as callbacks. Also the node's readiness: synced within 1 block of the
// best peer reached; and what the sync is doing (`state()`, in GET /ready), so a node that stays behind says why.
import type { Receipt } from './applier.ts';
import type { Log, SyncNetwork, SyncPeer } from './ports.ts';

/** Blocks pulled per pass before peers are polled again. */
export const SYNC_BATCH = 256;
/** Block requests in flight while the current block is verified. */
export const PULL_AHEAD = 8;

/** A warning that can come every pass (no peer answered) is repeated at most this often. */
export const QUIET_WARN_MS = 60_000;
/**
 * A poll waits this long for the peers' heights, then goes on with those that answered: a peer whose address no
 * longer resolves or connects (a retired validator every registry still names) would otherwise hold each pass for
 * its DNS and connect timeouts, longer than the GET's own 2 s bound. A late answer still counts for readiness.
 */
export const POLL_DEADLINE_MS = 3000;

export interface SyncDeps<P extends SyncPeer> {
  chain: { readonly height: number };
  network: SyncNetwork<P>;
  /** Block receipt (BlockApplier.receive): verifies and applies the next block. */
  receive: (body: unknown, origin: 'pull') => Receipt;
  log: Pick<Log, 'warn' | 'error'>;
  /** Milliseconds now (the simulator's clock there); only for state() and spacing warnings. */
  now?: () => number;
  /** Runs `fn` after `ms` (returns a cancel): the poll's deadline. Without it a poll waits for every answer. */
  after?: (ms: number, fn: () => void) => () => void;
}

export interface Readiness {
  ready: boolean;
  height: number;
  best_peer_height: number;
}

/** How a pass ended. */
export type PassOutcome =
  /** No peer is ahead of this node. */
  | 'caught_up'
  /** Peers were asked their height and none answered. */
  | 'no_answer'
  /** Blocks were applied up to the batch's end; the next pass follows at once. */
  | 'partial'
  /** A block no peer served, or every peer served refused: the pass ended early. */
  | 'block_unserved';

/** What the sync is doing, for GET /ready: a node that stays behind shows where it is stuck. */
export interface SyncState {
  /** Idle, asking peers their height, or pulling blocks. */
  phase: 'idle' | 'polling' | 'pulling';
  /** Milliseconds in this phase. */
  phase_ms: number;
  /** Passes started since the node started. */
  passes: number;
  /** Peers asked their height in the latest poll, and how many have answered. */
  peers_asked: number;
  peers_answered: number;
  /** Block requests sent and not answered yet. */
  blocks_in_flight: number;
  /** How the last finished pass ended (null before the first). */
  last_pass: PassOutcome | null;
}

export class ChainSync<P extends SyncPeer = SyncPeer> {
  readonly #deps: SyncDeps<P>;
  readonly #now: () => number;
  readonly #peerHeights = new Map<string, number>();
  #peerPollDone = false;
  #syncing = false;
  #again = false;
  #stopped = false;
  /** The pass in progress: answers of an earlier (abandoned) pass are ignored. */
  #pass = 0;
  #phase: SyncState['phase'] = 'idle';
  #phaseSince: number;
  #asked = 0;
  #answered = 0;
  /** Block requests of the pass in progress not answered yet. */
  #inFlight = 0;
  #lastPass: PassOutcome | null = null;
  #quietWarnAt = Number.NEGATIVE_INFINITY;

  constructor(deps: SyncDeps<P>) {
    this.#deps = deps;
    this.#now = deps.now ?? Date.now;
    this.#phaseSince = this.#now();
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
    this.#inFlight = 0;
    this.#enter('idle');
  }

  get syncing(): boolean {
    return this.#syncing;
  }

  #enter(phase: SyncState['phase']): void {
    this.#phase = phase;
    this.#phaseSince = this.#now();
  }

  #run(): void {
    if (this.#syncing || this.#stopped) return;
    this.#syncing = true;
    this.#again = false;
    const pass = ++this.#pass;
    const peers = this.#deps.network.peers();
    const heights: Array<number | undefined> = new Array(peers.length);
    let waiting = peers.length;
    this.#enter('polling');
    this.#asked = peers.length;
    this.#answered = 0;
    if (waiting === 0) {
      this.#polled(pass, peers, heights);
      return;
    }
    let polled = false;
    let cancelDeadline: (() => void) | undefined;
    const done = () => {
      if (polled) return;
      polled = true;
      cancelDeadline?.();
      this.#polled(pass, peers, [...heights]);
    };
    peers.forEach((peer, i) => {
      this.#deps.network.height(peer, (height) => {
        if (pass !== this.#pass) return;
        heights[i] = height;
        if (height !== undefined) this.#answered++;
        if (height === undefined) this.#peerHeights.delete(peer.publicKey);
        else this.#peerHeights.set(peer.publicKey, height);
        if (--waiting === 0) done();
      });
    });
    if (!polled) cancelDeadline = this.#deps.after?.(POLL_DEADLINE_MS, done);
  }

  #polled(pass: number, peers: readonly P[], heights: Array<number | undefined>): void {
    this.#peerPollDone = true;
    // Every peer ahead of this node, the highest first (ties in registry order).
    const sources = peers
      .map((peer, i) => ({ peer, height: heights[i] ?? -1 }))
      .filter((s) => s.height > this.#deps.chain.height)
      .sort((a, b) => b.height - a.height);
    if (sources.length > 0) {
      this.#enter('pulling');
      this.#pull(pass, sources, sources[0]?.height as number);
      return;
    }
    if (peers.length > 0 && this.#answered === 0) {
      // Every pass (each NODE_SYNC__INTERVAL_MS) would say it again: once a minute is enough to be seen.
      const now = this.#now();
      if (now - this.#quietWarnAt >= QUIET_WARN_MS) {
        this.#quietWarnAt = now;
        this.#deps.log.warn({ peers: peers.length }, 'pull sync: no peer answered its height');
      }
      this.#end(pass, 'no_answer');
    } else this.#end(pass, 'caught_up');
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
    this.#inFlight = 0;
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
      this.#inFlight++;
      network.block(source.peer, height, (body) => {
        if (pass !== this.#pass) return;
        this.#inFlight--;
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
      try {
        stepOnce();
      } finally {
        stepping = false;
      }
      // Done once nothing is in flight: every asked height arrived and was applied (or the pass failed).
      if (this.#inFlight > 0) return;
      // Short of the target: pull on at once; after a failure, not before the next request (the sync interval,
      // or a block from the future), so a block no peer serves is not asked for in a loop.
      const short = chain.height < target;
      if (short && !failed) this.#again = true;
      this.#end(pass, failed ? 'block_unserved' : short ? 'partial' : 'caught_up');
    };
    const stepOnce = (): void => {
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
          let receipt: Receipt;
          try {
            receipt = this.#deps.receive(body, 'pull');
          } catch (err) {
            // Not the peer's fault (a store that failed, a bug): logged, and the pass ends rather than hangs.
            log.error({ err, height: next }, 'pull sync: applying a pulled block failed');
            failed = true;
            break;
          }
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
    };
    step();
  }

  #end(pass: number, outcome: PassOutcome): void {
    if (pass !== this.#pass) return;
    this.#syncing = false;
    this.#lastPass = outcome;
    this.#enter('idle');
    if (this.#again && !this.#stopped) this.#run();
  }

  /** What the sync is doing now (GET /ready's `sync`). */
  state(): SyncState {
    return {
      phase: this.#phase,
      phase_ms: Math.max(0, this.#now() - this.#phaseSince),
      passes: this.#pass,
      peers_asked: this.#asked,
      peers_answered: this.#answered,
      blocks_in_flight: this.#inFlight,
      last_pass: this.#lastPass,
    };
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
