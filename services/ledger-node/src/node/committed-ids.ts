// The ids of every record on the chain, in a compact exact set: the mempool asks it for every record it is
// offered (gossip, the watcher, clients) and proposal checks for every record of a block, so it must answer
// without a disk read in the common case, and its memory must stay small however long the chain grows.
//
// Open addressing with linear probing over one Uint32Array: per slot a 32-bit fingerprint of the id and the
// height of the block holding it (+1; 0 = empty), 8 bytes a slot. The table grows by a quarter when it is
// three quarters full, so it holds 10.7–13.3 bytes a record (2M records: 21–27 MB); a power-of-two table that
// doubles would hold 11.4–22.9. A fingerprint's home slot is its share of the table (fp / 2^32 × slots), which
// works for any table size. The table never holds the ids themselves. A fingerprint match is confirmed against
// the block at that height (`confirm`, which reads the block store), so the answer is exact: a false match
// costs a block read, never a dropped record — unlike a Bloom filter. The hash is seeded per process, so no one
// can choose ids that collide here.
import { randomInt } from 'node:crypto';

/** Slots used at most before the table grows (an absent id's probe averages ≤ 8.5 slots below this). */
const MAX_LOAD = 0.75;
/** How much the table grows: to a load of 0.6 (0.75 / 1.25). */
const GROWTH = 1.25;
const INITIAL_SLOTS = 1 << 12;
const TWO_TO_32 = 2 ** 32;

/** A seeded 32-bit hash of a string (cyrb53's mixing, its two lanes folded into one). */
export function fingerprint(s: string, seed: number): number {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (h1 ^ h2) >>> 0;
}

export class CommittedIds {
  /** [fingerprint, height + 1] per slot. */
  private slots = new Uint32Array(2 * INITIAL_SLOTS);
  private capacity = INITIAL_SLOTS;
  private count = 0;
  private readonly seed: number;
  private readonly confirm: (id: string, height: number) => boolean;

  /**
   * @param confirm true when the block at `height` holds a record with this id (reads the block store).
   * @param seed the hash's seed (random unless a test fixes it).
   * @example const ids = new CommittedIds((id, h) => chain.get(h)?.records.some((r) => r.id === id) === true);
   */
  constructor(confirm: (id: string, height: number) => boolean, seed = randomInt(0, 2 ** 32)) {
    this.confirm = confirm;
    this.seed = seed;
  }

  get size(): number {
    return this.count;
  }

  /** Memory held by the table, in bytes. */
  get bytes(): number {
    return this.slots.byteLength;
  }

  /** Adds the id of a record committed at `height` (each committed record once). */
  add(id: string, height: number): void {
    if (this.count + 1 > MAX_LOAD * this.capacity) this.grow();
    this.place(fingerprint(id, this.seed), height + 1);
    this.count++;
  }

  /** True when a record with this id is on the chain (exact). */
  has(id: string): boolean {
    const fp = fingerprint(id, this.seed);
    const slots = this.slots;
    for (let i = this.home(fp); ; i = i + 1 === this.capacity ? 0 : i + 1) {
      const stored = slots[2 * i + 1] as number;
      if (stored === 0) return false;
      if (slots[2 * i] === fp && this.confirm(id, stored - 1)) return true;
    }
  }

  /** A fingerprint's first slot: its share of the table. */
  private home(fp: number): number {
    return Math.floor((fp / TWO_TO_32) * this.capacity);
  }

  /** Puts an entry at the first free slot from its home. */
  private place(fp: number, heightPlusOne: number): void {
    const slots = this.slots;
    let i = this.home(fp);
    while (slots[2 * i + 1] !== 0) i = i + 1 === this.capacity ? 0 : i + 1;
    slots[2 * i] = fp;
    slots[2 * i + 1] = heightPlusOne;
  }

  /** Grows the table by a quarter; entries move by their fingerprints alone (the ids are not kept). */
  private grow(): void {
    const old = this.slots;
    this.capacity = Math.ceil(this.capacity * GROWTH);
    this.slots = new Uint32Array(2 * this.capacity);
    for (let i = 0; i < old.length; i += 2) {
      const heightPlusOne = old[i + 1] as number;
      if (heightPlusOne !== 0) this.place(old[i] as number, heightPlusOne);
    }
  }
}
