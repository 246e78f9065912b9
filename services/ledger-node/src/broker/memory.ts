// What this node's chain says was last recorded for every (scope, entity, attribute): the record's
// sequence number and a digest of its verdict and observed value. It is derived from the finalized
// chain (every node replays its blocks on start and applies each newly finalized block), so it
// survives a restart and is the same on every node that holds the same chain.
//
// Compact by design, for 100k entities × 10 attributes × several federated brokers: entities are numbered
// once (entities.ts) and each scope keeps, per entity, one Latin-1 string of 16 bytes an attribute —
// attribute number (3 bytes), seq (5 bytes), keyed digest (8 bytes) — rather than objects or maps.
// Beside it, per entity, the key of the observations last found to match the chain ("settled"; 16 bytes in one
// typed array per scope, not a string an entity): the watcher skips an entity whose key is unchanged, and a
// newly applied record clears it.
import { canonicalize } from '@scriptorium/ledger-protocol';
import { DIGEST64_CHARS, digest64 } from './digest.ts';
import { EntityTable } from './entities.ts';
import { grownTo, setAt } from './growable.ts';
import { type ObservationRecord, type ObservationScope, scopeOfRecord } from './record.ts';
import type { Verdict } from './verdict.ts';

export interface Remembered {
  seq: number;
  digest: string;
}

/** Digest of one observation: its verdict and observed value (null = absent). */
export const observationDigest = (verdict: Verdict, observed: string | null): string =>
  digest64(`${verdict}\n${observed ?? ''}`);

const ENTRY = 16;
const MAX_SEQ = 2 ** 40 - 1;
const MAX_NAMES = 2 ** 24 - 1;

/** Bytes of a settled key: two 64-bit digests (digest.ts), the entity's and its primary counterpart's. */
const HALF = DIGEST64_CHARS;
export const SETTLED_KEY = 2 * HALF;
/** Per entity in `settledKeys`: a set flag, then the key. */
const SETTLED_SLOT = 1 + SETTLED_KEY;

/** One scope's memory: per entity number, the packed attributes and the settled key. */
export class ScopeMemory {
  readonly scope: ObservationScope;
  readonly attrs: Array<string | undefined> = [];
  /** SETTLED_SLOT bytes per entity number (grown on demand; a zero flag: not settled). */
  settledKeys = new Uint8Array(0);

  constructor(scope: ObservationScope) {
    this.scope = scope;
  }
}

/** The memory's key of a scope. */
export const scopeKey = (scope: ObservationScope): string =>
  JSON.stringify([scope.broker, scope.service ?? '', scope.servicePath ?? '']);

/** Writes one attribute's entry at `at`. */
function writeEntry(bytes: Buffer, at: number, nameId: number, seq: number, digest: string): void {
  bytes.writeUIntBE(nameId, at, 3);
  bytes.writeUIntBE(Math.min(seq, MAX_SEQ), at + 3, 5);
  bytes.write(digest, at + 8, 8, 'latin1');
}

export class ObservationMemory {
  readonly entities = new EntityTable();
  private readonly scopes = new Map<string, ScopeMemory>();
  /** Attribute names by number (0: the whole entity), so entries hold small numbers, not names. */
  private readonly names: Array<string | null> = [null];
  private readonly nameIds = new Map<string, number>();
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
   * Whether the entity's observations matched the chain under this key, and still do. The key is two 64-bit
   * digests read in place: 8 characters of `digests` from `at` (the entity's), and the first 8 of `primary`.
   */
  isSettled(s: ScopeMemory, entity: number, digests: string, at: number, primary: string): boolean {
    const slot = entity * SETTLED_SLOT;
    const keys = s.settledKeys;
    if (slot >= keys.length || keys[slot] === 0) return false;
    for (let k = 0; k < HALF; k++) {
      if (keys[slot + 1 + k] !== digests.charCodeAt(at + k)) return false;
      if (keys[slot + 1 + HALF + k] !== primary.charCodeAt(k)) return false;
    }
    return true;
  }

  /** Remembers that the entity's observations (under this key, as `isSettled` reads it) all match the chain. */
  settle(s: ScopeMemory, entity: number, digests: string, at: number, primary: string): void {
    const slot = entity * SETTLED_SLOT;
    if (slot >= s.settledKeys.length)
      s.settledKeys = grownTo(s.settledKeys, Math.max(slot + SETTLED_SLOT, 1024 * SETTLED_SLOT));
    s.settledKeys[slot] = 1;
    for (let k = 0; k < HALF; k++) {
      s.settledKeys[slot + 1 + k] = digests.charCodeAt(at + k);
      s.settledKeys[slot + 1 + HALF + k] = primary.charCodeAt(k);
    }
  }

  /** The last finalized record's seq and digest per attribute of an entity (key: attribute, null = whole entity). */
  lastRecorded(s: ScopeMemory, entity: number): Map<string | null, Remembered> {
    const out = new Map<string | null, Remembered>();
    const packed = s.attrs[entity];
    if (packed === undefined) return out;
    const bytes = Buffer.from(packed, 'latin1');
    for (let at = 0; at < bytes.length; at += ENTRY)
      out.set(this.names[bytes.readUIntBE(at, 3)] ?? null, {
        seq: bytes.readUIntBE(at + 3, 5),
        digest: packed.slice(at + 8, at + ENTRY),
      });
    return out;
  }

  /** Applies one finalized record. A later record of the same attribute wins; the entity is no longer settled. */
  apply(record: ObservationRecord): void {
    const s = this.scope(scopeOfRecord(record));
    const entity = this.entities.intern(record.entity_type, record.entity);
    const observed = record.observed === null ? null : canonicalize(record.observed);
    const nameId = this.nameId(record.attribute);
    const digest = observationDigest(record.verdict, observed);
    const current = Buffer.from(s.attrs[entity] ?? '', 'latin1');
    let at = 0;
    while (at < current.length && current.readUIntBE(at, 3) !== nameId) at += ENTRY;
    const bytes = at < current.length ? current : Buffer.concat([current, Buffer.alloc(ENTRY)]);
    writeEntry(bytes, at, nameId, record.seq, digest);
    setAt(s.attrs, entity, bytes.toString('latin1'));
    const slot = entity * SETTLED_SLOT;
    if (slot < s.settledKeys.length) s.settledKeys[slot] = 0;
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
    for (const s of this.scopes.values()) for (const a of s.attrs) if (a !== undefined) n++;
    return n;
  }
}
