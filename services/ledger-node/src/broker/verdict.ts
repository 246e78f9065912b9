// The tamper verdicts, exactly as the spec's table says, plus the one case it leaves open:
//
// | situation                                                  | verdict  | observed           |
// |------------------------------------------------------------|----------|--------------------|
// | federated value equals primary value                       | OK       | the federated form |
// | federated value differs from primary value                 | TAMPERED | the federated form |
// | entity or attribute exists only in the federated broker    | TAMPERED | the federated form |
// | entity or attribute exists only in the primary (decided)   | TAMPERED | null (absent)      |
//
// A federated broker is expected to mirror the primary's entities in the watched tenant, so data
// missing there is tampering too (a deletion), not "nothing to say". Values are compared by their
// canonical form (observe.ts): type plus JSON value, metadata and sub-properties left out. An
// entity with no attributes is observed as a whole (`attribute: null`, observed `{"type": …}`).
import { entityKey, type ObservedEntity } from './observe.ts';

export type Verdict = 'OK' | 'TAMPERED';

export interface Observation {
  /** Attribute name, or null for an entity observed as a whole (it has no attributes). */
  attribute: string | null;
  /** Canonical JSON of what the federated broker holds, or null when it holds nothing. */
  observed: string | null;
  verdict: Verdict;
}

export interface EntityObservations {
  id: string;
  type: string;
  /** Sorted by attribute name (null first). */
  observations: Observation[];
}

const byAttribute = (a: Observation, b: Observation) =>
  a.attribute === b.attribute
    ? 0
    : a.attribute === null
      ? -1
      : b.attribute === null
        ? 1
        : a.attribute < b.attribute
          ? -1
          : 1;

const wholeEntity = (type: string) => JSON.stringify({ type });

