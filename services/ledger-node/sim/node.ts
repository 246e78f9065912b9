/**
 * A simulated ledger node: the production consensus driver (src/node/driver.ts), block applier (applier.ts),
 * pull sync (sync.ts), chain state and mempool, on simulated ports (src/node/ports.ts) — time from the
 * simulation clock, a network of the simulation (consensus messages, block pushes, and pull sync's height and
 * block requests with their answers), and a "disk" (storage.ts: blocks and the consensus state) that survives
 * crashes. What remains here is adapters: the node's own logic is production's.
 *
 * Crashes happen at I/O: a node armed with a crash point dies right before (or, for a broadcast, part way
 * through) the port call that reaches it, exactly as a killed process would, and restarts later from its disk
 * with a fresh driver.
 */
import type { Block, ConsensusMessage, IntegrityRecord, ValidatorChange, Verify } from '@scriptorium/ledger-protocol';
import type { Signer } from '@scriptorium/ledger-protocol/keys';
import { heightContextAfter, proposerFor } from '../src/consensus/index.ts';
import { Mempool } from '../src/mempool/index.ts';
import { type ApplierDeps, BlockApplier, type BlockOrigin } from '../src/node/applier.ts';
import { ChainState } from '../src/node/chain-state.ts';
import { type ConsensusDriver, createDriver, type DriverSettings } from '../src/node/driver.ts';
import type { ApplierMetrics, BlockStorage, DriverMetrics, Log, SyncNetwork, SyncPeer } from '../src/node/ports.ts';
import { ChainSync } from '../src/node/sync.ts';
import { mutate } from './byzantine.ts';
import type { SimClock } from './clock.ts';
import type { SimNetwork } from './network.ts';
import type { Prng } from './prng.ts';
import { SimDisk } from './storage.ts';

export type Payload =
  | { kind: 'consensus'; msg: ConsensusMessage }
  | { kind: 'block'; block: Block }
  /** Pull sync's GET /chain and its answer. */
  | { kind: 'chain-request'; id: number }
  | { kind: 'chain-reply'; id: number; height: number }
  /** Pull sync's GET /blocks/{height} and its answer (no block: 404). */
  | { kind: 'block-request'; id: number; height: number }
  | { kind: 'block-reply'; id: number; block: Block | undefined }
  | { kind: 'records'; records: IntegrityRecord[] }
  | { kind: 'changes'; changes: ValidatorChange[] };

/** A simulated node as its peers' pull sync sees it. */
interface SimPeer extends SyncPeer {
  readonly id: number;
}

/** Builds a node's block applier: the production one, or (a test's) one with a planted bug. */
export type ApplierFactory = (deps: ApplierDeps) => BlockApplier;

export interface SimParams {
  chainId: string;
  driver: DriverSettings;
  syncIntervalMs: number;
  /** Probability that a Byzantine twin sends a peer a mutated (equivocating or invalid) message. */
  byzantineMutation: number;
}

/**
 * Where an armed node crashes:
 * - `ops`: at its (after + 1)-th I/O operation (persist, send, block append or push);
 * - `persist-then-send`: at the first send that follows a persist (the vote is durable, not sent);
 * - `send-then-persist`: at the first persist that follows a send (a vote is out, the next state is not).
 * `skip` such points pass first. A crash at a send reaches a random part of its targets.
 */
export type CrashPoint =
  | { kind: 'ops'; after: number }
  | { kind: 'persist-then-send'; skip: number }
  | { kind: 'send-then-persist'; skip: number };

type IoOp = 'persist' | 'send' | 'append' | 'push';

export interface NodeEnv {
  clock: SimClock;
  network: SimNetwork<Payload>;
  rng: Prng;
  params: SimParams;
  verify: Verify;
  /** Every simulated node (peers = all others). */
  nodes: () => readonly SimNode[];
  log?: ((line: string) => void) | undefined;
  /** Every message a node sends (for the checkers). */
  onBroadcast?: (node: SimNode, msg: ConsensusMessage) => void;
  /** Every refusal a node's driver counts, by reason. */
  onReject?: (reason: string) => void;
  /** An armed crash point was reached (the node crashes there). */
  onCrashPoint?: (kind: CrashPoint['kind']) => void;
  /** A node (re)started with `height` blocks on its disk. */
  onBoot?: (node: SimNode, height: number) => void;
  /** A node's applier handed a finalized block to its listeners (the notifications hand-off). */
  onFinalized?: (node: SimNode, block: Block, origin: BlockOrigin) => void;
  /** The block applier each node runs (default: production's). */
  applier?: ApplierFactory | undefined;
}

