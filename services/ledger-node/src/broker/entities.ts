// Every entity the watcher has seen or the chain has recorded, numbered once: the watcher's per-entity state
// (the primary's attributes, what the chain last recorded, what is settled) lives in arrays and typed arrays
// indexed by these numbers instead of maps keyed by strings, one set of keys for every broker and scope.
import { grownTo } from './growable.ts';
import { entityKey, splitEntityKey } from './observe.ts';

export class EntityTable {
  private readonly index = new Map<string, number>();
  private readonly keys: string[] = [];

  /** The entity's number (a new one for an entity not seen before). */
  intern(type: string, id: string): number {
    const key = entityKey(type, id);
    let i = this.index.get(key);
    if (i === undefined) {
      i = this.keys.length;
      this.keys.push(key);
      this.index.set(key, i);
    }
    return i;
  }

  /** The entity's number, or undefined when it was never seen. */
  find(type: string, id: string): number | undefined {
    return this.index.get(entityKey(type, id));
  }

  /** The entity's id and type. */
  ref(i: number): { id: string; type: string } {
    const key = this.keys[i];
    if (key === undefined) throw new RangeError(`no entity ${i}`);
    return splitEntityKey(key);
  }

  get size(): number {
    return this.keys.length;
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
