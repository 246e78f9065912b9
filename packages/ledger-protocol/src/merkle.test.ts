import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sha256 } from './crypto-node.ts';
import { fromHex } from './hex.ts';
import { leafHash, merkleProof, merkleRoot, pathShape, rootFromPath } from './merkle.ts';
import { nobleSha256 } from './noble.ts';
import { verifyProof } from './proof.ts';

// RFC 6962 test data from the certificate-transparency reference implementation (merkle_tree_test).
const LEAVES = ['', '00', '10', '2021', '3031', '40414243', '5051525354555657', '606162636465666768696a6b6c6d6e6f'].map(
  fromHex,
);
const ROOTS = [
  'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
  'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
  'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
  'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
  '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
  '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
  'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
  '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
];
// Audit paths (leaf, tree size, path) from the same reference data.
const PATHS: Array<[number, number, string[]]> = [
  [0, 1, []],
  [
    0,
    8,
    [
      '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
    ],
  ],
  [
    5,
    8,
    [
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
      'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  ],
  [2, 3, ['fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125']],
  [
    1,
    5,
    [
      '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
    ],
  ],
];

describe('RFC 6962 Merkle tree', () => {
  it.each(ROOTS.map((root, size) => [size, root] as const))('tree head of size %i', (size, root) => {
    expect(merkleRoot(LEAVES.slice(0, size))).toBe(root);
    expect(merkleRoot(LEAVES.slice(0, size), nobleSha256)).toBe(root);
  });

  it.each(PATHS)('audit path of leaf %i in a tree of size %i', (index, size, expected) => {
    const leaves = LEAVES.slice(0, size);
    const proof = merkleProof(leaves, index);
    expect(proof.map((s) => s.sibling)).toEqual(expected);
    const leaf = leafHash(leaves[index] as Uint8Array);
    expect(rootFromPath(leaf, proof)).toBe(ROOTS[size]);
  });

  it('every leaf of every size up to 8 proves against the root, and fails against another root', () => {
    for (let size = 1; size <= 8; size++) {
      const leaves = LEAVES.slice(0, size);
      for (let i = 0; i < size; i++) {
        const proof = merkleProof(leaves, i);
        const leaf = leafHash(leaves[i] as Uint8Array, sha256);
        expect(rootFromPath(leaf, proof, sha256)).toBe(ROOTS[size]);
        if (proof.length > 0) {
          const flipped = proof.map((s, j) => (j === 0 ? { ...s, right: !s.right } : s));
          // Swapping sides changes the root unless both sides are equal, which never happens here.
          expect(rootFromPath(leaf, flipped, sha256)).not.toBe(ROOTS[size]);
        }
      }
    }
  });

  it('does not duplicate the last leaf (CVE-2012-2459): [a,b,c] and [a,b,c,c] differ', () => {
    const abc = LEAVES.slice(1, 4);
    expect(merkleRoot(abc)).not.toBe(merkleRoot([...abc, abc[2] as Uint8Array]));
  });

  it('pathShape is the side pattern of every audit path, and tells every position of a tree apart', () => {
    for (let size = 1; size <= 70; size++) {
      const leaves = Array.from({ length: size }, (_, i) => Uint8Array.of(i));
      const shapes = new Set<string>();
      for (let i = 0; i < size; i++) {
        const shape = pathShape(i, size);
        expect(merkleProof(leaves, i).map((s) => s.right)).toEqual(shape);
        shapes.add(shape.join());
      }
      expect(shapes.size).toBe(size);
    }
    expect(() => pathShape(3, 3)).toThrow(RangeError);
    expect(() => pathShape(-1, 3)).toThrow(RangeError);
  });

  it('rejects an out-of-range index', () => {
    expect(() => merkleProof(LEAVES, 8)).toThrow(RangeError);
    expect(() => merkleProof([], 0)).toThrow(RangeError);
  });

  it('property: any record in any tree verifies with verifyProof, a tampered record does not', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ id: fc.string({ minLength: 1 }), v: fc.integer() }), { minLength: 1, maxLength: 40 }),
        fc.nat(),
        (records, pick) => {
          const uniq = records.map((r, i) => ({ ...r, id: `${i}:${r.id}` }));
          const index = pick % uniq.length;
          const leaves = uniq.map((r) => new TextEncoder().encode(JSON.stringify(r)));
          // the records' canonical form: keys id, v are already sorted, so JSON.stringify gives RFC 8785
          const root = merkleRoot(leaves);
          const proof = merkleProof(leaves, index);
          const record = uniq[index] as { id: string; v: number };
          expect(verifyProof({ record, proof, merkle_root: root })).toBe(true);
          expect(verifyProof({ record, proof, merkle_root: root, sha256 })).toBe(true);
          expect(verifyProof({ record: { ...record, v: record.v + 1 }, proof, merkle_root: root })).toBe(false);
        },
      ),
      { numRuns: 200, seed: 6962 },
    );
  });

  it('verifyProof never throws on garbage', () => {
    const bad: unknown[] = [null, 1, 'x', [{ sibling: 'zz', right: true }], [{ sibling: 'a'.repeat(64) }], [null]];
    for (const proof of bad) {
      expect(verifyProof({ record: { id: 'a' }, proof: proof as never, merkle_root: 'a'.repeat(64) })).toBe(false);
    }
    expect(verifyProof({ record: { id: 'a' }, proof: [], merkle_root: 5 as never })).toBe(false);
    expect(verifyProof({ record: { id: 'a', x: Number.NaN }, proof: [], merkle_root: 'a'.repeat(64) })).toBe(false);
  });
});

describe('browser safety', () => {
  it('the package entry bundles for a browser: no node: module, no Buffer, and @noble as the platform crypto', async () => {
    const { build } = await import('esbuild');
    const out = await build({
      entryPoints: [new URL('./index.ts', import.meta.url).pathname],
      bundle: true,
      platform: 'browser',
      format: 'esm',
      write: false,
      logLevel: 'silent',
    });
    const text = out.outputFiles[0]?.text ?? '';
    expect(text).not.toMatch(/from ['"]node:/);
    expect(text).not.toMatch(/\bBuffer\./);
    expect(text).toMatch(/var platform = "web"/);
  });
});
