// The primary broker as the watcher knows it between passes: per entity its attribute names and keyed digests
// (verdict.ts's PrimaryEntity), and per page of its listing a digest of the page's bytes and the entities it
// listed with a digest of each one's bytes. A pass reads every page again but looks into only the pages whose
// bytes changed, and parses only their entities whose bytes changed; an unchanged primary costs one digest a
// page. A notified entity is read on its own and set here (`set`). Memory, for a million entities of 10
// attributes: the entity's digest in one typed array (9 bytes an entity), its attributes' prints in a SlotArena (8
// bytes each), its names a list shared between entities; 12 bytes an entity for the pages. The memory of what the
// chain holds leans on these prints (memory.ts), so a change is announced before it is made (`beforeChange`).
import { DIGEST64_CHARS, digestBytes } from './digest.ts';
import type { BrokerEndpoint, ListingQuery } from './endpoint.ts';
import { EntitySet, type EntityTable } from './entities.ts';
import { grownTo, setAt } from './growable.ts';
import { isUnreadable, listedTwice, ownerQuery, type RawPage, scanPage, type UnreadableEntity } from './listing.ts';
import { PRIMARY_DIGEST_SLOT, type PrimaryPrints } from './memory.ts';
import type { ObservedEntity } from './observe.ts';
import { SlotArena } from './slot-arena.ts';
import { asPrimary, type PrimaryEntity } from './verdict.ts';

/** One page of a listing as last read: its bytes' digest, and per entity its number and its bytes' digest. */
export interface PageMemo {
  digest: string;
  /** Entity numbers in listing order; UNREADABLE or REPEATED where there is none. */
  entities: Uint32Array;
  /** 8 characters an entity: the digest of its bytes (listing.ts's ScannedPage.raws). */
  raws: string;
}

/** In a PageMemo: an entity that could not be read (its page is looked into again on every pass). */
export const UNREADABLE = 0xffff_ffff;
/** In a PageMemo: an entity of several types listed again by a later query (it is kept in the first). */
export const REPEATED = 0xffff_fffe;
/** Whether a PageMemo entry is an entity number. */
export const isEntity = (i: number): boolean => i < REPEATED;

/**
 * The entity listed at place k of a page last time (`memo`), when the bytes at place k now (`raws`) are the same;
 * -1 otherwise. Compared in place: this runs for every entity of every changed page.
 */
export function knownAt(memo: PageMemo | undefined, raws: string, k: number): number {
  if (!memo || k >= memo.entities.length) return -1;
  const i = memo.entities[k] as number;
  if (!isEntity(i)) return -1;
  const at = DIGEST64_CHARS * k;
  for (let c = at; c < at + DIGEST64_CHARS; c++) if (memo.raws.charCodeAt(c) !== raws.charCodeAt(c)) return -1;
  return i;
}

/** Distinct lists of attribute names kept shared between entities (most entities of a type share one). */
const MAX_NAME_LISTS = 10_000;

/** What a page of the primary tells the watcher besides the state: entities it cannot read, and what changed. */
export interface PrimaryPageEvents {
  onUnreadable(e: UnreadableEntity): void;
  /** Entity `i` is new to the watcher's state, or differs from what it held. */
  onChanged(i: number): void;
}

export class PrimaryState implements PrimaryPrints {
  private readonly table: EntityTable;
  /** PRIMARY_DIGEST_SLOT bytes an entity: 1 when the primary holds it, then its digest (verdict.ts's entityDigest). */
  private digests = new Uint8Array(0);
  /** Per entity: its attributes' prints, 8 bytes each in its names' order. */
  private readonly prints = new SlotArena();
  /** Per entity number: its attribute names (a list shared between entities). */
  private names: Array<readonly string[] | undefined> = [];
  private readonly pages = new Map<string, PageMemo>();
  private readonly seenPages = new Set<string>();
  private readonly nameLists = new Map<string, readonly string[]>();
  private present = new EntitySet();
  /** Called before entity `i`'s value appears, changes or goes (memory.ts's primaryChanging). */
  private readonly beforeChange: (i: number) => void;
  /** Whether a complete read was judged (before it, nothing can be called a missed change). */
  baseline = false;

  constructor(table: EntityTable, beforeChange: (i: number) => void = () => {}) {
    this.table = table;
    this.beforeChange = beforeChange;
  }

  /** Whether the primary holds entity `i`. */
  has(i: number): boolean {
    const at = i * PRIMARY_DIGEST_SLOT;
    return at < this.digests.length && this.digests[at] === 1;
  }

  /** The primary's side of entity `i`, when it holds it. */
  entry(i: number): PrimaryEntity | undefined {
    if (!this.has(i)) return undefined;
    const at = i * PRIMARY_DIGEST_SLOT + 1;
    const prints = this.prints.get(i);
    return {
      names: this.names[i] ?? [],
      digest: String.fromCharCode(...this.digests.subarray(at, at + DIGEST64_CHARS)),
      prints: prints ? Buffer.from(prints.buffer, prints.byteOffset, prints.length).toString('latin1') : '',
    };
  }

