// The node's view of the finalized chain: the block storage (a port: the file WAL in production, memory in
// the simulator), the validator timeline and the compact set of committed record ids. Blocks from the network
// are verified here before they are stored: schema, link to the parent, Merkle root and counts, and the finality
// certificate against the set active at that block's height. What it keeps in memory besides the storage's own
// cache is the tip block, the timeline, the id set (8 bytes a slot) and the light-evidence form of the blocks that
// changed the validator set (a few KB each, built when first asked for): no block or record beyond those.
import {
  Block,
  blockHash,
  blockLeafData,
  checkBody,
  checkLink,
  createValidatorTimeline,
  type LightEvidence,
  LogTree,
  lightEvidence,
  type MembershipEvidence,
  membershipBelow,
  membershipEvidence,
  proofFor,
  type ValidatorTimeline,
  type Verify,
  verifyFinality,
  verifySignature,
} from '@scriptorium/ledger-protocol';
import { NodeError } from '../errors.ts';
import type { BlockStorage } from '../storage/index.ts';
import { CommittedIds } from './committed-ids.ts';

export type Verdict = { ok: true; block: Block } | { ok: false; reason: string };

export class ChainState {
  readonly store: BlockStorage<Block>;
  readonly timeline: ValidatorTimeline;
  private readonly verify: Verify;
  private readonly committed: CommittedIds;
  private tipBlock: Block;
  private tipHashCache: string;
  private readonly chainIdValue: string;
  readonly genesisHash: string;
  /** Light-evidence entries of membership blocks, by height: immutable once final, so built once. */
  private readonly membership = new Map<number, MembershipEvidence>();
  /**
   * The chain as a transparency log: leaf i is block i's hash (RFC 6962, about 64 bytes a block), the tree every
   * checkpoint's root and proofs come from.
   */
  readonly log = new LogTree();

  private constructor(store: BlockStorage<Block>, timeline: ValidatorTimeline, verify: Verify) {
    this.store = store;
    this.timeline = timeline;
    this.verify = verify;
    this.tipBlock = store.get(store.length - 1) as Block;
    this.tipHashCache = blockHash(this.tipBlock.header);
    const genesis = store.get(0) as Block;
    this.chainIdValue = genesis.header.chain_id;
    this.genesisHash = blockHash(genesis.header);
    this.committed = new CommittedIds((id, height) => this.get(height)?.records.some((r) => r.id === id) === true);
  }

  /**
   * Opens the chain on its storage: an empty one gets the genesis block, a used one must hold the same genesis.
   * `verify` checks commit seals: the node passes its signature cache (consensus `cachedVerify`).
   */
  static open(store: BlockStorage<Block>, genesis: Block, verify: Verify = verifySignature): ChainState {
    if (store.length === 0) store.append(0, genesis);
    else if (blockHash((store.get(0) as Block).header) !== blockHash(genesis.header))
      throw new NodeError('config', 'the block store holds a different chain (genesis hash differs)');
    const timeline = createValidatorTimeline(genesis);
    const chain = new ChainState(store, timeline, verify);
    for (let h = 0; h < store.length; h++) {
      const block = store.get(h) as Block;
      if (h > 0) timeline.append(block);
      chain.index(block);
      chain.log.appendData(blockLeafData(h === store.length - 1 ? chain.tipHashCache : blockHash(block.header)));
    }
    return chain;
  }

  private index(block: Block): void {
    const h = block.header.height;
    for (const r of block.records) this.committed.add(r.id, h);
  }

  /** Records on the chain, and the bytes their id set holds in memory. */
  get committedRecords(): { count: number; bytes: number } {
    return { count: this.committed.size, bytes: this.committed.bytes };
  }

  get height(): number {
    return this.store.length - 1;
  }

  get tipHash(): string {
    return this.tipHashCache;
  }

  get chainId(): string {
    return this.chainIdValue;
  }

  tip(): Block {
    return this.tipBlock;
  }

  get(height: number): Block | undefined {
    return height === this.height ? this.tipBlock : this.store.get(height);
  }

  /** The block's JSON text as stored (GET /blocks/{height} without a parse and a serialization), if the storage has it. */
  getJson(height: number): string | undefined {
    return this.store.getJson?.(height);
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
    const fin = verifyFinality(block, this.timeline.at(block.header.height), this.verify);
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
    const fin = verifyFinality(block, this.timeline.at(block.header.height), this.verify);
    if (!fin.ok) return { ok: false, reason: `finality certificate: ${fin.reason}` };
    return { ok: true, block };
  }

  /** Durably appends an already verified next block (fsync) and updates the indexes. */
  append(block: Block): void {
    this.store.append(block.header.height, block);
    this.timeline.append(block);
    this.index(block);
    this.tipBlock = block;
    this.tipHashCache = blockHash(block.header);
    this.log.appendData(blockLeafData(this.tipHashCache));
  }

  proof(height: number, index: number): ReturnType<typeof proofFor> | undefined {
    const block = this.get(height);
    if (!block) return undefined;
    return proofFor(block, index) ?? undefined;
  }

  /**
   * GET /evidence: record `index` of block `height` with everything a light client needs to verify it from the
   * genesis block alone; undefined when the block or the record does not exist.
   */
  evidence(height: number, index: number): LightEvidence | undefined {
    const block = this.get(height);
    if (!block) return undefined;
    return this.evidenceFor(block, index) ?? undefined;
  }

  /** Light evidence of a record of `block` (a finalized block at or below the tip, or the one being appended). */
  evidenceFor(block: Block, index: number): LightEvidence | null {
    return lightEvidence(this.genesisHash, this.membershipBelow(block), block, index);
  }

  /** The light-evidence entries of the membership blocks below `block`, oldest first (cached). */
  membershipBelow(block: Pick<Block, 'header'>): MembershipEvidence[] {
    return membershipBelow(block.header, (h) => {
      let entry = this.membership.get(h);
      if (entry === undefined) {
        const found = this.get(h);
        if (!found) throw new NodeError('storage_corrupt', `membership block ${h} is not stored`);
        entry = membershipEvidence(found);
        this.membership.set(h, entry);
      }
      return entry;
    });
  }

  close(): void {
    this.store.close();
  }
}
