// Variable-length byte records by entity number, in one growing buffer: the watcher's per-entity state at a million
// entities without a JavaScript object (or string) an entity, whose header alone (16 bytes and a pointer) would
// weigh as much as the data. Each record is its length (a varint) and its bytes; a record rewritten no longer than
// it was stays in place, a longer one moves to the end, and the space left behind is reclaimed by compacting once
// it is over a third of the buffer. 4 bytes an entity for the offsets, plus the records.
import { grown32, grownTo } from './growable.ts';

const MIN_COMPACT_BYTES = 1 << 20;

/** Bytes of `n` as a varint (7 bits a byte, low first). */
export function varintLength(n: number): number {
  let len = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 0x80);
    len++;
  }
  return len;
}

/** Writes `n` as a varint at `at`; returns the offset after it. */
export function writeVarint(bytes: Uint8Array, at: number, n: number): number {
  while (n >= 0x80) {
    bytes[at++] = (n % 0x80) | 0x80;
    n = Math.floor(n / 0x80);
  }
  bytes[at++] = n;
  return at;
}

/** Reads a varint at `at`: its value and the offset after it. */
export function readVarint(bytes: Uint8Array, at: number): { value: number; next: number } {
  let value = 0;
  let scale = 1;
  for (;;) {
    const b = bytes[at++] as number;
    value += (b & 0x7f) * scale;
    if (b < 0x80) return { value, next: at };
    scale *= 0x80;
  }
}

export class SlotArena {
  /** Per entity: 0 for none, else the record's offset + 1. */
  private offsets = new Uint32Array(1024);
  private bytes = new Uint8Array(64 * 1024);
  private used = 0;
  private garbage = 0;

  /** The record of entity `i`: a view valid until the next `set` (undefined: none). */
  get(i: number): Uint8Array | undefined {
    const at = i < this.offsets.length ? (this.offsets[i] as number) : 0;
    if (at === 0) return undefined;
    const { value: length, next } = readVarint(this.bytes, at - 1);
    return this.bytes.subarray(next, next + length);
  }

  has(i: number): boolean {
    return i < this.offsets.length && this.offsets[i] !== 0;
  }

  /** Sets (or, with undefined, removes) the record of entity `i`. */
  set(i: number, data: Uint8Array | undefined): void {
    if (i >= this.offsets.length) {
      if (data === undefined) return;
      this.offsets = grown32(this.offsets, i + 1);
    }
    const old = this.offsets[i] as number;
    let oldSpace = 0;
    if (old !== 0) {
      const { value, next } = readVarint(this.bytes, old - 1);
      oldSpace = next - (old - 1) + value;
    }
    if (data === undefined) {
      this.offsets[i] = 0;
      this.garbage += oldSpace;
      return;
    }
    const space = varintLength(data.length) + data.length;
    if (old !== 0 && space <= oldSpace) {
      const at = writeVarint(this.bytes, old - 1, data.length);
      this.bytes.set(data, at);
      this.garbage += oldSpace - space;
      this.compactIfWasteful();
      return;
    }
    this.garbage += oldSpace;
    if (this.used + space > this.bytes.length) this.bytes = grownTo(this.bytes, this.used + space);
    const at = writeVarint(this.bytes, this.used, data.length);
    this.bytes.set(data, at);
    this.offsets[i] = this.used + 1;
    this.used += space;
    this.compactIfWasteful();
  }

  /** Bytes held (records and offsets), for the benchmark's accounts. */
  get byteLength(): number {
    return this.bytes.byteLength + this.offsets.byteLength;
  }

  private compactIfWasteful(): void {
    if (this.garbage < MIN_COMPACT_BYTES || this.garbage * 3 < this.used) return;
    const live = this.used - this.garbage;
    const fresh = new Uint8Array(Math.max(64 * 1024, Math.ceil(live * 1.25)));
    let end = 0;
    for (let i = 0; i < this.offsets.length; i++) {
      const at = this.offsets[i] as number;
      if (at === 0) continue;
      const { value, next } = readVarint(this.bytes, at - 1);
      const space = next - (at - 1) + value;
      fresh.set(this.bytes.subarray(at - 1, at - 1 + space), end);
      this.offsets[i] = end + 1;
      end += space;
    }
    this.bytes = fresh;
    this.used = end;
    this.garbage = 0;
  }
}
