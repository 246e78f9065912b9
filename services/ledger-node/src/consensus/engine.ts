/**
 * QBFT / IBFT 2.0 engine for one node: a pure, deterministic state machine. See README.md.
 * No I/O, no clock, no timers: `step(event)` returns the actions the driver executes in order.
 */

import type { Block } from '@scriptorium/ledger-protocol';
import {
  blockHash,
  type CommitMessage,
  type ConsensusMessage,
  checkBody,
  maxFaulty,
  messageSigningBytes,
  type PrePrepareMessage,
  type PrepareMessage,
  quorumSize,
  type RoundChangeCertificate,
  type RoundChangeMessage,
  roundChangeCore,
  sealBytes,
  type Verify,
  verifySignature,
} from '@scriptorium/ledger-protocol';
import { proposerFor } from './proposer.ts';
import { MessageStore } from './round-store.ts';
import type {
  Engine,
  EngineAction,
  EngineConfig,
  EngineEvent,
  EngineStatus,
  HeightContext,
  PersistedState,
} from './types.ts';
import {
  highestPrepared,
  type ValidationContext,
  validateCommit,
  validatePrePrepare,
  validatePrepare,
  validateRoundChange,
} from './validation/index.ts';

/** Messages further ahead than this many rounds are dropped (bounded memory). */
export const MAX_ROUNDS_AHEAD = 64;
/** Messages for up to this many heights ahead are buffered until the height starts. */
export const MAX_HEIGHTS_AHEAD = 8;
/** Total buffered future-height messages. */
export const MAX_BUFFERED = 4096;
/** Buffered future-height messages per author (one sender cannot fill the buffer). */
export const MAX_BUFFERED_PER_AUTHOR = 256;

