// One federated broker as the watcher knows it between reads: its listing's pages as last read (primary.ts's
// PageMemo: a page whose bytes are unchanged, listing entities that still match the chain, is neither parsed nor
// judged), and per entity 32 bits of what the watcher last saw of it (its names and forms, verdict.ts's
// entityDigest), from a read or a notification. A sweep that finds an entity whose digest differs from the last
// one seen — or an entity new or gone — with no notification about it, has found a change no notification
// announced: a missed change. 32 bits are enough for that count (a collision hides one change from the count, never
// from the judging); 4 bytes an entity in one typed array.
import { grown32 } from './growable.ts';
import type { PageMemo } from './primary.ts';

/** 32 bits of a digest, never 0 (0 marks an entity not seen). */
const seenValue = (digest: string) =>
  ((digest.charCodeAt(0) << 24) | (digest.charCodeAt(1) << 16) | (digest.charCodeAt(2) << 8) | digest.charCodeAt(3)) >>>
    0 || 1;

export class FederatedState {
  /** Pages by key (listing.ts's pageKey). */
  readonly pages = new Map<string, PageMemo>();
  private seenDigests = new Uint32Array(0);
  /** Whether a complete read of the broker was judged (before it, nothing seen can be called missed). */
  baseline = false;

  /** Whether entity `i` was last seen as `digest`. */
  sawAs(i: number, digest: string): boolean {
    return i < this.seenDigests.length && this.seenDigests[i] === seenValue(digest);
  }

  /** Remembers what was seen of entity `i` (undefined: it is gone). */
  see(i: number, digest: string | undefined): void {
    if (digest === undefined) {
      if (i < this.seenDigests.length) this.seenDigests[i] = 0;
      return;
    }
    if (i >= this.seenDigests.length) this.seenDigests = grown32(this.seenDigests, i + 1);
    this.seenDigests[i] = seenValue(digest);
  }

  /** Bytes held, for the benchmark's accounts. */
  get byteLength(): number {
    let pages = 0;
    for (const m of this.pages.values()) pages += m.entities.byteLength + m.raws.length;
    return this.seenDigests.byteLength + pages;
  }

  /** Every entity seen, in number order. */
  *seenEntities(): Generator<number> {
    for (let i = 0; i < this.seenDigests.length; i++) if (this.seenDigests[i] !== 0) yield i;
  }
}
