// The committed-id set: exact (a fingerprint match is confirmed against the block), for ids whose
// fingerprints collide too, across the table's growth.
import { describe, expect, it } from 'vitest';
import { CommittedIds, fingerprint } from './committed-ids.ts';

/** A chain in miniature: the ids of each height's block. */
function chainOf() {
  const blocks = new Map<number, Set<string>>();
  const reads: number[] = [];
  const ids = new CommittedIds((id, height) => {
    reads.push(height);
    return blocks.get(height)?.has(id) === true;
  }, 12345);
  const commit = (height: number, recordIds: string[]) => {
    blocks.set(height, new Set(recordIds));
    for (const id of recordIds) ids.add(id, height);
  };
  return { ids, commit, reads };
}

/** Two different ids with the same fingerprint under `seed` (a birthday search over 32 bits). */
function collidingPair(seed: number): [string, string] {
  const seen = new Map<number, string>();
  for (let i = 0; ; i++) {
    const id = `record-${i}`;
    const fp = fingerprint(id, seed);
    const other = seen.get(fp);
    if (other !== undefined) return [other, id];
    seen.set(fp, id);
  }
}

describe('CommittedIds', () => {
  it('answers exactly for 200,000 ids over 100 blocks, through many growths', () => {
    const { ids, commit } = chainOf();
    for (let h = 1; h <= 100; h++)
      commit(
        h,
        Array.from({ length: 2000 }, (_, i) => `${h}-${i}`),
      );
    expect(ids.size).toBe(200_000);
    for (let h = 1; h <= 100; h += 7) for (let i = 0; i < 2000; i += 13) expect(ids.has(`${h}-${i}`)).toBe(true);
    for (let i = 0; i < 20_000; i++) expect(ids.has(`absent-${i}`)).toBe(false);
    // 8 bytes a slot, at a load of 0.6–0.75.
    expect(ids.bytes).toBeLessThanOrEqual((200_000 / 0.6) * 8 + 16);
    expect(ids.bytes).toBeGreaterThanOrEqual((200_000 / 0.75) * 8);
  });

  it('a fingerprint shared by two ids is told apart by the block: never a false "committed"', () => {
    const [a, b] = collidingPair(12345);
    const { ids, commit, reads } = chainOf();
    commit(1, [a]);
    expect(ids.has(a)).toBe(true);
    expect(ids.has(b), `${b} shares ${a}'s fingerprint but is not on the chain`).toBe(false);
    expect(reads).toContain(1);
    commit(2, [b]);
    expect(ids.has(a)).toBe(true);
    expect(ids.has(b)).toBe(true);
  });

  it('a miss whose fingerprint matches nothing reads no block', () => {
    const { ids, commit, reads } = chainOf();
    commit(1, ['x', 'y', 'z']);
    reads.length = 0;
    for (let i = 0; i < 1000; i++) ids.has(`new-${i}`);
    expect(reads.length).toBeLessThan(2); // only a 1-in-2^32 fingerprint match would read one
  });
});
