/**
 * A simulated ledger node: the production consensus driver (src/node/driver.ts), chain state and mempool,
 * on simulated ports — time from the simulation clock, a network of the simulation, and a "disk" (blocks and
 * the consensus state) that survives crashes. What remains here is adapters, plus the node's own block
 * exchange in a simple form (pushes answered, pull sync by status/blocks messages).
 *
 * Crashes happen at I/O: a node armed with a crash point dies right before (or, for a broadcast, part way
 * through) the port call that reaches it, exactly as a killed process would, and restarts later from its disk
 * with a fresh driver.
 */
import type { Block, ConsensusMessage, IntegrityRecord, ValidatorChange, Verify } from '@scriptorium/ledger-protocol';
import type { Signer } from '@scriptorium/ledger-protocol/keys';
import { heightContextAfter, proposerFor } from '../src/consensus/index.ts';
import { Mempool } from '../src/mempool/index.ts';
import { ChainState } from '../src/node/chain-state.ts';
import { type ConsensusDriver, createDriver, type DriverMetrics, type DriverSettings } from '../src/node/driver.ts';
import { mutate } from './byzantine.ts';
import type { SimClock } from './clock.ts';
import type { SimNetwork } from './network.ts';
import type { Prng } from './prng.ts';
import { SimDisk } from './storage.ts';

export type Payload =
  | { kind: 'consensus'; msg: ConsensusMessage }
  | { kind: 'block'; block: Block }
  | { kind: 'status'; height: number }
  | { kind: 'blocks'; blocks: Block[] }
  | { kind: 'records'; records: IntegrityRecord[] }
  | { kind: 'changes'; changes: ValidatorChange[] };

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
}

/** Thrown out of a port call when the node crashes there; caught where the simulation called into the node. */
class SimCrash extends Error {}

export class SimNode {
  readonly id: number;
  readonly signer: Signer;
  readonly honest: boolean;
  readonly disk: SimDisk;
  readonly #env: NodeEnv;
  readonly #genesis: Block;
  readonly #metrics: DriverMetrics;

  alive = true;
  crashes = 0;
  /** The next crash, when armed. */
  crashPoint: CrashPoint | null = null;
  #lastOp: IoOp | null = null;
  #generation = 0;
  #chain!: ChainState;
  #mempool!: Mempool;
  #driver!: ConsensusDriver;
  maxRound = 0;

  constructor(id: number, signer: Signer, honest: boolean, genesis: Block, env: NodeEnv) {
    this.id = id;
    this.signer = signer;
    this.honest = honest;
    this.disk = new SimDisk();
    this.#env = env;
    this.#genesis = genesis;
    const noop = { set() {}, inc() {} };
    this.#metrics = {
      round: noop,
      roundChanges: noop,
      isValidator: noop,
      messagesOut: noop,
      rejectedMessages: { inc: ({ reason }) => env.onReject?.(reason) },
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

  /** (Re)start from the disk: chain state from the stored blocks, an empty mempool, a fresh driver. */
  #boot(): void {
    const env = this.#env;
    const gen = this.#generation;
    const clock = env.clock;
    this.#chain = ChainState.open(this.disk.blocks, this.#genesis, env.verify);
    this.#mempool = new Mempool({
      maxRecords: 10_000,
      isCommitted: (id) => this.#chain.isCommitted(id),
      now: () => clock.now,
    });
    const log = (level: string) => (obj: object, msg: string) => this.#log(`${level} ${msg} ${JSON.stringify(obj)}`);
    this.#driver = createDriver({
      signer: this.signer,
      chain: this.#chain,
      mempool: this.#mempool,
      verify: env.verify,
      commit: (block) => this.#commit(block),
      settings: env.params.driver,
      metrics: this.#metrics,
      log: { debug: () => {}, info: log('info'), error: log('error') },
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
    this.#enter(gen, () => this.#driver.start());
    this.#every(env.params.syncIntervalMs, gen, () => this.#sync());
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

  /** The driver's finalize, and blocks from peers: the durable append, then the mempool. */
  #commit(block: Block): void {
    this.#io('append');
    this.#chain.append(block);
    this.#mempool.removeCommitted(block.records, block.validator_changes);
    for (const c of block.validator_changes)
      this.#log(`h=${block.header.height} ${c.action} ${c.validator.slice(0, 8)}`);
  }

  /** A verified block from a peer (pushed or pulled): commit it and let the driver move on. */
  #applyFromPeer(body: Block): void {
    const verdict = this.#chain.verifyNext(body);
    if (!verdict.ok) {
      this.#log(`refused block ${body.header.height}: ${verdict.reason}`);
      return;
    }
    this.#commit(verdict.block);
    this.#driver.onExternalCommit();
  }

  #sync(): void {
    const others = this.#env.nodes().filter((n) => n !== this);
    if (others.length === 0) return;
    this.#env.network.send(this.id, this.#env.rng.pick(others).id, { kind: 'status', height: this.height });
  }

  // ------------------------------------------------------------------ inbound

  receive(from: number, payload: Payload): void {
    this.#enter(this.#generation, () => this.#receive(from, payload));
  }

  #receive(from: number, payload: Payload): void {
    switch (payload.kind) {
      case 'consensus': {
        // The gate's door, as POST /consensus runs it, then the driver (the inbound queue's hand-over).
        const admitted = this.#driver.admit(payload.msg);
        if (admitted.ok) this.#driver.onMessage(admitted.msg);
        break;
      }
      case 'block':
        if (payload.block.header.height > this.height + 1)
          this.#env.network.send(this.id, from, { kind: 'status', height: this.height });
        else if (payload.block.header.height === this.height + 1) this.#applyFromPeer(payload.block);
        break;
      case 'status':
        if (payload.height < this.height) {
          const blocks = this.blocks.slice(payload.height + 1, payload.height + 9);
          this.#env.network.send(this.id, from, { kind: 'blocks', blocks });
        }
        break;
      case 'blocks':
        for (const b of payload.blocks) if (b.header.height === this.height + 1) this.#applyFromPeer(b);
        break;
      case 'records':
        if (this.#mempool.add(payload.records).length > 0) this.#driver.onMempool();
        break;
      case 'changes':
        if (this.#mempool.addChanges(payload.changes).length > 0) this.#driver.onMempool();
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
