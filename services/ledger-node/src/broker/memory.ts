// What this node's chain says was last recorded for every (scope, entity, attribute): the record's
// sequence number and a digest of its verdict and observed value. It is derived from the finalized
// chain (every node replays its blocks on start and applies each newly finalized block), so it
// survives a restart and is the same on every node that holds the same chain.
//
// Compact by design, for 1,000,000 entities × 10 attributes × several federated brokers: entities are numbered once
// (entities.ts) and each scope keeps, per entity, one record in a SlotArena (slot-arena.ts), each attribute in it
// an attribute number and the seq (varints), and the keyed digest (8 bytes) only where it is not implied: a record
// OK whose observed value is the primary's current value has as its digest the primary's own print of that value
// (the digest of an OK observation is the digest of its value, verdict.ts's print), so it is not stored. And when
// every attribute the primary lists for the entity has such a record with seq 0 — the steady state of a healthy
// deployment — the record says so in one byte, whatever the number of attributes. Before the primary's value of an entity changes, the
// memory writes out the digests it implied (`primaryChanging`); once an entity is judged and found to match the chain,
// the digests the primary implies are dropped again (`settle`).
// Beside it, per entity, the key of the observations last found to match the chain ("settled": a digest of the
// entity's bytes, 9 bytes in one typed array per scope): the watcher skips an entity whose key is unchanged; a newly
// applied record clears it, and so does a change of the entity on the primary (`primaryChanging`).
import { canonicalize } from '@scriptorium/ledger-protocol';
import { DIGEST64_CHARS, digest64 } from './digest.ts';
import { EntityTable } from './entities.ts';
import { grownTo } from './growable.ts';
import { type ObservationRecord, type ObservationScope, scopeOfRecord } from './record.ts';
import { readVarint, SlotArena, varintLength, writeVarint } from './slot-arena.ts';
import type { Verdict } from './verdict.ts';

export interface Remembered {
  seq: number;
  digest: string;
}

/**
 * Digest of one observation: its verdict and observed value (null = absent). An OK observation's digest is its
 * value's (what verdict.ts calls its print), so that the primary's prints stand for the digests of OK records.
 */
export const observationDigest = (verdict: Verdict, observed: string | null): string =>
  verdict === 'OK' ? digest64(observed ?? '') : digest64(`${verdict}\n${observed ?? ''}`);

/** The primary's side, as the memory needs it. */
export interface PrimaryPrints {
  /** The primary's print of an attribute of entity `i` (the digest of its value), or undefined. */
  printOf(i: number, attribute: string): string | undefined;
  /** The primary's attribute names of entity `i`, or undefined when it does not hold it. */
  namesOf(i: number): readonly string[] | undefined;
}

const MAX_SEQ = 2 ** 40 - 1;
const MAX_NAMES = 2 ** 24 - 1;

const HALF = DIGEST64_CHARS;
/** Per entity in `settledKeys`: a set flag, then the key (a 64-bit digest of the entity's bytes, digest.ts). */
const SETTLED_SLOT = 1 + HALF;
/** Per entity in the primary's digests (primary.ts): a flag (1: the primary holds it), then its digest. */
export const PRIMARY_DIGEST_SLOT = 1 + HALF;

/** One scope's memory: per entity number, its record of attributes, and the settled key. */
export class ScopeMemory {
  readonly scope: ObservationScope;
  readonly attrs = new SlotArena();
  /** Per entity: 1 when its record implies digests from the primary (they are written out before it changes). */
  implied = new Uint8Array(0);
  /** SETTLED_SLOT bytes per entity number (grown on demand; a zero flag: not settled). */
  settledKeys = new Uint8Array(0);

  constructor(scope: ObservationScope) {
    this.scope = scope;
  }
}

/** The memory's key of a scope. */
export const scopeKey = (scope: ObservationScope): string =>
  JSON.stringify([scope.broker, scope.service ?? '', scope.servicePath ?? '']);

/** One attribute's entry, decoded: `digest` undefined when the primary's print implies it. */
interface Entry {
  nameId: number;
  seq: number;
  digest: string | undefined;
}

/**
 * A record: a flags byte (DEFAULTS: every attribute the primary lists and the entries do not name is OK, seq 0,
 * its digest implied), then the entries.
 */
const DEFAULTS = 1;

