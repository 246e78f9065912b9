// The block applier: how a finalized block becomes part of this node, whichever way it came (this node's
// consensus, a peer's push, pull sync), in one order:
//   1. chain state: chain.append — the durable append to the block storage (fsync) and the indexes (validator
//      timeline, committed ids); one call, so what the chain state keeps per block stays in one place;
//   2. mempool: its records and validator changes leave it (their time in it → finality_latency_seconds);
//   3. membership: a block that changes the validator set re-evaluates this node's role (metric, log);
//   4. notifications: the listeners (broker memory, tamper notifier) get the block, durable and in height order;
//   5. consensus: a block the driver did not finalize moves the driver on (onExternalCommit). Last, because the
//      driver may finalize the next height at once (its quorum was buffered) and apply it from inside this call:
//      its listeners must have had this block first.
// `receive` is block receipt (POST /block and pulled blocks): the height checks and the full verification
// (chain-state verifyNext) before `apply`. The node and the simulator both run this class.
import type { Block } from '@scriptorium/ledger-protocol';
import type { Mempool } from '../mempool/index.ts';
import type { ChainState } from './chain-state.ts';
import type { ApplierMetrics, Log } from './ports.ts';

/** Where a finalized block came from: this node's consensus, a peer's push, or pull sync. */
export type BlockOrigin = 'consensus' | 'push' | 'pull';

/** What became of a block from a peer. */
export type Receipt =
  | { height: number; status: 'applied' | 'known' | 'ahead' }
  | { height: number; status: 'refused'; reason: string };

export type FinalizedListener = (block: Block, origin: BlockOrigin) => void;

export interface ApplierDeps {
  /** This node's public key (its role). */
  self: string;
  chain: ChainState;
  mempool: Mempool;
  metrics: ApplierMetrics;
  log: Log;
  /** Tells the consensus driver that the chain grew by a block it did not finalize. */
  onExternalCommit: () => void;
  /** A peer's block is more than one height ahead: this node is behind (start pull sync). */
  onBehind: () => void;
}

export class BlockApplier {
  protected readonly deps: ApplierDeps;
  readonly #listeners: FinalizedListener[] = [];

  constructor(deps: ApplierDeps) {
    this.deps = deps;
  }

  /** Called with every block this node appends, after it is durable, in height order. */
  onFinalized(listener: FinalizedListener): void {
    this.#listeners.push(listener);
  }

  /** Commits a verified next block: chain state, mempool, membership, notifications, consensus (above). */
  apply(block: Block, origin: BlockOrigin): void {
    this.appendToChain(block);
    this.pruneMempool(block);
    this.updateMembership(block);
    this.handOff(block, origin);
    if (origin !== 'consensus') this.resumeConsensus();
  }

  /**
   * A block from a peer (pushed, or pulled by sync): `known` at or below the tip, `ahead` (and sync started)
   * beyond the next height, else fully verified and applied, or `refused` with the reason.
   */
  receive(body: unknown, origin: 'push' | 'pull'): Receipt {
    const { chain } = this.deps;
    const height = (body as { header?: { height?: unknown } } | null)?.header?.height;
    if (typeof height !== 'number' || !Number.isInteger(height) || height < 0)
      return { height: -1, status: 'refused', reason: 'malformed block: header.height' };
    if (height <= chain.height) return { height, status: 'known' };
    if (height > chain.height + 1) {
      this.deps.onBehind();
      return { height, status: 'ahead' };
    }
    const verdict = chain.verifyNext(body);
    if (!verdict.ok) return { height, status: 'refused', reason: verdict.reason };
    this.apply(verdict.block, origin);
    return { height, status: 'applied' };
  }

  protected appendToChain(block: Block): void {
    this.deps.chain.append(block);
  }

  protected pruneMempool(block: Block): void {
    const { mempool, metrics } = this.deps;
    const ages = mempool.removeCommitted(block.records, block.validator_changes);
    for (const age of ages) metrics.finalityLatency.observe(age / 1000);
    metrics.recordsFinalized.inc(block.records.length);
    metrics.height.set(block.header.height);
    metrics.mempoolSize.set(mempool.size);
  }

  protected updateMembership(block: Block): void {
    if (block.validator_changes.length === 0) return;
    const { chain, metrics, log, self } = this.deps;
    const validator = chain.activeSetAt(chain.height + 1).includes(self);
    metrics.isValidator.set(validator ? 1 : 0);
    for (const c of block.validator_changes)
      log.info(
        { height: block.header.height, action: c.action, validator: c.validator.slice(0, 16) },
        'validator change',
      );
  }

  protected resumeConsensus(): void {
    this.deps.onExternalCommit();
  }

  protected handOff(block: Block, origin: BlockOrigin): void {
    this.deps.log.debug({ height: block.header.height, records: block.records.length, origin }, 'block finalized');
    for (const listener of this.#listeners) {
      try {
        listener(block, origin);
      } catch (err) {
        this.deps.log.error({ err, height: block.header.height }, 'finalized-block listener failed');
      }
    }
  }
}