/** Thrown out of a port call when the node crashes there; caught where the simulation called into the node. */
class SimCrash extends Error {}

const noop = { set() {}, inc() {}, observe() {} };
const NO_APPLIER_METRICS: ApplierMetrics = {
  height: noop,
  isValidator: noop,
  recordsFinalized: noop,
  mempoolSize: noop,
  finalityLatency: noop,
};

export class SimNode {
  readonly id: number;
  readonly signer: Signer;
  readonly honest: boolean;
  readonly disk: SimDisk;
  readonly peer: SimPeer;
  readonly #env: NodeEnv;
  readonly #genesis: Block;
  readonly #metrics: DriverMetrics;
  /** The block storage port: the disk's blocks, with the armed crash point checked before each append. */
  readonly #store: BlockStorage<Block>;

  alive = true;
  crashes = 0;
  /** The next crash, when armed. */
  crashPoint: CrashPoint | null = null;
  #lastOp: IoOp | null = null;
  #generation = 0;
  #chain!: ChainState;
  #mempool!: Mempool;
  #driver!: ConsensusDriver;
  #applier!: BlockApplier;
  #sync!: ChainSync<SimPeer>;
  /** Pull sync's requests waiting for an answer, by id (a restart forgets them, as a killed process does). */
  #requests = new Map<number, (answer: unknown) => void>();
  #nextRequest = 0;
  maxRound = 0;

