/**
 * An append-only RFC 6962 tree kept in memory: the checkpoint tree of a chain, one leaf per block. Level k holds the
 * hash of every complete, aligned subtree of 2^k leaves, so the root of any size, an audit path or a consistency
 * proof costs O(log² n) hashes at most, never a pass over the leaves. Memory: about 64 bytes a leaf (32 for the leaf
 * hash, 32 for the levels above it), in 128 KiB chunks rather than one object per hash.
 */
import { sha256 as platformSha256 } from '#platform-crypto';
import { leafHash, nodeHash, type Sha256, splitPoint } from './merkle.ts';
import { consistencyProof, inclusionProof, type RangeHashes } from './tlog-proof.ts';

const HASH = 32;
const PER_CHUNK = 4096;

/** A growable list of 32-byte hashes in fixed chunks (no per-hash object). */
class HashList {
  private readonly chunks: Uint8Array[] = [];
  length = 0;

  push(hash: Uint8Array): void {
    const slot = this.length % PER_CHUNK;
    if (slot === 0) this.chunks.push(new Uint8Array(PER_CHUNK * HASH));
    (this.chunks[this.chunks.length - 1] as Uint8Array).set(hash, slot * HASH);
    this.length++;
  }

  /** A view of hash `i` (valid while the list lives; do not modify). */
  get(i: number): Uint8Array {
    const chunk = this.chunks[Math.floor(i / PER_CHUNK)] as Uint8Array;
    const at = (i % PER_CHUNK) * HASH;
    return chunk.subarray(at, at + HASH);
  }
}

export class LogTree implements RangeHashes {
  private readonly levels: HashList[] = [new HashList()];
  private readonly sha: Sha256;

  constructor(sha: Sha256 = platformSha256) {
    this.sha = sha;
  }

  /** Number of leaves. */
  get size(): number {
    return (this.levels[0] as HashList).length;
  }

  /** Appends the leaf whose data is `data` (for a chain: the 32 bytes of a block hash). */
  appendData(data: Uint8Array): void {
    this.appendLeafHash(leafHash(data, this.sha));
  }

  /** Appends a leaf by its leaf hash, completing every subtree it closes. */
  appendLeafHash(hash: Uint8Array): void {
    let level = 0;
    let h = hash;
    for (;;) {
      const list = this.levels[level] ?? this.levels[this.levels.push(new HashList()) - 1];
      (list as HashList).push(h);
      const n = (list as HashList).length;
      if (n % 2 === 1) return;
      h = nodeHash((list as HashList).get(n - 2), (list as HashList).get(n - 1), this.sha);
      level++;
    }
  }

  /** The leaf hash of leaf `i`. */
  leaf(i: number): Uint8Array {
    if (!Number.isInteger(i) || i < 0 || i >= this.size) throw new RangeError(`no leaf ${i} in a tree of ${this.size}`);
    return (this.levels[0] as HashList).get(i);
  }

  /** MTH of the leaves [lo, hi): stored when it is a complete aligned subtree, else split as RFC 6962 splits it. */
  range(lo: number, hi: number): Uint8Array {
    if (!(Number.isInteger(lo) && Number.isInteger(hi) && lo >= 0 && lo < hi && hi <= this.size))
      throw new RangeError(`no range [${lo}, ${hi}) in a tree of ${this.size}`);
    const n = hi - lo;
    const k = Math.log2(n);
    if (Number.isInteger(k) && lo % n === 0) return (this.levels[k] as HashList).get(lo / n);
    const split = splitPoint(n);
    return nodeHash(this.range(lo, lo + split), this.range(lo + split, hi), this.sha);
  }

  /** The root of the tree of the first `size` leaves (SHA-256 of nothing for the empty tree). */
  root(size: number = this.size): Uint8Array {
    if (size === 0) return this.sha(new Uint8Array(0));
    return this.range(0, size);
  }

  /** The audit path of leaf `index` in the tree of the first `size` leaves. */
  inclusion(index: number, size: number = this.size): Uint8Array[] {
    if (size > this.size) throw new RangeError(`no tree of ${size} leaves yet (${this.size})`);
    return inclusionProof(this, index, size);
  }

  /** The consistency proof from the first `from` leaves to the first `to`. */
  consistency(from: number, to: number = this.size): Uint8Array[] {
    if (to > this.size) throw new RangeError(`no tree of ${to} leaves yet (${this.size})`);
    return consistencyProof(this, from, to);
  }
}
