// The proposal scheduler: when this node, the proposer of a round, builds its block. It keeps the open height's
// clock (when it opened, since when work — records or validator changes — is pending) and the one proposal it
// was asked for and has not built yet: with work pending it waits the batching delay; idle, until the
// empty-block interval has passed since the height opened (or, interval 0, until work arrives); after a round
// change at once. The block is built from the mempool and the pending validator changes and handed back to the
// driver's loop (`proposal-ready`). It also tells the round timers whether the chain is busy (an idle chain
// never changes rounds).
import { type Block, buildBlock, MAX_CHANGES_PER_BLOCK, membershipPointerAfter } from '@scriptorium/ledger-protocol';
import type { Mempool } from '../mempool/index.ts';
import type { ChainState } from './chain-state.ts';
import type { Clock, Timers } from './ports.ts';

export interface ProposalSettings {
  /**
   * Batching: a proposer proposes this long after records (or validator changes) are pending — after it was
   * asked for a block when they already were, else after the first arrived — and records arriving meanwhile join
   * the block (up to its limits). 0 = at once. NODE_CONSENSUS__BLOCK_DELAY_MS, a LedgerCluster's
   * `consensus.blockIntervalMs`.
   */
  blockDelayMs: number;
  /**
   * An idle chain (no records or validator changes pending) proposes an empty block this long after the
   * height opened; 0 = never (a block only when work arrives). Like CometBFT's create_empty_blocks_interval
   * and Besu's empty block period. Round timers run only while the chain is busy (below).
   */
  emptyBlockIntervalMs: number;
  maxBlockRecords: number;
  maxBlockBytes: number;
}

/**
 * How long a proposer asked for a block waits before building it: with work pending, the batching delay;
 * after a round change, at once (the chain was busy: that is why the round changed); when idle, until the
 * empty-block interval has passed since the height opened, or (interval 0) until work arrives: undefined.
 */
export function proposalDelayMs(
  hasWork: boolean,
  round: number,
  openForMs: number,
  settings: Pick<ProposalSettings, 'blockDelayMs' | 'emptyBlockIntervalMs'>,
): number | undefined {
  if (hasWork) return settings.blockDelayMs;
  if (round > 0) return 0;
  if (settings.emptyBlockIntervalMs === 0) return undefined;
  return Math.max(0, settings.emptyBlockIntervalMs - openForMs);
}

/**
 * When a round timer that fires at `now` may count: a round's time runs only while the chain is busy,
 * from the moment it became busy (work arrived, or the empty-block interval passed). Returns 0 to let the
 * timeout through, or how much longer to wait. An idle chain never changes rounds; a proposer that stays
 * silent while work is pending is replaced after a full round timeout.
 */
export function roundTimerWait(now: number, afterMs: number, busySince: number | undefined): number {
  if (busySince === undefined || busySince > now) return afterMs;
  return Math.max(0, busySince + afterMs - now);
}

export interface SchedulerDeps {
  /** This node's public key (the block's proposer). */
  self: string;
  chain: ChainState;
  mempool: Mempool;
  clock: Clock;
  timers: Timers;
  settings: ProposalSettings;
  /** The driver runs an engine (a proposal is built only then: building takes records out of the mempool). */
  running(): boolean;
  /** A block is built for (height, round): the driver feeds it to the engine, if it still runs one. */
  ready(height: number, round: number, block: Block): void;
}

interface Pending {
  height: number;
  round: number;
  cancel: (() => void) | undefined;
  /** Records or changes are pending: the batching delay runs. */
  batching: boolean;
  /** When the block is due (undefined: no interval, it waits for work). */
  dueAt: number | undefined;
}

export class ProposalScheduler {
  readonly #deps: SchedulerDeps;
  #pending: Pending | undefined;
  #openedHeight = -1;
  #openedAt: number;
  #workSince: number | undefined;

  constructor(deps: SchedulerDeps) {
    this.#deps = deps;
    this.#openedAt = deps.clock.now();
  }

  hasWork(): boolean {
    return this.#deps.mempool.size > 0 || this.#deps.mempool.pendingChanges > 0;
  }

  /** The chain moved: a new height opens now (its clock starts), and a proposal for a decided height is dropped. */
  heightChanged(): void {
    const { chain, clock } = this.#deps;
    if (chain.height !== this.#openedHeight) {
      this.#openedHeight = chain.height;
      this.#openedAt = clock.now();
      this.#workSince = this.hasWork() ? this.#openedAt : undefined;
    }
    if (this.#pending && this.#pending.height <= chain.height) this.cancel();
  }

  /** Since when the chain is busy at this height (undefined: idle, no interval running out). */
  busySince(): number | undefined {
    const { clock, settings } = this.#deps;
    if (this.hasWork()) this.#workSince ??= clock.now();
    const intervalAt =
      settings.emptyBlockIntervalMs > 0 ? this.#openedAt + settings.emptyBlockIntervalMs : Number.POSITIVE_INFINITY;
    const since = Math.min(this.#workSince ?? Number.POSITIVE_INFINITY, intervalAt);
    return Number.isFinite(since) && since <= clock.now() ? since : undefined;
  }

  /** The engine asks this node for the block of (height, round). */
  request(height: number, round: number): void {
    const { chain, clock, settings } = this.#deps;
    if (height !== chain.height + 1) return;
    this.cancel();
    const work = this.hasWork();
    const wait = proposalDelayMs(work, round, clock.now() - this.#openedAt, settings);
    this.#pending = {
      height,
      round,
      cancel: undefined,
      batching: work,
      dueAt: wait === undefined ? undefined : clock.now() + wait,
    };
    this.#schedule(wait);
  }

  /**
   * New work in the mempool. While the proposer waited idle, the block is built once the batching delay has
   * passed since then (or when the empty-block interval runs out, if that is sooner), so records arriving
   * together share a block. Work arriving while the batching delay already runs changes nothing.
   */
  workArrived(): void {
    if (!this.hasWork()) return;
    const { clock, settings } = this.#deps;
    this.#workSince ??= clock.now();
    const p = this.#pending;
    if (!p || p.batching || !this.#deps.running()) return;
    p.batching = true;
    const now = clock.now();
    const wait = Math.min(settings.blockDelayMs, p.dueAt === undefined ? Number.POSITIVE_INFINITY : p.dueAt - now);
    p.dueAt = now + Math.max(0, wait);
    this.#schedule(Math.max(0, wait));
  }

  cancel(): void {
    this.#pending?.cancel?.();
    this.#pending = undefined;
  }

  #schedule(wait: number | undefined): void {
    const p = this.#pending;
    if (!p) return;
    p.cancel?.();
    p.cancel = undefined;
    if (wait === 0) this.#proposeNow();
    else if (wait !== undefined) p.cancel = this.#deps.timers.after(wait, () => this.#proposeNow());
  }

  #proposeNow(): void {
    const p = this.#pending;
    if (!p) return;
    this.cancel();
    const { chain, mempool, clock, settings, self } = this.#deps;
    if (!this.#deps.running() || p.height !== chain.height + 1) return;
    const parent = chain.tip();
    const block = buildBlock({
      chainId: chain.chainId,
      height: p.height,
      parentHash: chain.tipHash,
      prevMembershipHeight: membershipPointerAfter(parent.header),
      proposer: self,
      timestamp: Math.max(clock.now(), parent.header.timestamp),
      records: mempool.take(settings.maxBlockRecords, settings.maxBlockBytes),
      changes: mempool.takeChanges(chain.activeSetAt(p.height), MAX_CHANGES_PER_BLOCK),
    });
    this.#deps.ready(p.height, p.round, block);
  }
}
