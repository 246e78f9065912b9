/**
 * A simulated ledger node: the same pure core as the real node (engine, chain checks, validator
 * timeline) driven by simulated time, network and storage. It plays the driver's role: it executes
 * the engine's actions in order (persist before send), builds proposals, pushes and pulls blocks.
 */

import type { Block, ConsensusMessage, IntegrityRecord, ValidatorChange, Verify } from '@scriptorium/ledger-protocol';
import {
  blockHash,
  buildBlock,
  checkBody,
  checkLink,
  createValidatorTimeline,
  roleAt,
  type ValidatorTimeline,
  verifyFinality,
} from '@scriptorium/ledger-protocol';
import type { Signer } from '@scriptorium/ledger-protocol/keys';
import { createEngine } from '../src/consensus/engine.ts';
import { heightContextAfter } from '../src/consensus/proposer.ts';
import type { Engine, EngineAction } from '../src/consensus/types.ts';
import { mutate } from './byzantine.ts';
import type { SimClock } from './clock.ts';
import type { SimNetwork } from './network.ts';
import type { Prng } from './prng.ts';
import { SimStorage } from './storage.ts';

export type Payload =
  | { kind: 'consensus'; msg: ConsensusMessage }
  | { kind: 'block'; block: Block }
  | { kind: 'status'; height: number }
  | { kind: 'blocks'; blocks: Block[] }
  | { kind: 'records'; records: IntegrityRecord[] }
  | { kind: 'changes'; changes: ValidatorChange[] };

export interface SimParams {
  chainId: string;
  baseTimeoutMs: number;
  maxTimeoutMs: number;
  blockIntervalMs: number;
  syncIntervalMs: number;
  maxRecordsPerBlock: number;
  /** Probability that a Byzantine twin sends a peer a mutated (equivocating or invalid) message. */
  byzantineMutation: number;
}

export interface NodeEnv {
  clock: SimClock;
  network: SimNetwork<Payload>;
  rng: Prng;
  params: SimParams;
  verify: Verify;
  /** Ids of every simulated node (peers = all others). */
  peers: () => number[];
  log?: (line: string) => void;
  /** Every message a node sends (for the checkers). */
  onBroadcast?: (node: SimNode, msg: ConsensusMessage) => void;
}

export class SimNode {
  readonly id: number;
  readonly signer: Signer;
  readonly honest: boolean;
  readonly storage: SimStorage;
  readonly #env: NodeEnv;

  alive = true;
  crashes = 0;
  /** Crash in the middle of the next action list, after this many actions (null = not armed). */
  crashAfterActions: number | null = null;
  #generation = 0;
  #engine: Engine | null = null;
  #timeline!: ValidatorTimeline;
  #mempool = new Map<string, IntegrityRecord>();
  #committedIds = new Set<string>();
  #pendingChanges: ValidatorChange[] = [];
  maxRound = 0;

  constructor(id: number, signer: Signer, honest: boolean, genesis: Block, env: NodeEnv) {
    this.id = id;
    this.signer = signer;
    this.honest = honest;
    this.storage = new SimStorage(genesis);
    this.#env = env;
    this.#boot();
  }

  get tip(): Block {
    return this.storage.tip;
  }

  get height(): number {
    return this.storage.tip.header.height;
  }

  get isValidator(): boolean {
    return this.#engine !== null;
  }

