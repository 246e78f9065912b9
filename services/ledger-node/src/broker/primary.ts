// The primary broker as the watcher knows it between passes: per entity its attribute names and keyed digests
// (verdict.ts's PrimaryEntity), and per page of its listing a digest of the page's bytes and the entities it
// listed with a digest of each one's bytes. A pass reads every page again but looks into only the pages whose
// bytes changed, and parses only their entities whose bytes changed; an unchanged primary costs one digest a
// page. Memory: one string of ~100 bytes an entity of 10 attributes, plus 12 bytes an entity for the pages.
import { ABSENT, DIGEST64_CHARS, digestBytes } from './digest.ts';
import type { BrokerEndpoint } from './endpoint.ts';
import { EntitySet, type EntityTable, setAt } from './entities.ts';
import { listedTwice, type RawPage, scanPage } from './listing.ts';
import { asPrimary, type PrimaryEntity } from './verdict.ts';

/** One page of a listing as last read: its bytes' digest, and per entity its number and its bytes' digest. */
export interface PageMemo {
  digest: string;
  entities: Uint32Array;
  /** 8 characters an entity: the digest of its bytes (listing.ts's ScannedPage.raws). */
  raws: string;
}

/**
 * The entity listed at place k of a page last time (`memo`), when the bytes at place k now (`raws`) are the same;
 * -1 otherwise. Compared in place: this runs for every entity of every changed page.
 */
export function knownAt(memo: PageMemo | undefined, raws: string, k: number): number {
  if (!memo || k >= memo.entities.length) return -1;
  const at = DIGEST64_CHARS * k;
  for (let c = at; c < at + DIGEST64_CHARS; c++) if (memo.raws.charCodeAt(c) !== raws.charCodeAt(c)) return -1;
  return memo.entities[k] as number;
}

/** Distinct lists of attribute names kept shared between entities (most entities of a type share one). */
const MAX_NAME_LISTS = 10_000;

export class PrimaryState {
  private readonly table: EntityTable;
  /** Per entity number: its digest and its attributes' prints in one flat string (verdict.ts's PrimaryEntity). */
  private packed: Array<string | undefined> = [];
  /** Per entity number: its attribute names (a list shared between entities). */
  private names: Array<readonly string[] | undefined> = [];
  private readonly pages = new Map<number, PageMemo>();
  private readonly nameLists = new Map<string, readonly string[]>();
  private present = new EntitySet();
  private lastOffset = -1;

  constructor(table: EntityTable) {
    this.table = table;
  }

  /** The primary's side of entity `i`, when the last complete read listed it. */
  entry(i: number): PrimaryEntity | undefined {
    const packed = this.packed[i];
    if (packed === undefined) return undefined;
    return {
      names: this.names[i] ?? [],
      digest: packed.slice(0, DIGEST64_CHARS),
      prints: packed.slice(DIGEST64_CHARS),
    };
  }

  /**
   * A string whose first 8 characters are the entity's digest, or ABSENT when the primary does not hold it
   * (no copy is made: the watcher compares it in place).
   */
  keyOf(i: number): string {
    return this.packed[i] ?? ABSENT;
  }

  /** The entities of the last complete read, in number order. */
  members(): Generator<number> {
    return this.present.members(this.table.size);
  }

  /** Starts (or restarts) a read. */
  beginRead(): void {
    this.present = new EntitySet();
    this.lastOffset = -1;
  }

  /**
   * One page of the read: recognised by its digest (null), or looked into: the entities whose bytes are those
   * listed at the same place last time are kept, the others parsed and remembered. Answers how many were
   * parsed. Throws BrokerReadError.
   */
  page(endpoint: BrokerEndpoint, page: RawPage): number | null {
    this.lastOffset = page.offset;
    const digest = digestBytes(page.body);
    const memo = this.pages.get(page.offset);
    if (
      memo &&
      memo.digest === digest &&
      memo.entities.length === page.expected &&
      memo.entities.every((i) => this.packed[i] !== undefined)
    ) {
      for (const i of memo.entities) if (!this.present.add(i)) throw listedTwice(endpoint.url, this.table.ref(i).id);
      return null;
    }
    const scan = scanPage(endpoint, page);
    const numbers = new Uint32Array(scan.count);
    let parsed = 0;
    for (let k = 0; k < scan.count; k++) {
      const known = knownAt(memo, scan.raws, k);
      if (known >= 0 && this.packed[known] !== undefined) {
        if (!this.present.add(known)) throw listedTwice(endpoint.url, this.table.ref(known).id);
        numbers[k] = known;
        continue;
      }
      const e = scan.parse(k);
      parsed++;
      const i = this.table.intern(e.type, e.id);
      if (!this.present.add(i)) throw listedTwice(endpoint.url, e.id);
      numbers[k] = i;
      const next = asPrimary(e);
      if (this.packed[i]?.startsWith(next.digest)) continue;
      // Flattened: a concatenation is a tree of pieces in V8, and the primary holds 100k of these.
      setAt(this.packed, i, Buffer.from(next.digest + next.prints, 'latin1').toString('latin1'));
      setAt(this.names, i, this.sharedNames(e.names));
    }
    this.pages.set(page.offset, { digest, entities: numbers, raws: scan.raws });
    return parsed;
  }

  /** The read is complete: entities it did not list are gone from the primary; pages past its end too. */
  endRead(): void {
    for (let i = 0; i < this.packed.length; i++)
      if (this.packed[i] !== undefined && !this.present.has(i)) {
        this.packed[i] = undefined;
        this.names[i] = undefined;
      }
    for (const offset of this.pages.keys()) if (offset > this.lastOffset) this.pages.delete(offset);
  }

  private sharedNames(names: string[]): readonly string[] {
    const key = names.join('\n');
    const shared = this.nameLists.get(key);
    if (shared) return shared;
    if (this.nameLists.size < MAX_NAME_LISTS) this.nameLists.set(key, names);
    return names;
  }
}
