// Does the simulator catch a broken block applier? Each case plants one bug in the production applier
// (src/node/applier.ts) by handing the simulator a subclass (RunOptions.applier: constructor injection, nothing
// in the shipped code paths), runs the same seeds, and expects the checkers to flag it; the control runs the
// unmodified applier on the same seeds and expects them all to pass.
import type { Block } from '@scriptorium/ledger-protocol';
import { describe, expect, it } from 'vitest';
import { type ApplierDeps, BlockApplier, type BlockOrigin } from '../src/node/applier.ts';
import { runSeed } from './simulator.ts';

const SEEDS = Array.from({ length: 40 }, (_, i) => i);

/** The driver is never told about a pushed or pulled block: a node that fell behind stays out of consensus. */
class ForgetsTheDriver extends BlockApplier {
  protected override resumeConsensus(): void {}
}

/** Committed records and validator changes stay in the mempool: the proposer keeps offering them. */
class KeepsTheMempool extends BlockApplier {
  protected override pruneMempool(): void {}
}

/** The listeners (notifier, broker memory) get a block before it is durable. */
class HandsOffBeforeStoring extends BlockApplier {
  override apply(block: Block, origin: BlockOrigin): void {
    this.handOff(block, origin);
    this.appendToChain(block);
    this.pruneMempool(block);
    this.updateMembership(block);
    if (origin !== 'consensus') this.resumeConsensus();
  }
}

/** Pulled blocks are stored but never handed to the listeners: their tamper notifications are lost. */
class SkipsPulledHandOff extends BlockApplier {
  protected override handOff(block: Block, origin: BlockOrigin): void {
    if (origin !== 'pull') super.handOff(block, origin);
  }
}

/**
 * The order the node had before the applier: the driver first, then the listeners. A driver that finalizes the
 * next height at once (its quorum was buffered) applies it from inside the call, and the listeners get h + 1
 * before h.
 */
class ResumesBeforeHandOff extends BlockApplier {
  override apply(block: Block, origin: BlockOrigin): void {
    this.appendToChain(block);
    this.pruneMempool(block);
    this.updateMembership(block);
    if (origin !== 'consensus') this.resumeConsensus();
    this.handOff(block, origin);
  }
}

/** The checkers' findings over SEEDS, up to the first failing seed when `firstOnly`. */
function failures(applier?: (deps: ApplierDeps) => BlockApplier, firstOnly = false): string[] {
  const errors: string[] = [];
  for (const seed of SEEDS) {
    const r = runSeed(seed, applier ? { applier } : {});
    if (!r.ok) errors.push(...r.errors.map((e) => `seed ${seed}: ${e}`));
    if (firstOnly && errors.length > 0) break;
  }
  return errors;
}

describe(`the simulator catches a bug planted in the block applier (seeds ${SEEDS[0]}–${SEEDS.at(-1)})`, () => {
  it('control: the production applier passes every seed', { timeout: 120_000 }, () => {
    expect(failures()).toEqual([]);
  });

  it.each([
    ['the driver is never told about pushed and pulled blocks', ForgetsTheDriver, /stuck at height/],
    ['the mempool is never pruned', KeepsTheMempool, /stuck at height/],
    ['listeners get a block before it is stored', HandsOffBeforeStoring, /to its listeners before storing it/],
    [
      'pulled blocks never reach the listeners',
      SkipsPulledHandOff,
      /handed (block \d+ to its listeners after|its listeners only)/,
    ],
    ['the driver resumes before the listeners get the block', ResumesBeforeHandOff, /to its listeners after block/],
  ] as const)('%s', { timeout: 120_000 }, (_name, Planted, caughtBy) => {
    const errors = failures((deps) => new Planted(deps), true);
    expect(errors.length).toBeGreaterThan(0);
    expect(
      errors.some((e) => caughtBy.test(e)),
      errors.slice(0, 5).join('\n'),
    ).toBe(true);
  });
});
