/**
 * RFC 6962 §2.1 audit paths and consistency proofs of a transparency log (the checkpoint tree over block hashes):
 * built from any source of subtree hashes, and verified as RFC 9162 §2.1.3.2 and §2.1.4.2 describe. Sizes and
 * indexes are JavaScript numbers (exact up to 2^53); the bit operations are written as arithmetic for that reason.
 * Proof order is RFC 6962's (the hash nearest the leaf first), the order `tlog-witness` requests and Go's
 * `golang.org/x/mod/sumdb/tlog` use.
 */
import { sha256 as platformSha256 } from '#platform-crypto';
import { nodeHash, type Sha256, splitPoint } from './merkle.ts';

/** Where proofs read hashes from: the RFC 6962 Merkle Tree Hash of the leaves [lo, hi). */
export interface RangeHashes {
  range(lo: number, hi: number): Uint8Array;
}

/** Most hashes any proof of a tree below 2^53 leaves holds (the tlog-witness limit is 63 lines). */
export const MAX_PROOF_HASHES = 63;

const odd = (n: number) => n % 2 === 1;
const half = (n: number) => Math.floor(n / 2);

/** Byte-wise equality. */
export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] as number) ^ (b[i] as number);
  return diff === 0;
}

function path(tree: RangeHashes, m: number, lo: number, hi: number, out: Uint8Array[]): void {
  const n = hi - lo;
  if (n <= 1) return;
  const k = splitPoint(n);
  if (m < k) {
    path(tree, m, lo, lo + k, out);
    out.push(tree.range(lo + k, hi));
  } else {
    path(tree, m - k, lo + k, hi, out);
    out.push(tree.range(lo, lo + k));
  }
}

/**
 * PATH(index, D[size]): the audit path of leaf `index` in the tree of the first `size` leaves.
 * @example verifyInclusion(i, n, leaf, inclusionProof(tree, i, n), tree.range(0, n)) === true
 */
export function inclusionProof(tree: RangeHashes, index: number, size: number): Uint8Array[] {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size)
    throw new RangeError(`no leaf ${index} in a tree of ${size}`);
  const out: Uint8Array[] = [];
  path(tree, index, 0, size, out);
  return out;
}

function subproof(tree: RangeHashes, m: number, lo: number, hi: number, whole: boolean, out: Uint8Array[]): void {
  const n = hi - lo;
  if (m === n) {
    if (!whole) out.push(tree.range(lo, hi));
    return;
  }
  const k = splitPoint(n);
  if (m <= k) {
    subproof(tree, m, lo, lo + k, whole, out);
    out.push(tree.range(lo + k, hi));
  } else {
    subproof(tree, m - k, lo + k, hi, false, out);
    out.push(tree.range(lo, lo + k));
  }
}

/**
 * PROOF(from, D[to]): that the tree of the first `from` leaves is a prefix of the tree of the first `to`. Empty when
 * `from` is 0 or equals `to` (tlog-witness sends no proof lines from size 0).
 * @example verifyConsistency(m, n, tree.range(0, m), tree.range(0, n), consistencyProof(tree, m, n)) === true
 */
export function consistencyProof(tree: RangeHashes, from: number, to: number): Uint8Array[] {
  if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from < 0 || from > to)
    throw new RangeError(`no consistency proof from ${from} to ${to}`);
  const out: Uint8Array[] = [];
  if (from > 0 && from < to) subproof(tree, from, 0, to, true, out);
  return out;
}

/**
 * The root an audit path leads to from `leaf` (a leaf hash) at `index` of a tree of `size`, or null when the path
 * has the wrong length for that position (RFC 9162 §2.1.3.2).
 */
export function rootFromInclusion(
  index: number,
  size: number,
  leaf: Uint8Array,
  proof: readonly Uint8Array[],
  sha: Sha256 = platformSha256,
): Uint8Array | null {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size) return null;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return null;
    if (odd(fn) || fn === sn) {
      r = nodeHash(p, r, sha);
      if (!odd(fn)) while (!odd(fn) && fn !== 0) [fn, sn] = [half(fn), half(sn)];
    } else r = nodeHash(r, p, sha);
    [fn, sn] = [half(fn), half(sn)];
  }
  return sn === 0 ? r : null;
}

/** True when `proof` proves leaf hash `leaf` at `index` of the tree of `size` whose root is `root`. */
export function verifyInclusion(
  index: number,
  size: number,
  leaf: Uint8Array,
  proof: readonly Uint8Array[],
  root: Uint8Array,
  sha: Sha256 = platformSha256,
): boolean {
  const got = rootFromInclusion(index, size, leaf, proof, sha);
  return got !== null && equalBytes(got, root);
}

/**
 * True when `proof` proves the tree of `from` leaves with root `fromRoot` a prefix of the tree of `to` leaves with
 * root `toRoot` (RFC 9162 §2.1.4.2). From 0 the proof must be empty (everything extends the empty tree); between
 * equal sizes it must be empty and the roots equal.
 */
export function verifyConsistency(
  from: number,
  to: number,
  fromRoot: Uint8Array,
  toRoot: Uint8Array,
  proof: readonly Uint8Array[],
  sha: Sha256 = platformSha256,
): boolean {
  if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from < 0 || from > to) return false;
  if (from === 0) return proof.length === 0;
  if (from === to) return proof.length === 0 && equalBytes(fromRoot, toRoot);
  if (proof.length === 0 || proof.length > MAX_PROOF_HASHES) return false;
  // When `from` is a power of two its tree is a complete subtree, left out of the proof: start from its root.
  const path = isPowerOfTwo(from) ? [fromRoot, ...proof] : [...proof];
  let fn = from - 1;
  let sn = to - 1;
  while (odd(fn)) [fn, sn] = [half(fn), half(sn)];
  let fr = path[0] as Uint8Array;
  let sr = fr;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (odd(fn) || fn === sn) {
      fr = nodeHash(c, fr, sha);
      sr = nodeHash(c, sr, sha);
      if (!odd(fn)) while (!odd(fn) && fn !== 0) [fn, sn] = [half(fn), half(sn)];
    } else sr = nodeHash(sr, c, sha);
    [fn, sn] = [half(fn), half(sn)];
  }
  return sn === 0 && equalBytes(fr, fromRoot) && equalBytes(sr, toRoot);
}

function isPowerOfTwo(n: number): boolean {
  let x = n;
  while (x > 1 && x % 2 === 0) x /= 2;
  return x === 1;
}