function decode(bytes: Uint8Array, defaults: () => number[]): Entry[] {
  const out: Entry[] = [];
  for (let at = 1; at < bytes.length; ) {
    const name = readVarint(bytes, at);
    const tag = readVarint(bytes, name.next);
    at = tag.next;
    let digest: string | undefined;
    if (tag.value % 2 === 1) {
      digest = String.fromCharCode(...bytes.subarray(at, at + HALF));
      at += HALF;
    }
    out.push({ nameId: name.value, seq: Math.floor(tag.value / 2), digest });
  }
  if ((bytes[0] as number) & DEFAULTS)
    for (const nameId of defaults())
      if (!out.some((e) => e.nameId === nameId)) out.push({ nameId, seq: 0, digest: undefined });
  return out;
}

/** The record of `entries`; those the primary's names (`listed`, as numbers) imply are left to the DEFAULTS flag. */
function encode(entries: readonly Entry[], listed: readonly number[] | undefined): Uint8Array {
  const implied = (e: Entry) => e.seq === 0 && e.digest === undefined && listed?.includes(e.nameId) === true;
  const defaults = listed?.every((n) => entries.some((e) => e.nameId === n && implied(e))) === true;
  const kept = defaults ? entries.filter((e) => !implied(e)) : entries;
  let length = 1;
  for (const e of kept)
    length += varintLength(e.nameId) + varintLength(e.seq * 2 + 1) + (e.digest === undefined ? 0 : HALF);
  const bytes = new Uint8Array(length);
  bytes[0] = defaults ? DEFAULTS : 0;
  let at = 1;
  for (const e of kept) {
    at = writeVarint(bytes, at, e.nameId);
    at = writeVarint(bytes, at, e.seq * 2 + (e.digest === undefined ? 0 : 1));
    if (e.digest !== undefined) {
      for (let k = 0; k < HALF; k++) bytes[at + k] = e.digest.charCodeAt(k);
      at += HALF;
    }
  }
  return bytes;
}

export class ObservationMemory {
  readonly entities = new EntityTable();
  private readonly scopes = new Map<string, ScopeMemory>();
  /** Attribute names by number (0: the whole entity), so entries hold small numbers, not names. */
  private readonly names: Array<string | null> = [null];
  private readonly nameIds = new Map<string, number>();
  /** The primary's prints (set by the watcher); without it every digest is stored. */
  primary: PrimaryPrints | undefined;
  /** Height of the last block applied (-1 before any). */
  height = -1;

  /** The memory of one scope (created on first use). */
  scope(scope: ObservationScope): ScopeMemory {
    const key = scopeKey(scope);
    let s = this.scopes.get(key);
    if (!s) {
      s = new ScopeMemory({ broker: scope.broker, service: scope.service, servicePath: scope.servicePath });
      this.scopes.set(key, s);
    }
    return s;
  }

  /**
   * Whether the entity's observations matched the chain under this key, and still do: 8 characters of `digests`
   * from `at`, the digest of the entity's bytes as listed (its primary counterpart has not changed since, or the key
   * would have been cleared).
   */
  isSettled(s: ScopeMemory, entity: number, digests: string, at: number): boolean {
    const slot = entity * SETTLED_SLOT;
    const keys = s.settledKeys;
    if (slot >= keys.length || keys[slot] === 0) return false;
    for (let k = 0; k < HALF; k++) if (keys[slot + 1 + k] !== digests.charCodeAt(at + k)) return false;
    return true;
  }

  /**
   * Remembers that the entity's observations (under this key, as `isSettled` reads it) all match the chain, and
   * drops from its record the digests the primary now implies.
   */
  settle(s: ScopeMemory, entity: number, digests: string, at: number): void {
    const slot = entity * SETTLED_SLOT;
    if (slot >= s.settledKeys.length) s.settledKeys = grownTo(s.settledKeys, slot + SETTLED_SLOT);
    s.settledKeys[slot] = 1;
    for (let k = 0; k < HALF; k++) s.settledKeys[slot + 1 + k] = digests.charCodeAt(at + k);
    this.imply(s, entity);
  }

  /** The last finalized record's seq and digest per attribute of an entity (key: attribute, null = whole entity). */
  lastRecorded(s: ScopeMemory, entity: number): Map<string | null, Remembered> {
    const out = new Map<string | null, Remembered>();
    const bytes = s.attrs.get(entity);
    if (!bytes) return out;
    for (const e of this.decode(bytes, entity)) {
      const name = this.names[e.nameId] ?? null;
      // An implied digest is the primary's print (primaryChanging keeps that true); none there: nothing matches.
      const digest = e.digest ?? (name === null ? undefined : this.primary?.printOf(entity, name)) ?? '';
      out.set(name, { seq: e.seq, digest });
    }
    return out;
  }

