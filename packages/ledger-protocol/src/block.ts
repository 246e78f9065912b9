import { sha256 as platformSha256, sha256Hex as platformSha256Hex } from '#platform-crypto';
import type { MerkleProofBody } from './bodies.ts';
import { canonicalBytes } from './canonical-json.ts';
import { toHex } from './hex.ts';
import { merkleProof, merkleRootBytes, nodeHash, type ProofStep, pathShape, type Sha256 } from './merkle.ts';
import { leafData } from './proof.ts';
import {
  type Block,
  type BlockHeader,
  GENESIS_PARENT_HASH,
  type IntegrityRecord,
  type ValidatorChange,
} from './schemas.ts';

/**
 * The block hash: SHA-256 of the header's RFC 8785 form. The round is not in the header, so a
 * block re-proposed after a round change keeps its hash.
 */
export function blockHash(header: BlockHeader, sha?: Sha256): string {
  const bytes = canonicalBytes(header);
  return sha === undefined ? platformSha256Hex(bytes) : toHex(sha(bytes));
}

/**
 * Merkle root of a block body: SHA-256(0x01 ‖ MTH(records) ‖ MTH(changes)), the records' and the changes' RFC 6962
 * trees joined by one interior node (an empty list's MTH is SHA-256 of nothing). The changes get their own subtree
 * so that a light client proves a membership block's changes in log2(changes) + 1 steps, without its records.
 */
export function bodyRoot(
  records: readonly IntegrityRecord[],
  changes: readonly ValidatorChange[],
  sha: Sha256 = platformSha256,
): string {
  return toHex(nodeHash(merkleRootBytes(records.map(leafData), sha), merkleRootBytes(changes.map(leafData), sha), sha));
}

/**
 * The `prev_membership_height` a child of `parent` must carry: the parent's height when the parent carried validator
 * changes, else the parent's own pointer. Derived from the parent alone, so every link check can verify it.
 * @example buildBlock({ ..., prevMembershipHeight: membershipPointerAfter(tip.header) })
 */
export function membershipPointerAfter(parent: BlockHeader): number {
  return parent.change_count > 0 ? parent.height : parent.prev_membership_height;
}

export interface BuildBlockInput {
  chainId: string;
  height: number;
  parentHash: string;
  proposer: string;
  timestamp: number;
  records: readonly IntegrityRecord[];
  changes: readonly ValidatorChange[];
  /** The parent's `membershipPointerAfter` (0 at height 1). */
  prevMembershipHeight: number;
}

/** A block without commit seals (what a proposer puts in PRE-PREPARE). */
export function buildBlock(input: BuildBlockInput): Block {
  return {
    header: {
      chain_id: input.chainId,
      height: input.height,
      parent_hash: input.parentHash,
      merkle_root: bodyRoot(input.records, input.changes),
      proposer: input.proposer,
      timestamp: input.timestamp,
      record_count: input.records.length,
      change_count: input.changes.length,
      prev_membership_height: input.prevMembershipHeight,
    },
    records: [...input.records],
    validator_changes: [...input.changes],
    commit_signatures: [],
  };
}

/**
 * Block 0: one ADD per initial validator (sorted, de-duplicated), no seals. Every node must build the
 * same genesis from the same keys, chain id and timestamp; its hash identifies the chain.
 * @example const g = buildGenesis([pkA, pkB, pkC, pkD], 'scriptorium-dev')
 */
export function buildGenesis(validatorKeys: readonly string[], chainId: string, timestamp = 0): Block {
  const keys = [...new Set(validatorKeys)].sort();
  if (keys.length === 0) throw new RangeError('genesis needs at least one validator');
  return buildBlock({
    chainId,
    height: 0,
    parentHash: GENESIS_PARENT_HASH,
    proposer: '',
    timestamp,
    records: [],
    changes: keys.map((validator) => ({ action: 'ADD', validator })),
    prevMembershipHeight: 0,
  });
}

export type BodyCheck = { ok: true } | { ok: false; reason: string };

/**
 * The header's counts and Merkle root match the body, record ids are unique, and records and validator changes
 * keep their disjoint required fields (a record has a string `id`; a change has exactly `action` and `validator`),
 * so no leaf can stand for both.
 */