  constructor(id: number, signer: Signer, honest: boolean, genesis: Block, env: NodeEnv) {
    this.id = id;
    this.signer = signer;
    this.honest = honest;
    this.disk = new SimDisk();
    this.peer = { id, publicKey: signer.publicKey, nodeId: `n${id}` };
    this.#env = env;
    this.#genesis = genesis;
    this.#metrics = {
      round: noop,
      roundChanges: noop,
      isValidator: noop,
      messagesOut: noop,
      rejectedMessages: { inc: ({ reason }) => env.onReject?.(reason) },
    };
    const blocks = this.disk.blocks;
    this.#store = {
      get length() {
        return blocks.length;
      },
      get: (height) => blocks.get(height),
      append: (height, block) => {
        if (height > 0) this.#io('append');
        blocks.append(height, block);
      },
      close() {},
    };
    this.#boot();
  }

  get height(): number {
    return this.#chain.height;
  }

  get isValidator(): boolean {
    return this.alive && this.#driver.isValidator;
  }

  /** The blocks on this node's disk (what the checkers read). */
  get blocks(): readonly Block[] {
    return this.disk.blocks.all;
  }

  activeSetAfterTip(): readonly string[] {
    return this.#chain.activeSetAt(this.#chain.height + 1);
  }

  /** This node proposes the next height at round 0. */
  proposesNext(): boolean {
    if (!this.isValidator) return false;
    return proposerFor(heightContextAfter(this.#chain.tip(), this.#chain.timeline), 0) === this.signer.publicKey;
  }

  #log(line: string): void {
    this.#env.log?.(`[t=${this.#env.clock.now} n${this.id}] ${line}`);
  }

  // ------------------------------------------------------------------ lifecycle

  /** (Re)start from the disk: chain state from the stored blocks, an empty mempool, a fresh driver, applier and sync. */
  #boot(): void {
    const env = this.#env;
    const gen = this.#generation;
    const clock = env.clock;
    this.#chain = ChainState.open(this.#store, this.#genesis, env.verify);
    this.#mempool = new Mempool({
      maxRecords: 10_000,
      isCommitted: (id) => this.#chain.isCommitted(id),
      now: () => clock.now,
    });
    this.#requests = new Map();
    const line = (level: string) => (obj: object, msg: string) => this.#log(`${level} ${msg} ${JSON.stringify(obj)}`);
    const log: Log = { debug: () => {}, info: line('info'), warn: line('warn'), error: line('error') };
    const applierDeps: ApplierDeps = {
      self: this.signer.publicKey,
      chain: this.#chain,
      mempool: this.#mempool,
      metrics: NO_APPLIER_METRICS,
      log,
      onExternalCommit: () => this.#driver.onExternalCommit(),
      onBehind: () => this.#sync.request(),
    };
    this.#applier = env.applier ? env.applier(applierDeps) : new BlockApplier(applierDeps);
    this.#applier.onFinalized((block, origin) => env.onFinalized?.(this, block, origin));
    this.#sync = new ChainSync({
      chain: this.#chain,
      network: this.#syncNetwork(gen),
      receive: (body, origin) => this.#applier.receive(body, origin),
      log,
      now: () => clock.now,
    });
    this.#driver = createDriver({
      signer: this.signer,
      chain: this.#chain,
      mempool: this.#mempool,
      verify: env.verify,
      commit: (block) => this.#applier.apply(block, 'consensus'),
      settings: env.params.driver,
      metrics: this.#metrics,
      log,
      // Each node's clock runs `id` ms ahead: twins holding one key build different blocks for one round.
      clock: { now: () => clock.now + this.id },
      timers: {
        after: (ms, fn) => clock.schedule(ms, () => this.#enter(gen, fn)),
      },
      stateStore: {
        load: () => this.disk.loadState(),
        save: (state) => {
          this.#io('persist');
          this.disk.saveState(state);
        },
        close() {},
      },
      network: {
        broadcast: (msg, to) => this.#broadcast(msg, to),
        pushBlock: (block, except) => {
          this.#io('push');
          for (const peer of env.nodes())
            if (peer !== this && !except.has(peer.signer.publicKey))
              env.network.send(this.id, peer.id, { kind: 'block', block });
        },
      },
    });
    env.onBoot?.(this, this.#chain.height);
    this.#enter(gen, () => this.#driver.start());
    this.#every(env.params.syncIntervalMs, gen, () => this.#sync.request());
  }

  crash(): void {
    if (!this.alive) return;
    this.#log('crash');
    this.alive = false;
    this.crashes++;
    this.#generation++;
    this.crashPoint = null;
    this.#lastOp = null;
  }

  restart(): void {
    if (this.alive) return;
    this.#log('restart');
    this.alive = true;
    this.#boot();
  }

  /** Calls into the node on behalf of the simulation: nothing for a dead node or a stale timer; a crash ends it. */
  #enter(gen: number, fn: () => void): void {
    if (!this.alive || gen !== this.#generation) return;
    try {
      fn();
    } catch (err) {
      if (!(err instanceof SimCrash)) throw err;
    }
  }

  #every(ms: number, gen: number, fn: () => void): void {
    const jitter = this.#env.rng.int(0, Math.floor(ms / 2));
    this.#env.clock.schedule(ms + jitter, () => {
      if (!this.alive || gen !== this.#generation) return;
      this.#enter(gen, fn);
      this.#every(ms, gen, fn);
    });
  }

  /** Every port call that reaches the "disk" or the network passes here first: the armed crash point. */
  #io(op: IoOp, partial?: () => void): void {
    const point = this.crashPoint;
    const last = this.#lastOp;
    this.#lastOp = op;
    if (point === null) return;
    let hit = false;
    if (point.kind === 'ops') hit = point.after-- <= 0;
    else if (point.kind === 'persist-then-send' && op === 'send' && last === 'persist') hit = point.skip-- <= 0;
    else if (point.kind === 'send-then-persist' && op === 'persist' && last === 'send') hit = point.skip-- <= 0;
    if (!hit) return;
    this.#env.onCrashPoint?.(point.kind);
    partial?.();
    this.crash();
    throw new SimCrash();
  }

  // ------------------------------------------------------------------ ports

  #broadcast(msg: ConsensusMessage, to: ReadonlySet<string>): void {
    const env = this.#env;
    const targets = env.nodes().filter((peer) => peer !== this && to.has(peer.signer.publicKey));
    const send = (peer: SimNode) => {
      // A Byzantine twin sends some peers a different, validly signed message.
      const mutated = !this.honest && env.rng.chance(env.params.byzantineMutation);
      env.network.send(this.id, peer.id, { kind: 'consensus', msg: mutated ? mutate(msg, env.rng, this.signer) : msg });
    };
    const sent = () => {
      this.maxRound = Math.max(this.maxRound, msg.round);
      env.onBroadcast?.(this, msg);
    };
    // A crash during a broadcast: the message left for some of the targets only.
    this.#io('send', () => {
      sent();
      for (const peer of targets.slice(0, env.rng.int(0, targets.length))) send(peer);
    });
    sent();
    for (const peer of targets) send(peer);
  }

  /**
   * Pull sync's network port: a request message to the peer, its answer back as a message. An answer that does
   * not come (lost, partitioned, a dead peer) is `undefined` after a timeout of twice the network's current
   * largest delay, as an HTTP request times out.
   */
  #syncNetwork(gen: number): SyncNetwork<SimPeer> {
    const env = this.#env;
    const ask = (to: SimPeer, request: (id: number) => Payload, done: (answer: unknown) => void) => {
      const id = this.#nextRequest++;
      const requests = this.#requests;
      const finish = (answer: unknown) => {
        if (!requests.delete(id)) return;
        done(answer);
      };
      requests.set(id, finish);
      env.clock.schedule(2 * env.network.conditions.maxDelayMs + 20, () => this.#enter(gen, () => finish(undefined)));
      env.network.send(this.id, to.id, request(id));
    };
    return {
      peers: () =>
        env
          .nodes()
          .filter((n) => n !== this)
          .map((n) => n.peer),
      height: (peer, done) =>
        ask(
          peer,
          (id) => ({ kind: 'chain-request', id }),
          (h) => done(typeof h === 'number' ? h : undefined),
        ),
      block: (peer, height, done) => ask(peer, (id) => ({ kind: 'block-request', id, height }), done),
    };
  }

  // ------------------------------------------------------------------ inbound

  receive(from: number, payload: Payload): void {
    this.#enter(this.#generation, () => this.#receive(from, payload));
  }

  #receive(from: number, payload: Payload): void {
    const env = this.#env;
    switch (payload.kind) {
      case 'consensus': {
        // The gate's door, as POST /consensus runs it (a message from the future starts pull sync), then the
        // driver (the inbound queue's hand-over).
        const admitted = this.#driver.admit(payload.msg);
        if (!admitted.ok) break;
        if (admitted.msg.height > this.height + 1) this.#sync.request();
        this.#driver.onMessage(admitted.msg);
        break;
      }
      case 'block': {
        // POST /block.
        const receipt = this.#applier.receive(payload.block, 'push');
        if (receipt.status === 'refused') this.#log(`refused block ${receipt.height}: ${receipt.reason}`);
        break;
      }
      case 'chain-request':
        env.network.send(this.id, from, { kind: 'chain-reply', id: payload.id, height: this.height });
        break;
      case 'block-request':
        env.network.send(this.id, from, { kind: 'block-reply', id: payload.id, block: this.blocks[payload.height] });
        break;
      case 'chain-reply':
        this.#requests.get(payload.id)?.(payload.height);
        break;
      case 'block-reply':
        this.#requests.get(payload.id)?.(payload.block);
        break;
      case 'records':
        if (this.#mempool.add(payload.records, from === this.id).length > 0) this.#driver.onMempool();
        break;
      case 'changes':
        if (this.#mempool.addChanges(payload.changes, this.activeSetAfterTip()).length > 0) this.#driver.onMempool();
        break;
    }
  }

  /** A local observation (the broker watcher's role): add and gossip. */
  observe(records: IntegrityRecord[]): void {
    if (!this.alive) return;
    this.receive(this.id, { kind: 'records', records });
    for (const peer of this.#env.nodes())
      if (peer !== this) this.#env.network.send(this.id, peer.id, { kind: 'records', records });
  }

  /** An admin submitting a validator change to this node: add and gossip. */
  submitChange(change: ValidatorChange): void {
    if (!this.alive) return;
    this.receive(this.id, { kind: 'changes', changes: [change] });
    for (const peer of this.#env.nodes())
      if (peer !== this) this.#env.network.send(this.id, peer.id, { kind: 'changes', changes: [change] });
  }
}