type Sent = PersistedState['sent'];
const emptySent = (): Sent => ({ proposal: null, prepare: null, commit: null, roundChange: null });

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
  readonly #maxTimeout: number;
  readonly #rawVerify: Verify;
  #verifyCache = new Map<string, boolean>();
  #restored: PersistedState | null;

  #ctx: HeightContext | null = null;
  #v: ValidationContext | null = null;
  #running = false;
  #decided = false;
  #round = 0;
  #locked: PersistedState['locked'] = null;
  #sent: Sent = emptySent();
  #store = new MessageStore();
  #blocks = new Map<string, Block>();
  #pendingProposal: { round: number; justification: RoundChangeCertificate } | null = null;
  /** Peers (author:round) we already re-sent our ROUND_CHANGE to because they lagged behind. */
  #helped = new Set<string>();
  #future = new Map<number, ConsensusMessage[]>();
  #futureCount = 0;
  #futureByAuthor = new Map<string, number>();
  #out: EngineAction[] = [];

  constructor(config: EngineConfig, persisted: PersistedState | null) {
    if (!(config.baseTimeoutMs > 0)) throw new RangeError('baseTimeoutMs must be > 0');
    this.#cfg = config;
    this.#maxTimeout = config.maxTimeoutMs ?? config.baseTimeoutMs * 2 ** 6;
    this.#rawVerify = config.verify ?? verifySignature;
    this.#restored = persisted;
  }

  step(event: EngineEvent): EngineAction[] {
    this.#out = [];
    switch (event.type) {
      case 'start':
        this.#start(event.ctx);
        break;
      case 'message':
        this.#onMessage(event.msg);
        break;
      case 'timeout':
        this.#onTimeout(event.height, event.round);
        break;
      case 'proposal-ready':
        this.#onProposalReady(event.height, event.round, event.block);
        break;
    }
    return this.#out;
  }

  status(): EngineStatus {
    return {
      height: this.#ctx?.height ?? 0,
      round: this.#round,
      decided: this.#decided,
      running: this.#running,
      proposer: this.#ctx && this.#ctx.validators.length > 0 ? proposerFor(this.#ctx, this.#round) : null,
      lockedRound: this.#locked?.round ?? null,
      buffered: this.#futureCount,
    };
  }

  // ---------------------------------------------------------------- height lifecycle

  #start(ctx: HeightContext): void {
    const current = this.#ctx;
    if (current !== null && ctx.height < current.height) return;
    if (current !== null && ctx.height === current.height && (this.#running || this.#decided)) return;
    if (ctx.validators.length === 0) throw new RangeError('empty validator set');

    this.#ctx = ctx;
    const members = new Set(ctx.validators);
    this.#v = {
      chainId: this.#cfg.chainId,
      ctx,
      members,
      quorum: quorumSize(members.size),
      verify: (pk, bytes, sig) => this.#verify(pk, bytes, sig),
      checkProposal: this.#cfg.checkProposal,
    };
    this.#verifyCache = new Map();
    this.#store = new MessageStore();
    this.#blocks = new Map();
    this.#decided = false;
    this.#locked = null;
    this.#sent = emptySent();
    this.#round = 0;
    this.#pendingProposal = null;
    this.#helped = new Set();
    for (const h of [...this.#future.keys()]) {
      if (h < ctx.height) this.#dropFuture(h);
    }
    this.#running = members.has(this.#cfg.self);
    const restored = this.#restored;
    this.#restored = null;
    if (!this.#running) return;

    if (restored !== null && restored.height === ctx.height) {
      this.#round = restored.round;
      this.#locked = restored.locked;
      if (this.#locked) this.#blocks.set(blockHash(this.#locked.block.header), this.#locked.block);
      this.#sent = { ...restored.sent };
      this.#scheduleTimeout();
      // Re-send exactly what was signed before the restart; it is already persisted.
      for (const msg of [
        restored.sent.roundChange,
        restored.sent.proposal,
        restored.sent.prepare,
        restored.sent.commit,
      ]) {
        if (msg === null) continue;
        this.#out.push({ type: 'broadcast', msg });
        this.#record(msg);
      }
      // A crash between persisting our proposal and our PREPARE for it: vote now (same value).
      const own = this.#sent.proposal;
      if (own !== null && this.#sent.prepare === null) this.#acceptProposal(own);
      if (this.#round === 0 && this.#sent.proposal === null && this.#isProposer(0)) {
        this.#out.push({ type: 'request-proposal', height: ctx.height, round: 0 });
      }
    } else {
      this.#scheduleTimeout();
      if (this.#isProposer(0)) this.#out.push({ type: 'request-proposal', height: ctx.height, round: 0 });
    }
    const buffered = this.#future.get(ctx.height) ?? [];
    this.#dropFuture(ctx.height);
    for (const msg of buffered) this.#onMessage(msg);
  }

  #dropFuture(h: number): void {
    for (const msg of this.#future.get(h) ?? []) {
      const n = (this.#futureByAuthor.get(msg.author) ?? 1) - 1;
      if (n > 0) this.#futureByAuthor.set(msg.author, n);
      else this.#futureByAuthor.delete(msg.author);
      this.#futureCount--;
    }
    this.#future.delete(h);
  }

  #enterRound(r: number): void {
    if (r <= this.#round) return;
    this.#round = r;
    this.#sent = emptySent();
    this.#pendingProposal = null;
    this.#store.pruneBelow(r);
    this.#scheduleTimeout();
  }

  #scheduleTimeout(): void {
    const ctx = this.#ctx as HeightContext;
    const afterMs = Math.min(this.#cfg.baseTimeoutMs * 2 ** this.#round, this.#maxTimeout);
    this.#out.push({ type: 'schedule-timeout', height: ctx.height, round: this.#round, afterMs });
  }

  #isProposer(round: number): boolean {
    return proposerFor(this.#ctx as HeightContext, round) === this.#cfg.self;
  }

  // ---------------------------------------------------------------- persistence + sending

  #persist(): void {
    const ctx = this.#ctx as HeightContext;
    this.#out.push({
      type: 'persist',
      state: { version: 1, height: ctx.height, round: this.#round, locked: this.#locked, sent: { ...this.#sent } },
    });
  }

  #sign<T extends ConsensusMessage>(unsigned: Omit<T, 'signature'>): T {
    const signature = this.#cfg.sign(messageSigningBytes(unsigned as unknown as ConsensusMessage));
    return { ...unsigned, signature } as T;
  }

  #base(type: ConsensusMessage['type']) {
    const ctx = this.#ctx as HeightContext;
    return { type, chain_id: this.#cfg.chainId, height: ctx.height, round: this.#round, author: this.#cfg.self };
  }

  /** Stores our own message as if received (we count our own votes). */
  #record(msg: ConsensusMessage): void {
    const m = this.#store.round(msg.round);
    switch (msg.type) {
      case 'PRE-PREPARE':
        m.proposal ??= msg;
        this.#blocks.set(msg.block_hash, msg.block);
        break;
      case 'PREPARE':
        if (!m.prepares.has(msg.author)) m.prepares.set(msg.author, msg);
        break;
      case 'COMMIT':
        if (!m.commits.has(msg.author)) m.commits.set(msg.author, msg);
        break;
      case 'ROUND_CHANGE':
        if (!m.roundChanges.has(msg.author)) m.roundChanges.set(msg.author, msg);
        if (msg.prepared_block && msg.prepared_hash) this.#blocks.set(msg.prepared_hash, msg.prepared_block);
        break;
    }
  }

  #verify(pk: string, bytes: Uint8Array, sig: string): boolean {
    const key = `${pk}${sig}${Buffer.from(bytes).toString('latin1')}`;
    let ok = this.#verifyCache.get(key);
    if (ok === undefined) {
      ok = this.#rawVerify(pk, bytes, sig);
      if (this.#verifyCache.size > 20_000) this.#verifyCache.clear();
      this.#verifyCache.set(key, ok);
    }
    return ok;
  }

  // ---------------------------------------------------------------- events

  #onMessage(msg: ConsensusMessage): void {
    if (msg.chain_id !== this.#cfg.chainId) return;
    const ctx = this.#ctx;
    if (ctx === null || msg.height > ctx.height) {
      this.#buffer(msg);
      return;
    }
    if (msg.height < ctx.height || !this.#running || this.#decided) return;
    // Our own key from the network: an echo, or a twin holding our key. Never count it twice.
    if (msg.author === this.#cfg.self) return;
    if (msg.round > this.#round + MAX_ROUNDS_AHEAD) return;
    if (msg.round < this.#round) this.#helpLaggard(msg);
    switch (msg.type) {
      case 'PRE-PREPARE':
        this.#onPrePrepare(msg);
        break;
      case 'PREPARE':
        this.#onPrepare(msg);
        break;
      case 'COMMIT':
        this.#onCommit(msg);
        break;
      case 'ROUND_CHANGE':
        this.#onRoundChange(msg);
        break;
    }
  }

  /**
   * A validator still speaks in an older round: re-send our (already persisted) ROUND_CHANGE for the
   * current round, once per author and round, so that lagging nodes reach f+1 / quorum after a partition.
   */
  #helpLaggard(msg: ConsensusMessage): void {
    const rc = this.#sent.roundChange;
    const v = this.#v as ValidationContext;
    if (rc === null || !v.members.has(msg.author)) return;
    const key = `${msg.author}:${this.#round}`;
    if (this.#helped.has(key) || this.#helped.size > 4 * MAX_ROUNDS_AHEAD * v.members.size) return;
    this.#helped.add(key);
    this.#out.push({ type: 'broadcast', msg: rc });
  }

  #buffer(msg: ConsensusMessage): void {
    const base = this.#ctx?.height ?? 0;
    if (this.#ctx !== null && msg.height > base + MAX_HEIGHTS_AHEAD) return;
    if (this.#futureCount >= MAX_BUFFERED) return;
    const byAuthor = this.#futureByAuthor.get(msg.author) ?? 0;
    if (byAuthor >= MAX_BUFFERED_PER_AUTHOR) return;
    const list = this.#future.get(msg.height);
    if (list) list.push(msg);
    else this.#future.set(msg.height, [msg]);
    this.#futureCount++;
    this.#futureByAuthor.set(msg.author, byAuthor + 1);
  }

  #onPrePrepare(msg: PrePrepareMessage): void {
    if (msg.round < this.#round) return;
    const existing = this.#store.peek(msg.round)?.proposal;
    if (existing) return;
    if (!validatePrePrepare(this.#v as ValidationContext, msg).ok) return;
    if (msg.round > this.#round) this.#enterRound(msg.round);
    this.#acceptProposal(msg);
  }

  #acceptProposal(msg: PrePrepareMessage): void {
    this.#record(msg);
    if (this.#sent.prepare === null) {
      const prepare = this.#sign<PrepareMessage>({ ...this.#base('PREPARE'), block_hash: msg.block_hash } as Omit<
        PrepareMessage,
        'signature'
      >);
      this.#sent.prepare = prepare;
      this.#persist();
      this.#out.push({ type: 'broadcast', msg: prepare });
      this.#record(prepare);
    }
    this.#checkPrepared();
    this.#checkCommitted(this.#round);
  }

  #onPrepare(msg: PrepareMessage): void {
    if (msg.round < this.#round) return;
    if (this.#store.peek(msg.round)?.prepares.has(msg.author)) return;
    if (!validatePrepare(this.#v as ValidationContext, msg).ok) return;
    this.#record(msg);
    if (msg.round === this.#round) this.#checkPrepared();
  }

  /** Prepared = a proposal for this round plus a quorum of PREPAREs for its hash: lock, then COMMIT. */
  #checkPrepared(): void {
    const m = this.#store.peek(this.#round);
    const proposal = m?.proposal;
    if (!m || !proposal || this.#sent.commit !== null) return;
    const v = this.#v as ValidationContext;
    const prepares = m.preparesFor(proposal.block_hash);
    if (prepares.length < v.quorum) return;
    this.#locked = { round: this.#round, block: proposal.block, prepares: prepares.slice(0, v.quorum) };
    const ctx = this.#ctx as HeightContext;
    const seal = this.#cfg.sign(sealBytes(this.#cfg.chainId, ctx.height, this.#round, proposal.block_hash));
    const commit = this.#sign<CommitMessage>({
      ...this.#base('COMMIT'),
      block_hash: proposal.block_hash,
      seal,
    } as Omit<CommitMessage, 'signature'>);
    this.#sent.commit = commit;
    this.#persist();
    this.#out.push({ type: 'broadcast', msg: commit });
    this.#record(commit);
    this.#checkCommitted(this.#round);
  }

  #onCommit(msg: CommitMessage): void {
    if (this.#store.peek(msg.round)?.commits.has(msg.author)) return;
    if (!validateCommit(this.#v as ValidationContext, msg).ok) return;
    this.#record(msg);
    this.#checkCommitted(msg.round);
  }

  /** Committed = a quorum of COMMITs of one round for one known block, in any round (late quorums count). */
  #checkCommitted(round: number): void {
    if (this.#decided) return;
    const m = this.#store.peek(round);
    if (!m) return;
    const v = this.#v as ValidationContext;
    for (const [hash, commits] of m.commitsByHash()) {
      if (commits.length < v.quorum) continue;
      const block = this.#blocks.get(hash);
      if (!block) continue;
      this.#decided = true;
      const seals = commits
        .map((c) => ({ validator: c.author, round, signature: c.seal }))
        .sort((a, b) => (a.validator < b.validator ? -1 : 1));
      this.#out.push({ type: 'finalize', block: { ...block, commit_signatures: seals }, round });
      return;
    }
  }

  #onRoundChange(msg: RoundChangeMessage): void {
    if (msg.round < this.#round) return;
    if (this.#store.peek(msg.round)?.roundChanges.has(msg.author)) return;
    if (!validateRoundChange(this.#v as ValidationContext, msg).ok) return;
    this.#record(msg);
    const v = this.#v as ValidationContext;
    if (msg.round > this.#round) {
      // f+1 ROUND_CHANGEs for higher rounds: at least one honest node is there; join the lowest such round.
      const ahead = [...this.#store.futureRoundChangeAuthors(this.#round).values()].sort((a, b) => b - a);
      const f = maxFaulty(v.members.size);
      if (ahead.length >= f + 1) {
        const target = ahead[f] as number;
        this.#enterRound(target);
        this.#sendRoundChange();
      }
    }
    const rcs = this.#store.peek(msg.round)?.roundChanges;
    if (rcs && rcs.size >= v.quorum && msg.round > this.#round) {
      // A quorum wants this round: adopt it.
      this.#enterRound(msg.round);
      this.#sendRoundChange();
    }
    this.#tryPropose();
  }

  #sendRoundChange(): void {
    if (this.#sent.roundChange !== null || this.#round === 0) return;
    const locked = this.#locked;
    const unsigned = {
      ...this.#base('ROUND_CHANGE'),
      prepared_round: locked ? locked.round : null,
      prepared_hash: locked ? blockHash(locked.block.header) : null,
    };
    const signed = this.#sign<RoundChangeMessage>(unsigned as Omit<RoundChangeMessage, 'signature'>);
    const rc: RoundChangeMessage = locked
      ? { ...signed, prepared_block: locked.block, prepares: locked.prepares }
      : signed;
    this.#sent.roundChange = rc;
    this.#persist();
    this.#out.push({ type: 'broadcast', msg: rc });
    this.#record(rc);
    this.#tryPropose();
  }

  /** As proposer of a round > 0 with a quorum of ROUND_CHANGEs: re-propose the highest prepared block, or a new one. */
  #tryPropose(): void {
    const r = this.#round;
    if (r === 0 || this.#decided || this.#sent.proposal !== null || !this.#isProposer(r)) return;
    if (this.#pendingProposal?.round === r) return;
    const v = this.#v as ValidationContext;
    const rcs = [...(this.#store.peek(r)?.roundChanges.values() ?? [])];
    if (rcs.length < v.quorum) return;
    const highest = highestPrepared(rcs);
    const justification: RoundChangeCertificate = {
      round_changes: rcs.map(roundChangeCore),
      prepares: highest?.prepares ?? [],
    };
    if (highest === null) {
      this.#pendingProposal = { round: r, justification };
      const ctx = this.#ctx as HeightContext;
      this.#out.push({ type: 'request-proposal', height: ctx.height, round: r });
      return;
    }
    const block = highest.prepared_block as Block;
    this.#propose(block, justification);
  }

  #propose(block: Block, justification: RoundChangeCertificate | undefined): void {
    const unsigned = { ...this.#base('PRE-PREPARE'), block_hash: blockHash(block.header) };
    const signed = this.#sign<PrePrepareMessage>(unsigned as Omit<PrePrepareMessage, 'signature'>);
    const msg: PrePrepareMessage = justification ? { ...signed, block, justification } : { ...signed, block };
    this.#sent.proposal = msg;
    this.#pendingProposal = null;
    this.#persist();
    this.#out.push({ type: 'broadcast', msg });
    this.#acceptProposal(msg);
  }

  #onProposalReady(height: number, round: number, block: Block): void {
    const ctx = this.#ctx;
    if (ctx === null || !this.#running || this.#decided) return;
    if (height !== ctx.height || round !== this.#round || this.#sent.proposal !== null) return;
    if (!this.#isProposer(round)) return;
    let justification: RoundChangeCertificate | undefined;
    if (round > 0) {
      if (this.#pendingProposal?.round !== round) return;
      justification = this.#pendingProposal.justification;
    }
    const h = block.header;
    if (
      h.chain_id !== this.#cfg.chainId ||
      h.height !== ctx.height ||
      h.parent_hash !== ctx.parentHash ||
      h.proposer !== this.#cfg.self ||
      block.commit_signatures.length !== 0 ||
      !checkBody(block).ok
    ) {
      return;
    }
    this.#propose(block, justification);
  }

  #onTimeout(height: number, round: number): void {
    const ctx = this.#ctx;
    if (ctx === null || !this.#running || this.#decided) return;
    if (height !== ctx.height || round !== this.#round) return;
    this.#enterRound(round + 1);
    this.#sendRoundChange();
  }
}
