// The node's view of the finalized chain: the block store, the validator timeline and an index of
// committed record ids. Blocks from the network are verified here before they are stored:
// schema, link to the parent, Merkle root and counts, and the finality certificate against the set
// active at that block's height.
import {
  Block,
  blockHash,
  checkBody,
  checkLink,
  createValidatorTimeline,
  proofFor,
  type ValidatorTimeline,
  verifyFinality,
} from '@scriptorium/ledger-protocol';
import { NodeError } from '../errors.ts';
import { BlockStore } from '../storage/index.ts';

export type Verdict = { ok: true; block: Block } | { ok: false; reason: string };

export class ChainState {
  readonly store: BlockStore<Block>;
  readonly timeline: ValidatorTimeline;
  private readonly committed = new Map<string, number>();
  private tipHashCache: string;

  private constructor(store: BlockStore<Block>, timeline: ValidatorTimeline) {
    this.store = store;
    this.timeline = timeline;
    this.tipHashCache = blockHash((store.tip() as Block).header);
  }

  /** Opens the data dir; a fresh one gets the genesis block, an existing one must hold the same genesis. */
  static open(dataDir: string, genesis: Block): { chain: ChainState; truncatedBytes: number } {
    const loaded: Block[] = [];
    const { store, truncatedBytes } = BlockStore.open<Block>(dataDir, (block) => loaded.push(block));
    if (store.length === 0) {
      store.append(0, genesis);
      loaded.push(genesis);
    } else if (blockHash((store.get(0) as Block).header) !== blockHash(genesis.header)) {
      throw new NodeError('config', `data directory ${dataDir} holds a different chain (genesis hash differs)`);
    }
    const timeline = createValidatorTimeline(genesis);
    const chain = new ChainState(store, timeline);
    for (const block of loaded) {
      if (block.header.height > 0) timeline.append(block);
      chain.index(block);
    }
    return { chain, truncatedBytes };
  }

  private index(block: Block): void {
    const h = block.header.height;
    for (const r of block.records) this.committed.set(r.id, h);
  }

  get height(): number {
    return this.store.tipHeight;
  }

  get tipHash(): string {
    return this.tipHashCache;
  }

  get chainId(): string {
    return (this.store.get(0) as Block).header.chain_id;
  }

  tip(): Block {
    return this.store.tip() as Block;
  }

  get(height: number): Block | undefined {
    return this.store.get(height);
  }

  isCommitted(id: string): boolean {
    return this.committed.has(id);
  }

  /** Active set at a height up to tip + 1. */
  activeSetAt(height: number): readonly string[] {
    return this.timeline.at(height);
  }

  /** Full verification of a candidate for the next height. */
  verifyNext(data: unknown): Verdict {
    const parsed = Block.safeParse(data);
    if (!parsed.success)
      return {
        ok: false,
        reason: `malformed block: ${parsed.error.issues[0]?.path.join('.')} ${parsed.error.issues[0]?.message}`,
      };
    const block = parsed.data;
    if (block.header.height !== this.height + 1)
      return { ok: false, reason: `height ${block.header.height} is not ${this.height + 1}` };
    const link = checkLink(this.tip(), block);
    if (!link.ok) return link;
    const body = checkBody(block);
    if (!body.ok) return body;
    for (const r of block.records)
      if (this.committed.has(r.id)) return { ok: false, reason: `record ${r.id} already committed` };
    const fin = verifyFinality(block, this.timeline.at(block.header.height));
    if (!fin.ok) return { ok: false, reason: `finality certificate: ${fin.reason}` };
    return { ok: true, block };
  }

  /** Link and finality certificate only, for a block whose body the local engine already validated. */
  verifyFinalized(block: Block): Verdict {
    if (block.header.height !== this.height + 1) {
      return { ok: false, reason: `height ${block.header.height} is not ${this.height + 1}` };
    }
    const link = checkLink(this.tip(), block);
    if (!link.ok) return link;
    if (
      block.header.record_count !== block.records.length ||
      block.header.change_count !== block.validator_changes.length
    ) {
      return { ok: false, reason: 'counts do not match the body' };
    }
    const fin = verifyFinality(block, this.timeline.at(block.header.height));
    if (!fin.ok) return { ok: false, reason: `finality certificate: ${fin.reason}` };
    return { ok: true, block };
  }

  /** Durably appends an already verified next block (fsync) and updates the indexes. */
  append(block: Block): void {
    this.store.append(block.header.height, block);
    this.timeline.append(block);
    this.index(block);
    this.tipHashCache = blockHash(block.header);
  }

  proof(height: number, index: number): ReturnType<typeof proofFor> | undefined {
    const block = this.get(height);
    if (!block) return undefined;
    return proofFor(block, index) ?? undefined;
  }

  close(): void {
    this.store.close();
  }
}