  #log(line: string): void {
    this.#env.log?.(`[t=${this.#env.clock.now} n${this.id}] ${line}`);
  }

  // ------------------------------------------------------------------ lifecycle

  /** (Re)start from storage: rebuild the timeline from blocks, restore the engine from the persisted state. */
  #boot(): void {
    const blocks = this.storage.blocks;
    this.#timeline = createValidatorTimeline(blocks[0] as Block);
    this.#committedIds = new Set();
    for (const b of blocks.slice(1)) {
      this.#timeline.append(b);
      for (const r of b.records) this.#committedIds.add(r.id);
    }
    this.#mempool = new Map();
    this.#pendingChanges = [];
    this.#engine = null;
    const gen = this.#generation;
    this.#updateRole(this.storage.loadState());
    this.#every(this.#env.params.syncIntervalMs, gen, () => this.#sync());
  }

  crash(): void {
    if (!this.alive) return;
    this.#log('crash');
    this.alive = false;
    this.crashes++;
    this.#generation++;
    this.#engine = null;
    this.crashAfterActions = null;
  }

  restart(): void {
    if (this.alive) return;
    this.#log('restart');
    this.alive = true;
    this.#boot();
  }

  #every(ms: number, gen: number, fn: () => void): void {
    const jitter = this.#env.rng.int(0, Math.floor(ms / 2));
    this.#env.clock.schedule(ms + jitter, () => {
      if (!this.alive || gen !== this.#generation) return;
      fn();
      this.#every(ms, gen, fn);
    });
  }

  #updateRole(restoreState: ReturnType<SimStorage['loadState']> = null): void {
    const nextSet = this.#timeline.at(this.#timeline.tip + 1);
    const role = roleAt(nextSet, this.signer.publicKey);
    if (role === 'follower') {
      if (this.#engine) this.#log('REMOVE committed: now a passive follower');
      this.#engine = null;
      return;
    }
    if (!this.#engine) {
      const p = this.#env.params;
      this.#engine = createEngine(
        {
          chainId: p.chainId,
          self: this.signer.publicKey,
          sign: this.signer.sign,
          verify: this.#env.verify,
          baseTimeoutMs: p.baseTimeoutMs,
          maxTimeoutMs: p.maxTimeoutMs,
          checkProposal: (block) => this.#checkProposal(block),
        },
        restoreState ?? this.storage.loadState(),
      );
    }
    this.#run(this.#engine.step({ type: 'start', ctx: heightContextAfter(this.tip, this.#timeline) }));
  }

  #checkProposal(block: Block): string | null {
    for (const r of block.records) if (this.#committedIds.has(r.id)) return `record ${r.id} already committed`;
    return null;
  }

  // ------------------------------------------------------------------ driver: actions in order

  #run(actions: EngineAction[]): void {
    const gen = this.#generation;
    for (const action of actions) {
      if (!this.alive || gen !== this.#generation) return;
      if (this.crashAfterActions !== null) {
        if (this.crashAfterActions <= 0) {
          this.crash();
          return;
        }
        this.crashAfterActions--;
      }
      this.#execute(action, gen);
    }
  }

  #execute(action: EngineAction, gen: number): void {
    const env = this.#env;
    switch (action.type) {
      case 'persist':
        this.storage.persist(action.state);
        break;
      case 'broadcast':
        this.maxRound = Math.max(this.maxRound, action.msg.round);
        env.onBroadcast?.(this, action.msg);
        for (const peer of env.peers()) {
          if (peer === this.id) continue;
          // A Byzantine twin sends some peers a different, validly signed message.
          const mutated = !this.honest && env.rng.chance(env.params.byzantineMutation);
          const msg = mutated ? mutate(action.msg, env.rng, this.signer) : action.msg;
          env.network.send(this.id, peer, { kind: 'consensus', msg });
        }
        break;
      case 'schedule-timeout':
        env.clock.schedule(action.afterMs, () => {
          if (!this.alive || gen !== this.#generation || !this.#engine) return;
          const before = this.#engine.status();
          const actions = this.#engine.step({ type: 'timeout', height: action.height, round: action.round });
          if (actions.length > 0) this.#log(`timeout h=${action.height} r=${action.round} → round ${before.round + 1}`);
          this.#run(actions);
        });
        break;
      case 'request-proposal': {
        const delay = action.round === 0 ? env.params.blockIntervalMs : 0;
        env.clock.schedule(delay, () => {
          if (!this.alive || gen !== this.#generation || !this.#engine) return;
          if (this.height + 1 !== action.height) return;
          this.#run(
            this.#engine.step({
              type: 'proposal-ready',
              height: action.height,
              round: action.round,
              block: this.#buildProposal(action.height),
            }),
          );
        });
        break;
      }
      case 'finalize':
        this.#log(`finalize h=${action.block.header.height} r=${action.round}`);
        if (this.#applyBlock(action.block)) {
          for (const peer of env.peers())
            if (peer !== this.id) env.network.send(this.id, peer, { kind: 'block', block: action.block });
        }
        break;
    }
  }

  #buildProposal(height: number): Block {
    const records = [...this.#mempool.values()]
      .filter((r) => !this.#committedIds.has(r.id))
      .sort((a, b) => (a.id < b.id ? -1 : 1))
      .slice(0, this.#env.params.maxRecordsPerBlock);
    return buildBlock({
      chainId: this.#env.params.chainId,
      height,
      parentHash: blockHash(this.tip.header),
      proposer: this.signer.publicKey,
      timestamp: this.#env.clock.now + this.id, // twins differ: they equivocate
      records,
      changes: this.#pendingChanges.slice(0, 2),
    });
  }

  // ------------------------------------------------------------------ chain

  /** Verifies and appends the next block; true when appended. */
  #applyBlock(block: Block): boolean {
    if (block.header.height !== this.height + 1) return false;
    if (!checkLink(this.tip, block).ok || !checkBody(block).ok) return false;
    const fin = verifyFinality(block, this.#timeline.at(block.header.height), this.#env.verify);
    if (!fin.ok) {
      this.#log(`rejected block ${block.header.height}: ${fin.reason}`);
      return false;
    }
    this.storage.appendBlock(block);
    const applied = this.#timeline.append(block);
    for (const c of applied.applied)
      this.#log(`h=${block.header.height} applied ${c.action} ${c.validator.slice(0, 8)}`);
    for (const r of block.records) {
      this.#committedIds.add(r.id);
      this.#mempool.delete(r.id);
    }
    const set = this.#timeline.at(this.#timeline.tip + 1);
    this.#pendingChanges = this.#pendingChanges.filter((c) =>
      c.action === 'ADD' ? !set.includes(c.validator) : set.includes(c.validator),
    );
    this.#updateRole();
    return true;
  }

  #sync(): void {
    const others = this.#env.peers().filter((p) => p !== this.id);
    if (others.length === 0) return;
    this.#env.network.send(this.id, this.#env.rng.pick(others), { kind: 'status', height: this.height });
  }

  // ------------------------------------------------------------------ inbound

  receive(from: number, payload: Payload): void {
    if (!this.alive) return;
    switch (payload.kind) {
      case 'consensus':
        if (this.#engine) this.#run(this.#engine.step({ type: 'message', msg: payload.msg }));
        break;
      case 'block':
        if (payload.block.header.height > this.height + 1) {
          this.#env.network.send(this.id, from, { kind: 'status', height: this.height });
        } else this.#applyBlock(payload.block);
        break;
      case 'status':
        if (payload.height < this.height) {
          const blocks = this.storage.blocks.slice(payload.height + 1, payload.height + 9);
          this.#env.network.send(this.id, from, { kind: 'blocks', blocks });
        }
        break;
      case 'blocks':
        for (const b of payload.blocks) if (b.header.height === this.height + 1) this.#applyBlock(b);
        break;
      case 'records':
        for (const r of payload.records) if (!this.#committedIds.has(r.id)) this.#mempool.set(r.id, r);
        break;
      case 'changes':
        for (const c of payload.changes) {
          if (!this.#pendingChanges.some((p) => p.action === c.action && p.validator === c.validator)) {
            this.#pendingChanges.push(c);
          }
        }
        break;
    }
  }

  /** A local observation (the broker watcher's role): add and gossip. */
  observe(records: IntegrityRecord[]): void {
    if (!this.alive) return;
    this.receive(this.id, { kind: 'records', records });
    for (const peer of this.#env.peers())
      if (peer !== this.id) this.#env.network.send(this.id, peer, { kind: 'records', records });
  }

  /** An admin submitting a validator change to this node: add and gossip. */
  submitChange(change: ValidatorChange): void {
    if (!this.alive) return;
    this.receive(this.id, { kind: 'changes', changes: [change] });
    for (const peer of this.#env.peers())
      if (peer !== this.id) this.#env.network.send(this.id, peer, { kind: 'changes', changes: [change] });
  }

  activeSetAfterTip(): readonly string[] {
    return this.#timeline.at(this.#timeline.tip + 1);
  }
}
