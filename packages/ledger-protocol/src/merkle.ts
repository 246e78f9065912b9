/** RFC 6962 §2.1 Merkle Tree Hash and audit paths (no last-leaf duplication). */
import { sha256 as platformSha256 } from '#platform-crypto';
import { fromHex, toHex } from './hex.ts';

/** SHA-256 over the concatenation of parts. */
export type Sha256 = (...parts: Uint8Array[]) => Uint8Array;

/** One audit-path step: the sibling hash, and whether it sits to the right of the running hash. */
export interface ProofStep {
  sibling: string;
  right: boolean;
}

const LEAF_PREFIX = Uint8Array.of(0x00);
const NODE_PREFIX = Uint8Array.of(0x01);
const HASH_HEX = /^[0-9a-f]{64}$/;

/** RFC 6962 leaf hash: SHA-256(0x00 ‖ data). */
export function leafHash(data: Uint8Array, sha256: Sha256 = platformSha256): Uint8Array {
  return sha256(LEAF_PREFIX, data);
}

/** RFC 6962 interior node hash: SHA-256(0x01 ‖ left ‖ right). */
export function nodeHash(left: Uint8Array, right: Uint8Array, sha256: Sha256 = platformSha256): Uint8Array {
  return sha256(NODE_PREFIX, left, right);
}

/** Largest power of two strictly smaller than n (n ≥ 2). */
export function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

function mth(hashes: readonly Uint8Array[], lo: number, hi: number, sha: Sha256): Uint8Array {
  const n = hi - lo;
  if (n === 1) return hashes[lo] as Uint8Array;
  const k = splitPoint(n);
  return nodeHash(mth(hashes, lo, lo + k, sha), mth(hashes, lo + k, hi, sha), sha);
}

/**
 * MTH over the leaf data; the empty tree hashes to SHA-256(""). Computed bottom-up: pairing adjacent
 * nodes level by level and carrying an odd last node up unchanged gives exactly the RFC 6962 tree
 * (split at the largest power of two below n), with no duplication.
 */
export function merkleRootBytes(leaves: readonly Uint8Array[], sha: Sha256 = platformSha256): Uint8Array {
  if (leaves.length === 0) return sha(new Uint8Array(0));
  let level = leaves.map((l) => leafHash(l, sha));
  while (level.length > 1) {
    const next: Uint8Array[] = [];
    for (let i = 0; i + 1 < level.length; i += 2)
      next.push(nodeHash(level[i] as Uint8Array, level[i + 1] as Uint8Array, sha));
    if (level.length % 2 === 1) next.push(level[level.length - 1] as Uint8Array);
    level = next;
  }
  return level[0] as Uint8Array;
}

/** MTH as lower-case hex. */
export function merkleRoot(leaves: readonly Uint8Array[], sha: Sha256 = platformSha256): string {
  return toHex(merkleRootBytes(leaves, sha));
}

function path(hashes: readonly Uint8Array[], m: number, lo: number, hi: number, sha: Sha256, out: ProofStep[]) {
  const n = hi - lo;
  if (n <= 1) return;
  const k = splitPoint(n);
  if (m < k) {
    path(hashes, m, lo, lo + k, sha, out);
    out.push({ sibling: toHex(mth(hashes, lo + k, hi, sha)), right: true });
  } else {
    path(hashes, m - k, lo + k, hi, sha, out);
    out.push({ sibling: toHex(mth(hashes, lo, lo + k, sha)), right: false });
  }
}

/**
 * The audit path of leaf `index` (RFC 6962 PATH(m, D[n])), bottom-up, in the `{sibling, right}` format.
 * @example merkleProof(leaves, 2) // [{sibling: '…', right: false}, …]
 */
export function merkleProof(leaves: readonly Uint8Array[], index: number, sha: Sha256 = platformSha256): ProofStep[] {
  if (!Number.isInteger(index) || index < 0 || index >= leaves.length) throw new RangeError('leaf index out of range');
  const hashes = leaves.map((l) => leafHash(l, sha));
  const out: ProofStep[] = [];
  path(hashes, index, 0, hashes.length, sha, out);
  return out;
}

/**
 * The `right` flags of RFC 6962 PATH(index, D[size]), leaf upwards: the shape every audit path of that leaf has.
 * A proof whose flags differ proves some other position (or none).
 * @example pathShape(2, 5) // [true, false, true]
 */
export function pathShape(index: number, size: number): boolean[] {
  if (!Number.isInteger(index) || !Number.isInteger(size) || index < 0 || index >= size)
    throw new RangeError('leaf index out of range');
  let lo = 0;
  let hi = size;
  const topDown: boolean[] = [];
  while (hi - lo > 1) {
    const k = splitPoint(hi - lo);
    if (index - lo < k) {
      topDown.push(true);
      hi = lo + k;
    } else {
      topDown.push(false);
      lo += k;
    }
  }
  return topDown.reverse();
}

/** The root (hex) implied by a leaf hash and its audit path, or null when the path is malformed. */
export function rootFromPath(
  leaf: Uint8Array,
  proof: readonly ProofStep[],
  sha256: Sha256 = platformSha256,
): string | null {
  let acc = leaf;
  for (const step of proof) {
    if (typeof step !== 'object' || step === null) return null;
    if (typeof step.sibling !== 'string' || !HASH_HEX.test(step.sibling) || typeof step.right !== 'boolean') {
      return null;
    }
    const sibling = fromHex(step.sibling);
    acc = step.right ? nodeHash(acc, sibling, sha256) : nodeHash(sibling, acc, sha256);
  }
  return toHex(acc);
}
