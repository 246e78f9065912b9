/**
 * The state of one open height and the engine's outbox: everything the protocol rules (proposal.ts, votes.ts,
 * round-change.ts) read and change while the engine handles one event, and the helpers that turn their
 * decisions into actions (sign, persist before sending, count our own votes, timers).
 */
import {
  type Block,
  type ConsensusMessage,
  messageSigningBytes,
  quorumSize,
  type RoundChangeCertificate,
  type Verify,
} from '@scriptorium/ledger-protocol';
import type { RejectReason } from './gate.ts';
import { proposerFor } from './proposer.ts';
import { MessageStore } from './round-store.ts';
import type { EngineAction, EngineConfig, HeightContext, PersistedState } from './types.ts';
import type { ValidationContext } from './validation/index.ts';

export type Sent = PersistedState['sent'];
const emptySent = (): Sent => ({ proposal: null, prepare: null, commit: null, roundChange: null });

export class Height {
  readonly cfg: EngineConfig;
  readonly ctx: HeightContext;
  readonly v: ValidationContext;
  /** The actions of the event being handled (a new list per `step`). */
  out: EngineAction[];
  readonly #maxTimeoutMs: number;

  /** This node is a validator of this height. */
  readonly running: boolean;
  decided = false;
  round = 0;
  locked: PersistedState['locked'] = null;
  sent: Sent = emptySent();
  store = new MessageStore();
  /** Blocks seen at this height (proposals, prepared blocks), by hash. */
  readonly blocks = new Map<string, Block>();
  /** A new-block proposal for a round > 0 waits for the driver's `proposal-ready`, with its certificate. */
  pendingProposal: { round: number; justification: RoundChangeCertificate } | null = null;
  /** Peers (author:round) we already re-sent our ROUND_CHANGE to because they lagged behind. */
  readonly helped = new Set<string>();

  constructor(cfg: EngineConfig, ctx: HeightContext, verify: Verify, out: EngineAction[], maxTimeoutMs: number) {
    this.cfg = cfg;
    this.ctx = ctx;
    this.out = out;
    this.#maxTimeoutMs = maxTimeoutMs;
    const members = new Set(ctx.validators);
    this.v = {
      chainId: cfg.chainId,
      ctx,
      members,
      quorum: quorumSize(members.size),
      verify,
      checkProposal: cfg.checkProposal,
    };
    this.running = members.has(cfg.self);
  }

  isProposer(round: number): boolean {
    return proposerFor(this.ctx, round) === this.cfg.self;
  }

  /** Moves to round `r` (only forward): a fresh round's votes, its timer. */
  enterRound(r: number): void {
    if (r <= this.round) return;
    this.round = r;
    this.sent = emptySent();
    this.pendingProposal = null;
    this.store.pruneBelow(r);
    this.scheduleTimeout();
  }

  scheduleTimeout(): void {
    const afterMs = Math.min(this.cfg.baseTimeoutMs * 2 ** this.round, this.#maxTimeoutMs);
    this.out.push({ type: 'schedule-timeout', height: this.ctx.height, round: this.round, afterMs });
  }

  /** The durable state: written before any message it lists leaves the node. */
  persist(): void {
    this.out.push({
      type: 'persist',
      state: { version: 1, height: this.ctx.height, round: this.round, locked: this.locked, sent: { ...this.sent } },
    });
  }

  broadcast(msg: ConsensusMessage): void {
    this.out.push({ type: 'broadcast', msg });
  }

  reject(msg: ConsensusMessage, reason: RejectReason, detail: string): void {
    this.out.push({
      type: 'reject',
      reason,
      detail,
      msg: { type: msg.type, height: msg.height, round: msg.round, author: msg.author },
    });
  }

  sign<T extends ConsensusMessage>(unsigned: Omit<T, 'signature'>): T {
    const signature = this.cfg.sign(messageSigningBytes(unsigned as unknown as ConsensusMessage));
    return { ...unsigned, signature } as T;
  }

  /** The envelope of a message this node signs now: type, chain, height, current round, author. */
  base(type: ConsensusMessage['type']) {
    return { type, chain_id: this.cfg.chainId, height: this.ctx.height, round: this.round, author: this.cfg.self };
  }

  /** Stores a message in the round store (our own ones too: we count our own votes). */
  record(msg: ConsensusMessage): void {
    const m = this.store.round(msg.round);
    switch (msg.type) {
      case 'PRE-PREPARE':
        m.proposal ??= msg;
        this.blocks.set(msg.block_hash, msg.block);
        break;
      case 'PREPARE':
        if (!m.prepares.has(msg.author)) m.prepares.set(msg.author, msg);
        break;
      case 'COMMIT':
        if (!m.commits.has(msg.author)) m.commits.set(msg.author, msg);
        break;
      case 'ROUND_CHANGE':
        if (!m.roundChanges.has(msg.author)) m.roundChanges.set(msg.author, msg);
        if (msg.prepared_block && msg.prepared_hash) this.blocks.set(msg.prepared_hash, msg.prepared_block);
        break;
    }
  }

  /** The author already has a message of this type in this round (the first valid one counts). */
  seen(msg: ConsensusMessage): boolean {
    const m = this.store.peek(msg.round);
    if (!m) return false;
    switch (msg.type) {
      case 'PRE-PREPARE':
        return m.proposal !== null;
      case 'PREPARE':
        return m.prepares.has(msg.author);
      case 'COMMIT':
        return m.commits.has(msg.author);
      case 'ROUND_CHANGE':
        return m.roundChanges.has(msg.author);
    }
  }
}
