/**
 * QBFT / IBFT 2.0 engine for one node: a pure, deterministic state machine. See README.md.
 * No I/O, no clock, no timers: `step(event)` returns the actions the driver executes in order.
 *
 * This file is the engine's frame: the height lifecycle (start, restore after a restart) and the dispatch of
 * each event. Every message first passes the gate (gate.ts); the protocol rules are in proposal.ts (PRE-PREPARE),
 * votes.ts (PREPARE, COMMIT) and round-change.ts (timeouts, ROUND_CHANGE), all working on the open `Height`.
 */
import { blockHash, type ConsensusMessage, type Verify, verifySignature } from '@scriptorium/ledger-protocol';
import { Gate } from './gate.ts';
import { Height } from './height.ts';
import { acceptProposal, onPrePrepare, onProposalReady } from './proposal.ts';
import { proposerFor } from './proposer.ts';
import { helpLaggard, onRoundChange, onTimeout } from './round-change.ts';
import type {
  Engine,
  EngineAction,
  EngineConfig,
  EngineEvent,
  EngineStatus,
  HeightContext,
  PersistedState,
} from './types.ts';
import { onCommit, onPrepare } from './votes.ts';

/**
 * Creates an engine. Pass the last persisted state after a restart.
 * @example
 * const e = createEngine({ chainId: 'c', self: s.publicKey, sign: s.sign, baseTimeoutMs: 1000 });
 * e.step({ type: 'start', ctx });
 */
export function createEngine(config: EngineConfig, persisted: PersistedState | null = null): Engine {
  return new QbftEngine(config, persisted);
}

class QbftEngine implements Engine {
  readonly #cfg: EngineConfig;
  readonly #maxTimeoutMs: number;
  /** Signature checks: the caller's `verify`, which the node memoizes once for all its users (verify-cache.ts). */
  readonly #verify: Verify;
  readonly #gate: Gate;
  #restored: PersistedState | null;
  #h: Height | null = null;
  #out: EngineAction[] = [];

  constructor(config: EngineConfig, persisted: PersistedState | null) {
    if (!(config.baseTimeoutMs > 0)) throw new RangeError('baseTimeoutMs must be > 0');
    this.#cfg = config;
    this.#maxTimeoutMs = config.maxTimeoutMs ?? config.baseTimeoutMs * 2 ** 6;
    this.#verify = config.verify ?? verifySignature;
    this.#restored = persisted;
    this.#gate = new Gate(this.#verify);
  }

  step(event: EngineEvent): EngineAction[] {
    this.#out = [];
    if (this.#h) this.#h.out = this.#out;
    switch (event.type) {
      case 'start':
        this.#start(event.ctx);
        break;
      case 'message':
        this.#onMessage(event.msg);
        break;
      case 'timeout':
        if (this.#h) onTimeout(this.#h, event.height, event.round);
        break;
      case 'proposal-ready':
        if (this.#h) onProposalReady(this.#h, event.height, event.round, event.block);
        break;
    }
    return this.#out;
  }

  status(): EngineStatus {
    const h = this.#h;
    return {
      height: h?.ctx.height ?? 0,
      round: h?.round ?? 0,
      decided: h?.decided ?? false,
      running: h?.running ?? false,
      proposer: h && h.ctx.validators.length > 0 ? proposerFor(h.ctx, h.round) : null,
      lockedRound: h?.locked?.round ?? null,
      buffered: this.#gate.buffered,
    };
  }

  // ---------------------------------------------------------------- height lifecycle

  #start(ctx: HeightContext): void {
    const current = this.#h;
    if (current !== null && ctx.height < current.ctx.height) return;
    if (current !== null && ctx.height === current.ctx.height && (current.running || current.decided)) return;
    if (ctx.validators.length === 0) throw new RangeError('empty validator set');

    const h = new Height(this.#cfg, ctx, this.#verify, this.#out, this.#maxTimeoutMs);
    this.#h = h;
    const restored = this.#restored;
    this.#restored = null;
    const buffered = this.#gate.release(ctx.height);
    if (!h.running) return;

    if (restored !== null && restored.height === ctx.height) this.#resume(h, restored);
    else {
      h.scheduleTimeout();
      if (h.isProposer(0)) this.#out.push({ type: 'request-proposal', height: ctx.height, round: 0 });
    }
    for (const msg of buffered) this.#onMessage(msg);
  }

  /** Resumes a height after a restart: the same round and lock, and exactly the messages signed before. */
  #resume(h: Height, restored: PersistedState): void {
    h.round = restored.round;
    h.locked = restored.locked;
    if (h.locked) h.blocks.set(blockHash(h.locked.block.header), h.locked.block);
    h.sent = { ...restored.sent };
    h.scheduleTimeout();
    // Re-send exactly what was signed before the restart; it is already persisted.
    for (const msg of [
      restored.sent.roundChange,
      restored.sent.proposal,
      restored.sent.prepare,
      restored.sent.commit,
    ]) {
      if (msg === null) continue;
      h.broadcast(msg);
      h.record(msg);
    }
    // A crash between persisting our proposal and our PREPARE for it: vote now (same value).
    const own = h.sent.proposal;
    if (own !== null && h.sent.prepare === null) acceptProposal(h, own);
    if (h.round === 0 && h.sent.proposal === null && h.isProposer(0)) {
      this.#out.push({ type: 'request-proposal', height: h.ctx.height, round: 0 });
    }
  }

  // ---------------------------------------------------------------- messages

  #onMessage(msg: ConsensusMessage): void {
    const h = this.#h;
    const route = this.#gate.route(msg, {
      chainId: this.#cfg.chainId,
      self: this.#cfg.self,
      height: h?.ctx.height ?? null,
      round: h?.round ?? 0,
      running: h?.running ?? false,
      decided: h?.decided ?? false,
      members: h?.v.members ?? new Set(),
      seen: (m) => h?.seen(m) ?? false,
    });
    if (route.kind === 'buffered') return;
    if (h && route.laggard) helpLaggard(h, msg.author);
    if (route.kind === 'reject') {
      this.#out.push({
        type: 'reject',
        reason: route.reason,
        detail: route.detail,
        msg: { type: msg.type, height: msg.height, round: msg.round, author: msg.author },
      });
      return;
    }
    if (!h) return;
    switch (msg.type) {
      case 'PRE-PREPARE':
        onPrePrepare(h, msg);
        break;
      case 'PREPARE':
        onPrepare(h, msg);
        break;
      case 'COMMIT':
        onCommit(h, msg);
        break;
      case 'ROUND_CHANGE':
        onRoundChange(h, msg);
        break;
    }
  }
}