  /** Applies one finalized record. A later record of the same attribute wins; the entity is no longer settled. */
  apply(record: ObservationRecord): void {
    const s = this.scope(scopeOfRecord(record));
    const entity = this.entities.intern(record.entity_type, record.entity);
    const observed = record.observed === null ? null : canonicalize(record.observed);
    const nameId = this.nameId(record.attribute);
    const digest = observationDigest(record.verdict, observed);
    const bytes = s.attrs.get(entity);
    const entries = bytes ? this.decode(bytes, entity) : [];
    const implied =
      record.verdict === 'OK' &&
      record.attribute !== null &&
      this.primary?.printOf(entity, record.attribute) === digest;
    const next: Entry = { nameId, seq: Math.min(record.seq, MAX_SEQ), digest: implied ? undefined : digest };
    const at = entries.findIndex((e) => e.nameId === nameId);
    if (at >= 0) entries[at] = next;
    else entries.push(next);
    s.attrs.set(entity, encode(entries, this.listed(entity)));
    this.markImplied(s, entity, entries);
    const slot = entity * SETTLED_SLOT;
    if (slot < s.settledKeys.length) s.settledKeys[slot] = 0;
  }

  /**
   * The primary's value of `entity` is about to change (appear, or go): every digest its prints imply is written out
   * first, in every scope, so that what the memory says was recorded does not change with it; and the entity is no
   * longer settled anywhere (it must be judged against its new counterpart).
   */
  primaryChanging(entity: number): void {
    for (const s of this.scopes.values()) {
      const slot = entity * SETTLED_SLOT;
      if (slot < s.settledKeys.length) s.settledKeys[slot] = 0;
      if (entity >= s.implied.length || s.implied[entity] === 0) continue;
      const entries = this.decode(s.attrs.get(entity) as Uint8Array, entity);
      for (const e of entries) {
        if (e.digest !== undefined) continue;
        const name = this.names[e.nameId];
        e.digest = (name ? this.primary?.printOf(entity, name) : undefined) ?? '\u0000'.repeat(HALF);
      }
      s.attrs.set(entity, encode(entries, undefined));
      s.implied[entity] = 0;
    }
  }

  /** Drops the digests of `entity`'s record in `s` that the primary's current prints imply. */
  private imply(s: ScopeMemory, entity: number): void {
    const bytes = s.attrs.get(entity);
    if (!bytes || !this.primary) return;
    const entries = this.decode(bytes, entity);
    let changed = false;
    for (const e of entries) {
      const name = this.names[e.nameId];
      if (e.digest === undefined || !name || this.primary.printOf(entity, name) !== e.digest) continue;
      e.digest = undefined;
      changed = true;
    }
    const record = encode(entries, this.listed(entity));
    if (!changed && record.length >= bytes.length) return;
    s.attrs.set(entity, record);
    this.markImplied(s, entity, entries);
  }

  private decode(bytes: Uint8Array, entity: number): Entry[] {
    return decode(bytes, () => this.listed(entity) ?? []);
  }

  /** The primary's attribute names of `entity`, as the memory's numbers (undefined: the primary holds none). */
  private listed(entity: number): number[] | undefined {
    return this.primary?.namesOf(entity)?.map((name) => this.nameId(name));
  }

  private markImplied(s: ScopeMemory, entity: number, entries: readonly Entry[]): void {
    const implied = entries.some((e) => e.digest === undefined) ? 1 : 0;
    if (entity >= s.implied.length) {
      if (implied === 0) return;
      s.implied = grownTo(s.implied, entity + 1);
    }
    s.implied[entity] = implied;
  }

  private nameId(attribute: string | null): number {
    if (attribute === null) return 0;
    let id = this.nameIds.get(attribute);
    if (id === undefined) {
      id = this.names.length;
      if (id > MAX_NAMES) throw new RangeError('more than 16M distinct attribute names');
      this.names.push(attribute);
      this.nameIds.set(attribute, id);
    }
    return id;
  }

  /** Entities remembered over every scope. */
  get size(): number {
    let n = 0;
    for (const s of this.scopes.values()) for (let i = 0; i < this.entities.size; i++) if (s.attrs.has(i)) n++;
    return n;
  }

  /** Bytes held by the memory's own structures, for the benchmark's accounts. */
  get byteLength(): number {
    let n = this.entities.byteLength;
    for (const s of this.scopes.values()) n += s.attrs.byteLength + s.implied.byteLength + s.settledKeys.byteLength;
    return n;
  }
}
