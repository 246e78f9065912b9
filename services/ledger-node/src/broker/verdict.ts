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

/** The primary's entities by key, with a mark for those a federated broker also listed. */
export class PrimaryIndex {
  private readonly byKey = new Map<string, ObservedEntity>();
  readonly entities: readonly ObservedEntity[];

  constructor(entities: readonly ObservedEntity[]) {
    this.entities = entities;
    for (const e of entities) this.byKey.set(entityKey(e.type, e.id), e);
  }

  get(type: string, id: string): ObservedEntity | undefined {
    return this.byKey.get(entityKey(type, id));
  }

  get size(): number {
    return this.byKey.size;
  }
}

/**
 * Verdicts of a complete federated read against the primary: the federated entities in listing
 * order, then the primary's entities the federated broker lacks, in the primary's order. The
 * order is the same on every node reading the same data.
 */
export function* compareBroker(
  primary: PrimaryIndex,
  federated: readonly ObservedEntity[],
): Generator<EntityObservations> {
  const listed = new Set<string>();
  for (const f of federated) {
    listed.add(entityKey(f.type, f.id));
    yield { id: f.id, type: f.type, observations: judge(primary.get(f.type, f.id), f) };
  }
  for (const p of primary.entities) {
    if (listed.has(entityKey(p.type, p.id))) continue;
    yield { id: p.id, type: p.type, observations: judge(p, undefined) };
  }
}
