// The arena against a Map: any sequence of sets, rewrites (shorter, longer) and removals leaves every record as a
// Map would, through moves and compactions.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readVarint, SlotArena, writeVarint } from './slot-arena.ts';

describe('SlotArena', () => {
  it('holds what a Map holds, whatever the order of writes', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(fc.integer({ min: 0, max: 300 }), fc.option(fc.uint8Array({ maxLength: 400 }), { nil: undefined })),
          { maxLength: 3000 },
        ),
        (ops) => {
          const arena = new SlotArena();
          const model = new Map<number, Uint8Array>();
          for (const [i, data] of ops) {
            arena.set(i, data);
            if (data === undefined) model.delete(i);
            else model.set(i, Uint8Array.from(data));
          }
          for (let i = 0; i <= 300; i++) {
            expect(arena.has(i)).toBe(model.has(i));
            const got = arena.get(i);
            expect(got === undefined ? undefined : Uint8Array.from(got)).toEqual(model.get(i));
          }
        },
      ),
      { numRuns: 200, seed: 3 },
    );
  });

  it('compacts: rewriting every record many times keeps the buffer near the live size', () => {
    const arena = new SlotArena();
    for (let round = 0; round < 20; round++)
      for (let i = 0; i < 10_000; i++) arena.set(i, new Uint8Array(50 + ((i + round) % 30)).fill(round));
    expect(arena.byteLength).toBeLessThan(10_000 * 90 * 3);
    expect(Array.from(arena.get(7) as Uint8Array).every((b) => b === 19)).toBe(true);
  });

  it('varints round-trip up to 2^53', () => {
    const bytes = new Uint8Array(16);
    for (const n of [0, 1, 127, 128, 300, 2 ** 31, 2 ** 40 - 1, Number.MAX_SAFE_INTEGER]) {
      const end = writeVarint(bytes, 0, n);
      expect(readVarint(bytes, 0)).toEqual({ value: n, next: end });
    }
  });
});
