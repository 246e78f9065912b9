import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sha256 } from './crypto-node.ts';
import { fromHex, toHex } from './hex.ts';
import { LogTree } from './log-tree.ts';
import { leafHash, merkleRootBytes } from './merkle.ts';
import { nobleSha256 } from './noble.ts';
import {
  consistencyProof,
  inclusionProof,
  rootFromInclusion,
  verifyConsistency,
  verifyInclusion,
} from './tlog-proof.ts';

// RFC 6962 test data from the certificate-transparency reference implementation (merkle_tree_test).
const LEAVES = ['', '00', '10', '2021', '3031', '40414243', '5051525354555657', '606162636465666768696a6b6c6d6e6f'].map(
  fromHex,
);
const ROOT_8 = '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328';
// Consistency proofs (from, to, proof) from the same reference data.
const CONSISTENCY: Array<[number, number, string[]]> = [
  [1, 1, []],
  [
    1,
    8,
    [
      '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
    ],
  ],
  [
    6,
    8,
    [
      '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a',
      'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  ],
  [
    2,
    5,
    [
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
    ],
  ],
];

function treeOf(leaves: readonly Uint8Array[], sha = sha256): LogTree {
  const tree = new LogTree(sha);
  for (const leaf of leaves) tree.appendData(leaf);
  return tree;
}

const data = (i: number) => Uint8Array.of(i & 0xff, (i >> 8) & 0xff, 7);

describe('LogTree (RFC 6962, incremental)', () => {
  it('gives the reference roots and the root of every prefix, with node:crypto and @noble', () => {
    const tree = treeOf(LEAVES);
    expect(toHex(tree.root())).toBe(ROOT_8);
    expect(toHex(treeOf(LEAVES, nobleSha256).root())).toBe(ROOT_8);
    for (let n = 0; n <= 8; n++) expect(toHex(tree.root(n))).toBe(toHex(merkleRootBytes(LEAVES.slice(0, n))));
  });

  it('the reference consistency proofs, built and verified', () => {
    const tree = treeOf(LEAVES);
    for (const [from, to, proof] of CONSISTENCY) {
      expect(tree.consistency(from, to).map(toHex)).toEqual(proof);
      expect(verifyConsistency(from, to, tree.root(from), tree.root(to), proof.map(fromHex))).toBe(true);
    }
  });

  it('agrees with the one-shot RFC 6962 root for every size up to 70', () => {
    const leaves = Array.from({ length: 70 }, (_, i) => data(i));
    const tree = treeOf(leaves);
    for (let n = 1; n <= 70; n++) expect(toHex(tree.root(n))).toBe(toHex(merkleRootBytes(leaves.slice(0, n), sha256)));
  });

  it('every audit path and every consistency proof of trees up to 40 leaves verifies; their alterations do not', () => {
    const tree = treeOf(Array.from({ length: 40 }, (_, i) => data(i)));
    for (let n = 1; n <= 40; n++) {
      const root = tree.root(n);
      for (let i = 0; i < n; i++) {
        const proof = tree.inclusion(i, n);
        expect(verifyInclusion(i, n, tree.leaf(i), proof, root)).toBe(true);
        expect(verifyInclusion(i, n, tree.leaf((i + 1) % 40), proof, root)).toBe(n === 1 && false);
        if (n > 1) expect(verifyInclusion((i + 1) % n, n, tree.leaf(i), proof, root)).toBe(false);
        if (proof.length > 0) expect(verifyInclusion(i, n, tree.leaf(i), proof.slice(1), root)).toBe(false);
        expect(verifyInclusion(i, n, tree.leaf(i), [...proof, root], root)).toBe(false);
      }
      for (let m = 1; m <= n; m++) {
        const proof = tree.consistency(m, n);
        expect(verifyConsistency(m, n, tree.root(m), root, proof)).toBe(true);
        // Another old root, or another new one, is refused.
        if (m < n) {
          const other = Uint8Array.from(tree.root(m));
          other[0] = (other[0] as number) ^ 1;
          expect(verifyConsistency(m, n, other, root, proof)).toBe(false);
          expect(verifyConsistency(m, n, tree.root(m), tree.root(n - 1), proof)).toBe(false);
          expect(verifyConsistency(m, n, tree.root(m), root, proof.slice(0, -1))).toBe(false);
          expect(verifyConsistency(m + 1, n, tree.root(m), root, proof)).toBe(false);
        }
      }
    }
  });

  it('refuses what a proof cannot say: an index outside the tree, sizes the wrong way round, proofs from size 0', () => {
    const tree = treeOf([data(0), data(1), data(2)]);
    expect(rootFromInclusion(3, 3, tree.leaf(0), tree.inclusion(0))).toBeNull();
    expect(rootFromInclusion(0, 0, tree.leaf(0), [])).toBeNull();
    expect(verifyConsistency(3, 2, tree.root(3), tree.root(2), [])).toBe(false);
    expect(verifyConsistency(0, 3, new Uint8Array(32), tree.root(3), [])).toBe(true);
    expect(verifyConsistency(0, 3, new Uint8Array(32), tree.root(3), [tree.root(1)])).toBe(false);
    expect(verifyConsistency(2, 2, tree.root(2), tree.root(3), [])).toBe(false);
    expect(() => tree.inclusion(0, 4)).toThrow(RangeError);
    expect(() => inclusionProof(tree, 3, 3)).toThrow(RangeError);
    expect(() => consistencyProof(tree, 2, 1)).toThrow(RangeError);
  });

  it('property: random trees, random positions (leaf hash of any data)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ maxLength: 12 }), { minLength: 1, maxLength: 300 }),
        fc.nat(),
        fc.nat(),
        (items, a, b) => {
          const tree = treeOf(items);
          const n = 1 + (a % items.length);
          const i = b % n;
          const m = 1 + (b % n);
          const root = merkleRootBytes(items.slice(0, n), sha256);
          expect(toHex(tree.root(n))).toBe(toHex(root));
          expect(verifyInclusion(i, n, leafHash(items[i] as Uint8Array, sha256), tree.inclusion(i, n), root)).toBe(
            true,
          );
          expect(verifyConsistency(m, n, tree.root(m), root, tree.consistency(m, n))).toBe(true);
        },
      ),
      { numRuns: 200 },
    );
  });
});
