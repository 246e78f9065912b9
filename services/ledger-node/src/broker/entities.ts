// Every entity the watcher has seen or the chain has recorded, numbered once: the watcher's per-entity state
// (the primary's attributes, what the chain last recorded, what is settled) lives in arrays and typed arrays
// indexed by these numbers instead of maps keyed by strings, one set of keys for every broker and scope.
//
// The keys themselves (a type, numbered once, and the id in UTF-8) are kept end to end in one buffer, found by an
// open-addressing hash table of entity numbers: about 40 bytes an entity where a Map of strings takes ~90.
import { grown32, grownTo } from './growable.ts';
import { readVarint, writeVarint } from './slot-arena.ts';

const encoder = new TextEncoder();

/** FNV-1a over bytes: the table's hash (the keys are not chosen by anyone the table must resist: ids repeat). */
function hashBytes(bytes: Uint8Array, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let k = start; k < end; k++) {
    h ^= bytes[k] as number;
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export class EntityTable {
  /** Every key's bytes, one after the other; entity i's are ends[i-1] (0 for i = 0) to ends[i]. */
  private keyBytes = new Uint8Array(64 * 1024);
  private ends = new Uint32Array(1024);
  private count = 0;
  /** Open addressing, linear probing: entity number + 1, 0 for an empty slot. */
  private table = new Int32Array(2048);
  private scratch = new Uint8Array(1024);
  /** Entity types by number, and their numbers. */
  private readonly types: string[] = [];
  private readonly typeIds = new Map<string, number>();

  /** The entity's number (a new one for an entity not seen before). */
  intern(type: string, id: string): number {
    const length = this.encode(this.typeId(type, true) as number, id);
    const slot = this.slotOf(length);
    const found = this.table[slot] as number;
    if (found !== 0) return found - 1;
    const i = this.count;
    const start = i === 0 ? 0 : (this.ends[i - 1] as number);
    if (start + length > this.keyBytes.length) this.keyBytes = grownTo(this.keyBytes, start + length);
    this.keyBytes.set(this.scratch.subarray(0, length), start);
    if (i >= this.ends.length) this.ends = grown32(this.ends, i + 1);
    this.ends[i] = start + length;
    this.count++;
    this.table[slot] = i + 1;
    // At most three quarters full: linear probing stays short, and the table is 5–11 bytes an entity.
    if (this.count * 4 > this.table.length * 3) this.rehash();
    return i;
  }

  /** The entity's number, or undefined when it was never seen. */
  find(type: string, id: string): number | undefined {
    const typeId = this.typeId(type, false);
    if (typeId === undefined) return undefined;
    const found = this.table[this.slotOf(this.encode(typeId, id))] as number;
    return found === 0 ? undefined : found - 1;
  }

  /** The entity's id and type. */
  ref(i: number): { id: string; type: string } {
    if (i < 0 || i >= this.count) throw new RangeError(`no entity ${i}`);
    const start = i === 0 ? 0 : (this.ends[i - 1] as number);
    const { value: typeId, next } = readVarint(this.keyBytes, start);
    const id = Buffer.from(this.keyBytes.buffer, next, (this.ends[i] as number) - next).toString('utf8');
    return { id, type: this.types[typeId] as string };
  }

  get size(): number {
    return this.count;
  }

  /** Bytes held, for the benchmark's accounts. */
  get byteLength(): number {
    return this.keyBytes.byteLength + this.ends.byteLength + this.table.byteLength;
  }

  private typeId(type: string, add: boolean): number | undefined {
    let n = this.typeIds.get(type);
    if (n === undefined && add) {
      n = this.types.length;
      this.types.push(type);
      this.typeIds.set(type, n);
    }
    return n;
  }

  /** Encodes a key (its type's number, its id) into the scratch buffer; its length. */
  private encode(typeId: number, id: string): number {
    if (id.length * 3 + 8 > this.scratch.length) this.scratch = new Uint8Array(id.length * 3 + 8);
    const at = writeVarint(this.scratch, 0, typeId);
    return at + encoder.encodeInto(id, this.scratch.subarray(at)).written;
  }

  /** The slot of the key in the scratch buffer: where it is, or the empty slot where it would go. */
  private slotOf(length: number): number {
    const mask = this.table.length - 1;
    for (let slot = hashBytes(this.scratch, 0, length) & mask; ; slot = (slot + 1) & mask) {
      const found = this.table[slot] as number;
      if (found === 0 || this.equals(found - 1, length)) return slot;
    }
  }

  private equals(i: number, length: number): boolean {
    const start = i === 0 ? 0 : (this.ends[i - 1] as number);
    if ((this.ends[i] as number) - start !== length) return false;
    for (let k = 0; k < length; k++) if (this.keyBytes[start + k] !== this.scratch[k]) return false;
    return true;
  }

  private rehash(): void {
    const table = new Int32Array(this.table.length * 2);
    const mask = table.length - 1;
    for (let i = 0; i < this.count; i++) {
      const start = i === 0 ? 0 : (this.ends[i - 1] as number);
      const end = this.ends[i] as number;
      let slot = hashBytes(this.keyBytes, start, end) & mask;
      while (table[slot] !== 0) slot = (slot + 1) & mask;
      table[slot] = i + 1;
    }
    this.table = table;
  }
}

/** A set of entity numbers that grows with the table (one byte each). */
export class EntitySet {
  private bits = new Uint8Array(1024);

  /** Adds `i`; false when it was there already. */
  add(i: number): boolean {
    if (i >= this.bits.length) this.bits = grownTo(this.bits, i + 1);
    if (this.bits[i]) return false;
    this.bits[i] = 1;
    return true;
  }

  has(i: number): boolean {
    return this.bits[i] === 1;
  }

  /** Every member below `limit`, in order. */
  *members(limit: number): Generator<number> {
    const end = Math.min(limit, this.bits.length);
    for (let i = 0; i < end; i++) if (this.bits[i]) yield i;
  }
}
