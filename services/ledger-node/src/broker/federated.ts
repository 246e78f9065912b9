// One federated broker as the watcher knows it between reads: its listing's pages as last read (primary.ts's
// PageMemo: a page whose bytes are unchanged, listing entities that still match the chain, is neither parsed nor
// judged), and per entity a keyed digest of what the watcher last saw of it (its names and forms, verdict.ts's
// entityDigest), from a read or a notification. A sweep that finds an entity whose digest differs from the last
// one seen — or an entity new or gone — with no notification about it waiting, has found a change no notification
// announced: a missed change. 9 bytes an entity (a flag and the digest) in one typed array.
import { DIGEST64_CHARS } from './digest.ts';
import { grownTo } from './growable.ts';
import type { PageMemo } from './primary.ts';

const SLOT = 1 + DIGEST64_CHARS;

export class FederatedState {
  /** Pages by key (listing.ts's pageKey). */
  readonly pages = new Map<string, PageMemo>();
  private seenDigests = new Uint8Array(0);
  /** Whether a complete read of the broker was judged (before it, nothing seen can be called missed). */
  baseline = false;

  /** The digest last seen of entity `i`, or undefined. */
  seen(i: number): string | undefined {
    const at = i * SLOT;
    if (at >= this.seenDigests.length || this.seenDigests[at] === 0) return undefined;
    return String.fromCharCode(...this.seenDigests.subarray(at + 1, at + SLOT));
  }

  /** Remembers what was seen of entity `i` (undefined: it is gone). */
  see(i: number, digest: string | undefined): void {
    const at = i * SLOT;
    if (digest === undefined) {
      if (at < this.seenDigests.length) this.seenDigests[at] = 0;
      return;
    }
    if (at >= this.seenDigests.length) this.seenDigests = grownTo(this.seenDigests, Math.max(at + SLOT, 1024 * SLOT));
    this.seenDigests[at] = 1;
    for (let k = 0; k < DIGEST64_CHARS; k++) this.seenDigests[at + 1 + k] = digest.charCodeAt(k);
  }

  /** Every entity seen, in number order. */
  *seenEntities(): Generator<number> {
    for (let at = 0; at < this.seenDigests.length; at += SLOT) if (this.seenDigests[at] === 1) yield at / SLOT;
  }
}
