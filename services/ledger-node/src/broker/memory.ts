// What this node's chain says was last recorded for every (scope, entity, attribute): the record's
// sequence number and a digest of its verdict and observed value. It is derived from the finalized
// chain (every node replays its blocks on start and applies each newly finalized block), so it
// survives a restart and is the same on every node that holds the same chain.
//
// Memory per entity is one string (a JSON array), which keeps 100k entities × 10 attributes × 2
// federated brokers in tens of MB rather than hundreds. A digest of all the entity's current
// observations is kept beside it: when a pass sees the same digest, nothing about the entity
// changed and no attribute needs looking at (one SHA-256 per entity per pass, not per attribute).
import { hash } from 'node:crypto';
import { canonicalize } from '@scriptorium/ledger-protocol';
import { entityKey } from './observe.ts';
import { type ObservationRecord, type ObservationScope, scopeOfRecord } from './record.ts';
import type { Observation, Verdict } from './verdict.ts';

export interface Remembered {
  seq: number;
  digest: string;
}

/** [entity digest ('' = unknown), [[attribute id (0: the whole entity), seq, digest], …]] */
type Memo = [string, Array<[number, number, string]>];

const DIGEST_CHARS = 16; // 96 bits of SHA-256, base64url

function digest(text: string): string {
  return hash('sha256', text, 'base64url').slice(0, DIGEST_CHARS);
}

/** Digest of one observation: its verdict and observed value (null = absent). */
export const observationDigest = (verdict: Verdict, observed: string | null): string =>
  digest(`${verdict}\n${observed ?? ''}`);

/** Digest of all of an entity's observations (sorted by attribute, as judge() returns them). */
export function entityDigest(observations: readonly Observation[]): string {
  let text = '';
  for (const o of observations) text += `${o.attribute ?? ''}\u0001${o.verdict}\u0001${o.observed ?? ''}\u0002`;
  return digest(text);
}

const scopeKeys = new WeakMap<ObservationScope, string>();

/** The memory's key of a scope (cached per scope object: a pass asks once per entity). */
export function scopeKey(scope: ObservationScope): string {
  let key = scopeKeys.get(scope);
  if (key === undefined) {
    key = JSON.stringify([scope.broker, scope.service ?? '', scope.servicePath ?? '']);
    scopeKeys.set(scope, key);
  }
  return key;
}

export class ObservationMemory {
  private readonly scopes = new Map<string, Map<string, string>>();
  /** Attribute names by id (id 0: the whole entity), so memos hold small numbers, not names. */
  private readonly names: Array<string | null> = [null];
  private readonly nameIds = new Map<string, number>();
  /** Height of the last block applied (-1 before any). */
  height = -1;

  private memo(scope: string, key: string): Memo | undefined {
    const raw = this.scopes.get(scope)?.get(key);
    return raw === undefined ? undefined : (JSON.parse(raw) as Memo);
  }

  private store(scope: string, key: string, memo: Memo): void {
    let entities = this.scopes.get(scope);
    if (!entities) {
      entities = new Map();
      this.scopes.set(scope, entities);
    }
    entities.set(key, JSON.stringify(memo));
  }

  /** True when the entity's observations have this digest and every one of them is on the chain. */
  settled(scope: ObservationScope, type: string, id: string, entityDigestValue: string): boolean {
    const raw = this.scopes.get(scopeKey(scope))?.get(entityKey(type, id));
    return raw?.startsWith(`["${entityDigestValue}"`) === true;
  }

  /** Remembers that the entity's current observations (this digest) all match the chain. */
  settle(scope: ObservationScope, type: string, id: string, entityDigestValue: string): void {
    const s = scopeKey(scope);
    const key = entityKey(type, id);
    const memo = this.memo(s, key) ?? ['', []];
    memo[0] = entityDigestValue;
    this.store(s, key, memo);
  }

  /** The last finalized record's seq and digest per attribute of an entity (key: attribute, null = whole entity). */
  lastRecorded(scope: ObservationScope, type: string, id: string): Map<string | null, Remembered> {
    const out = new Map<string | null, Remembered>();
    const memo = this.memo(scopeKey(scope), entityKey(type, id));
    if (memo) for (const [a, seq, d] of memo[1]) out.set(this.names[a] ?? null, { seq, digest: d });
    return out;
  }

  /** Applies one finalized record. A later record of the same attribute wins; the entity digest resets. */
  apply(record: ObservationRecord): void {
    const s = scopeKey(scopeOfRecord(record));
    const key = entityKey(record.entity_type, record.entity);
    const memo = this.memo(s, key) ?? ['', []];
    const observed = record.observed === null ? null : canonicalize(record.observed);
    const entry: [number, number, string] = [
      this.nameId(record.attribute),
      record.seq,
      observationDigest(record.verdict, observed),
    ];
    const i = memo[1].findIndex((a) => a[0] === entry[0]);
    if (i < 0) memo[1].push(entry);
    else memo[1][i] = entry;
    memo[0] = '';
    this.store(s, key, memo);
  }

  private nameId(attribute: string | null): number {
    if (attribute === null) return 0;
    let id = this.nameIds.get(attribute);
    if (id === undefined) {
      id = this.names.length;
      this.names.push(attribute);
      this.nameIds.set(attribute, id);
    }
    return id;
  }

  /** Entities remembered over every scope. */
  get size(): number {
    let n = 0;
    for (const m of this.scopes.values()) n += m.size;
    return n;
  }
}