export function checkBody(block: Block, sha: Sha256 = platformSha256): BodyCheck {
  if (block.header.record_count !== block.records.length) return { ok: false, reason: 'record_count mismatch' };
  if (block.header.change_count !== block.validator_changes.length) {
    return { ok: false, reason: 'change_count mismatch' };
  }
  for (const c of block.validator_changes) {
    const keys = Object.keys(c);
    if (keys.length !== 2 || !('action' in c) || !('validator' in c))
      return { ok: false, reason: 'a validator change holds fields other than action and validator' };
  }
  if (bodyRoot(block.records, block.validator_changes, sha) !== block.header.merkle_root) {
    return { ok: false, reason: 'merkle_root mismatch' };
  }
  const ids = new Set<string>();
  for (const r of block.records) {
    if (typeof r.id !== 'string') return { ok: false, reason: 'a record without a string id' };
    if (ids.has(r.id)) return { ok: false, reason: `duplicate record id ${r.id}` };
    ids.add(r.id);
  }
  return { ok: true };
}

/** `block` extends `parent`: same chain, next height, parent hash links. */
export function checkLink(parent: Block, block: Block): BodyCheck {
  if (block.header.chain_id !== parent.header.chain_id) return { ok: false, reason: 'chain_id mismatch' };
  if (block.header.height !== parent.header.height + 1) return { ok: false, reason: 'height is not parent + 1' };
  if (block.header.parent_hash !== blockHash(parent.header)) return { ok: false, reason: 'parent_hash mismatch' };
  const pointer = membershipPointerAfter(parent.header);
  if (block.header.prev_membership_height !== pointer)
    return {
      ok: false,
      reason: `prev_membership_height is ${block.header.prev_membership_height}, the chain's last membership block before it is ${pointer}`,
    };
  return { ok: true };
}

/**
 * Builds the proof of one record (or validator change) of a block; null when the index does not exist (→ 404).
 * The path climbs the records' (or the changes') RFC 6962 tree, then one step joins the other subtree.
 * @example const body = proofFor(block, 3); verifyProof(body) === true
 */
export function proofFor(
  block: Block,
  index: number,
  kind: 'record' | 'validator_change' = 'record',
  sha: Sha256 = platformSha256,
): MerkleProofBody | null {
  const list: readonly unknown[] = kind === 'record' ? block.records : block.validator_changes;
  if (!Number.isInteger(index) || index < 0 || index >= list.length) return null;
  const records = block.records.map(leafData);
  const changes = block.validator_changes.map(leafData);
  const proof: ProofStep[] =
    kind === 'record'
      ? [...merkleProof(records, index, sha), { sibling: toHex(merkleRootBytes(changes, sha)), right: true }]
      : [...merkleProof(changes, index, sha), { sibling: toHex(merkleRootBytes(records, sha)), right: false }];
  return {
    height: block.header.height,
    index,
    merkle_root: block.header.merkle_root,
    block_hash: blockHash(block.header, sha),
    record: list[index] as MerkleProofBody['record'],
    proof,
  };
}

/**
 * The `right` flags, leaf upwards, that a proof of item `index` of a block with this header must have: the path
 * shape of that position in its subtree, then the step that joins the other subtree. Checking a proof's flags
 * against it binds the proof to that exact position (and so to the item's place among the changes).
 * @example proofShape(header, 'validator_change', 0) // [..., false]
 */
export function proofShape(header: BlockHeader, kind: 'record' | 'validator_change', index: number): boolean[] {
  return kind === 'record'
    ? [...pathShape(index, header.record_count), true]
    : [...pathShape(index, header.change_count), false];
}

/**
 * The genesis file's content, byte for byte what `ledger-node genesis` writes and the operator's genesis
 * ConfigMap holds: block 0 pretty-printed with a final newline.
 * @example writeFileSync('genesis.json', genesisFileContent(keys, 'prod', Date.now()))
 */
export function genesisFileContent(validatorKeys: readonly string[], chainId: string, timestamp: number): string {
  return `${JSON.stringify(buildGenesis(validatorKeys, chainId, timestamp), null, 2)}\n`;
}

/**
 * A block is a valid block 0: height 0, the zero parent and membership pointer, no seals, at least one change and
 * only ADDs, a body that matches its header.
 */
export function checkGenesis(block: Block, sha?: Sha256): BodyCheck {
  if (block.header.height !== 0) return { ok: false, reason: 'height is not 0' };
  if (block.header.parent_hash !== GENESIS_PARENT_HASH) return { ok: false, reason: 'parent_hash is not zero' };
  if (block.header.prev_membership_height !== 0) return { ok: false, reason: 'prev_membership_height is not 0' };
  if (block.records.length !== 0) return { ok: false, reason: 'block 0 holds records' };
  if (block.commit_signatures.length !== 0) return { ok: false, reason: 'block 0 holds commit seals' };
  if (block.validator_changes.length === 0) return { ok: false, reason: 'no validator' };
  if (block.validator_changes.some((c) => c.action !== 'ADD')) return { ok: false, reason: 'a change is not ADD' };
  return checkBody(block, sha);
}