  namesOf(i: number): readonly string[] | undefined {
    return this.has(i) ? (this.names[i] ?? []) : undefined;
  }

  printOf(i: number, attribute: string): string | undefined {
    if (!this.has(i)) return undefined;
    const k = this.names[i]?.indexOf(attribute) ?? -1;
    const prints = k < 0 ? undefined : this.prints.get(i);
    if (!prints) return undefined;
    return String.fromCharCode(...prints.subarray(k * DIGEST64_CHARS, (k + 1) * DIGEST64_CHARS));
  }

  /** The entities of the last complete read, in number order. */
  members(): Generator<number> {
    return this.present.members(this.table.size);
  }

  /** Starts (or restarts) a complete read. */
  beginRead(): void {
    this.present = new EntitySet();
    this.seenPages.clear();
  }

  /**
   * Sets entity `i` as the primary holds it now (undefined: it does not), from a read of that entity alone;
   * true when that changed what the state held.
   */
  set(i: number, e: ObservedEntity | undefined): boolean {
    if (!e) {
      if (!this.has(i)) return false;
      this.beforeChange(i);
      this.digests[i * PRIMARY_DIGEST_SLOT] = 0;
      this.prints.set(i, undefined);
      this.names[i] = undefined;
      return true;
    }
    const next = asPrimary(e);
    const at = i * PRIMARY_DIGEST_SLOT;
    if (this.has(i)) {
      let same = true;
      for (let k = 0; k < DIGEST64_CHARS && same; k++) same = this.digests[at + 1 + k] === next.digest.charCodeAt(k);
      if (same) return false;
    }
    this.beforeChange(i);
    if (at + PRIMARY_DIGEST_SLOT > this.digests.length) this.digests = grownTo(this.digests, at + PRIMARY_DIGEST_SLOT);
    this.digests[at] = 1;
    for (let k = 0; k < DIGEST64_CHARS; k++) this.digests[at + 1 + k] = next.digest.charCodeAt(k);
    this.prints.set(i, Buffer.from(next.prints, 'latin1'));
    setAt(this.names, i, this.sharedNames(e.names));
    return true;
  }

  /**
   * One page of a complete read: recognised by its digest (null), or looked into: the entities whose bytes are
   * those listed at the same place last time are kept, the others parsed and remembered. Answers how many were
   * parsed. Throws BrokerReadError.
   */
  page(
    endpoint: BrokerEndpoint,
    page: RawPage,
    queries: readonly ListingQuery[],
    events: PrimaryPageEvents,
  ): number | null {
    this.seenPages.add(page.key);
    const digest = digestBytes(page.body);
    const memo = this.pages.get(page.key);
    if (
      memo &&
      memo.digest === digest &&
      memo.entities.length === page.expected &&
      memo.entities.every((i) => i === REPEATED || (i !== UNREADABLE && this.has(i)))
    ) {
      for (const i of memo.entities)
        if (isEntity(i) && !this.present.add(i)) throw listedTwice(endpoint.url, this.table.ref(i).id);
      return null;
    }
    const scan = scanPage(endpoint, page);
    const numbers = new Uint32Array(scan.count);
    let parsed = 0;
    for (let k = 0; k < scan.count; k++) {
      const known = knownAt(memo, scan.raws, k);
      if (known >= 0 && this.has(known)) {
        if (!this.present.add(known)) throw listedTwice(endpoint.url, this.table.ref(known).id);
        numbers[k] = known;
        continue;
      }
      const e = scan.parse(k);
      parsed++;
      if (isUnreadable(e)) {
        numbers[k] = UNREADABLE;
        events.onUnreadable(e);
        continue;
      }
      if (ownerQuery(queries, e.type) < page.queryIndex) {
        numbers[k] = REPEATED;
        continue;
      }
      const i = this.table.intern(e.type, e.id);
      if (!this.present.add(i)) throw listedTwice(endpoint.url, e.id);
      numbers[k] = i;
      if (this.set(i, e)) events.onChanged(i);
    }
    this.pages.set(page.key, { digest, entities: numbers, raws: scan.raws });
    return parsed;
  }

  /**
   * The complete read is over: entities it did not list are gone from the primary (returned), and so are the
   * pages it did not read.
   */
  endRead(): number[] {
    const gone: number[] = [];
    for (let i = 0; i < this.table.size; i++) if (this.has(i) && !this.present.has(i)) gone.push(i);
    for (const i of gone) this.set(i, undefined);
    for (const key of this.pages.keys()) if (!this.seenPages.has(key)) this.pages.delete(key);
    return gone;
  }

  /** Bytes held, for the benchmark's accounts. */
  get byteLength(): number {
    let pages = 0;
    for (const m of this.pages.values()) pages += m.entities.byteLength + m.raws.length;
    return this.digests.byteLength + this.prints.byteLength + 4 * this.names.length + pages;
  }

  private sharedNames(names: string[]): readonly string[] {
    const key = names.join('\n');
    const shared = this.nameLists.get(key);
    if (shared) return shared;
    if (this.nameLists.size < MAX_NAME_LISTS) this.nameLists.set(key, names);
    return names;
  }
}
