/**
 * Verifying a chain without trusting the node that served it: from block 0, each block's link to its parent,
 * its body against its header, and its finality certificate against the validator set active at its height,
 * the set derived here from block 0 and the validator changes of the blocks before it (spec section 3, "Active
 * validator set"). Browser-safe: the browser console and `ledger-node verify-proof` run this same code.
 */
import { verifySignature } from '#platform-crypto';
import { blockHash, checkBody, checkGenesis, checkLink } from './block.ts';
import { type FinalityReport, finalityReport, type Verify } from './finality.ts';
import type { Sha256 } from './merkle.ts';
import type { Block } from './schemas.ts';
import { createValidatorTimeline, type ValidatorTimeline } from './validators.ts';

export type ChainStep = { ok: true } | { ok: false; height: number; reason: string };

/**
 * Walks a chain from block 0, one block at a time, verifying everything but block 0 itself (which the caller
 * trusts: compare its hash with the cluster's genesis). After `add(block h)`, `activeSetAt(h + 1)` is the set the
 * chain's own changes make active at h + 1.
 * @example
 * const v = new ChainVerifier(genesis);
 * for (const b of blocks) if (!v.add(b).ok) break;
 */
export class ChainVerifier {
  readonly genesis: Block;
  readonly genesisHash: string;
  readonly #timeline: ValidatorTimeline;
  readonly #verify: Verify;
  readonly #sha: Sha256 | undefined;
  #tip: Block;

  constructor(genesis: Block, verify: Verify = verifySignature, sha?: Sha256) {
    const g = checkGenesis(genesis, sha);
    if (!g.ok) throw new RangeError(`not a genesis block: ${g.reason}`);
    this.genesis = genesis;
    this.genesisHash = blockHash(genesis.header, sha);
    this.#timeline = createValidatorTimeline(genesis);
    this.#verify = verify;
    this.#sha = sha;
    this.#tip = genesis;
  }

  /** Height of the last block verified. */
  get height(): number {
    return this.#tip.header.height;
  }

  /** The active set at a height from 1 to height + 1. */
  activeSetAt(height: number): readonly string[] {
    return this.#timeline.at(height);
  }

  /**
   * Judges a candidate for the next height without taking it: its link to the tip, its body, and its finality
   * certificate seal by seal (`finality` is present once the link and body hold).
   */
  check(block: Block): ChainStep & { finality?: FinalityReport } {
    const h = block.header.height;
    const fail = (reason: string) => ({ ok: false as const, height: h, reason });
    if (h !== this.height + 1) return fail(`expected block ${this.height + 1}, got ${h}`);
    const link = checkLink(this.#tip, block);
    if (!link.ok) return fail(link.reason);
    const body = checkBody(block, this.#sha);
    if (!body.ok) return fail(body.reason);
    const finality = finalityReport(block, this.#timeline.at(h), this.#verify, this.#sha);
    if (!finality.ok) return { ...fail(`finality certificate: ${finality.reason}`), finality };
    return { ok: true, finality };
  }

  /** Verifies the next block (`check`) and, when it holds, takes it and its validator changes. */
  add(block: Block): ChainStep & { finality?: FinalityReport } {
    const verdict = this.check(block);
    if (!verdict.ok) return verdict;
    this.#timeline.append(block);
    this.#tip = block;
    return verdict;
  }
}

/**
 * Verifies `blocks` (block 0 first, consecutive heights) as one chain; the first failure, or ok.
 * @example verifyChain(await fetchBlocks(0, h)).ok
 */
export function verifyChain(blocks: readonly Block[], verify: Verify = verifySignature, sha?: Sha256): ChainStep {
  const [genesis, ...rest] = blocks;
  if (genesis === undefined) return { ok: false, height: 0, reason: 'no block 0' };
  let verifier: ChainVerifier;
  try {
    verifier = new ChainVerifier(genesis, verify, sha);
  } catch (err) {
    return { ok: false, height: 0, reason: (err as Error).message };
  }
  for (const block of rest) {
    const step = verifier.add(block);
    if (!step.ok) return step;
  }
  return { ok: true };
}