function sameNames(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * Verdicts for one entity: its primary and federated versions (either may be missing).
 * @example judge(primaryRoom, federatedRoom) // [{attribute: 't', observed: '{"type":"Number","value":2}', verdict: 'TAMPERED'}]
 */
export function judge(primary: ObservedEntity | undefined, federated: ObservedEntity | undefined): Observation[] {
  const out: Observation[] = [];
  if (!federated) {
    if (!primary) return out;
    if (primary.names.length === 0) return [{ attribute: null, observed: null, verdict: 'TAMPERED' }];
    for (const name of primary.names) out.push({ attribute: name, observed: null, verdict: 'TAMPERED' });
    return out.sort(byAttribute);
  }
  if (federated.names.length === 0 && (!primary || primary.names.length === 0))
    return [{ attribute: null, observed: wholeEntity(federated.type), verdict: primary ? 'OK' : 'TAMPERED' }];
  if (primary && sameNames(primary.names, federated.names)) {
    for (let i = 0; i < federated.names.length; i++) {
      const observed = federated.forms[i] as string;
      out.push({
        attribute: federated.names[i] as string,
        observed,
        verdict: primary.forms[i] === observed ? 'OK' : 'TAMPERED',
      });
    }
    return out.sort(byAttribute);
  }
  const expected = new Map<string, string>();
  if (primary)
    for (let i = 0; i < primary.names.length; i++) expected.set(primary.names[i] as string, primary.forms[i] as string);
  for (let i = 0; i < federated.names.length; i++) {
    const name = federated.names[i] as string;
    const observed = federated.forms[i] as string;
    out.push({ attribute: name, observed, verdict: expected.get(name) === observed ? 'OK' : 'TAMPERED' });
    expected.delete(name);
  }
  for (const name of expected.keys()) out.push({ attribute: name, observed: null, verdict: 'TAMPERED' });
  return out.sort(byAttribute);
}

/** Separator of the forms in a primary entry: a raw newline never occurs in canonical JSON. */
const SEP = '\n';

interface PrimaryEntry {
  id: string;
  type: string;
  /** Attribute names, shared between entities that have the same list. */
  names: readonly string[];
  /** The forms joined by SEP: one flat string per entity instead of one per attribute. */
  joined: string;
}

/**
 * The primary's entities by key, held compactly (the watcher keeps the whole primary during a
 * pass): one string of forms per entity and one shared array per distinct list of attribute names.
 */
export class PrimaryIndex {
  private readonly byKey = new Map<string, number>();
  private readonly entries: PrimaryEntry[] = [];
  private readonly nameLists = new Map<string, readonly string[]>();

  constructor(entities: readonly ObservedEntity[] = []) {
    this.add(entities);
  }

  /** Adds a page of the primary's listing. */
  add(entities: readonly ObservedEntity[]): void {
    for (const e of entities) {
      const namesKey = e.names.join(SEP);
      let names = this.nameLists.get(namesKey);
      if (!names) {
        names = [...e.names];
        if (this.nameLists.size < 10_000) this.nameLists.set(namesKey, names);
      }
      this.byKey.set(entityKey(e.type, e.id), this.entries.length);
      this.entries.push({ id: e.id, type: e.type, names, joined: e.forms.join(SEP) });
    }
  }

  /** Position of an entity in the primary's listing, or -1. */
  indexOf(type: string, id: string): number {
    return this.byKey.get(entityKey(type, id)) ?? -1;
  }

  entry(index: number): PrimaryEntry | undefined {
    return this.entries[index];
  }

  /** The entity at `index` as read. */
  entity(index: number): ObservedEntity | undefined {
    const e = this.entries[index];
    if (!e) return undefined;
    return { id: e.id, type: e.type, names: [...e.names], forms: e.names.length === 0 ? [] : e.joined.split(SEP) };
  }

  get(type: string, id: string): ObservedEntity | undefined {
    return this.entity(this.indexOf(type, id));
  }

  get size(): number {
    return this.entries.length;
  }
}

/**
 * Verdicts of one federated broker against the primary, fed page by page: `page()` judges the
 * federated entities as they come (in listing order), `missing()` then judges the primary's entities
 * the federated broker did not list (in the primary's order). The order is the same on every node
 * reading the same data. `restart()` forgets the pages seen (the read starts over).
 */
export class BrokerComparison {
  private readonly primary: PrimaryIndex;
  private listed: Uint8Array;

  constructor(primary: PrimaryIndex) {
    this.primary = primary;
    this.listed = new Uint8Array(primary.size);
  }

  *page(federated: readonly ObservedEntity[]): Generator<EntityObservations> {
    for (const f of federated) {
      const i = this.primary.indexOf(f.type, f.id);
      if (i >= 0) this.listed[i] = 1;
      const entry = this.primary.entry(i);
      // The common case: same attributes, same forms, all OK, without splitting the primary's string.
      if (entry && f.names.length > 0 && sameNames(entry.names, f.names) && entry.joined === f.forms.join(SEP)) {
        const observations: Observation[] = f.names.map((attribute, k) => ({
          attribute,
          observed: f.forms[k] as string,
          verdict: 'OK',
        }));
        yield { id: f.id, type: f.type, observations: observations.sort(byAttribute) };
        continue;
      }
      yield { id: f.id, type: f.type, observations: judge(this.primary.entity(i), f) };
    }
  }

  *missing(): Generator<EntityObservations> {
    for (let i = 0; i < this.primary.size; i++) {
      if (this.listed[i]) continue;
      const p = this.primary.entity(i) as ObservedEntity;
      yield { id: p.id, type: p.type, observations: judge(p, undefined) };
    }
  }

  restart(): void {
    this.listed = new Uint8Array(this.primary.size);
  }
}

/** Verdicts of a complete federated read against the primary (BrokerComparison in one go). */
export function* compareBroker(
  primary: PrimaryIndex,
  federated: readonly ObservedEntity[],
): Generator<EntityObservations> {
  const comparison = new BrokerComparison(primary);
  yield* comparison.page(federated);
  yield* comparison.missing();
}
