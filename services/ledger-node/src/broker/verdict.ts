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
// The primary's side is held as keyed digests of its forms (digest.ts), the federated side as read.
import { digest64 } from './digest.ts';
import type { ObservedEntity } from './observe.ts';

export type Verdict = 'OK' | 'TAMPERED';

export interface Observation {
  /** Attribute name, or null for an entity observed as a whole (it has no attributes). */
  attribute: string | null;
  /** Canonical JSON of what the federated broker holds, or null when it holds nothing. */
  observed: string | null;
  verdict: Verdict;
}

/**
 * What the primary holds for one entity, as the comparison needs it: the attribute names, a 64-bit keyed
 * digest of each attribute's canonical form (8 characters each, in the names' order), and the digest of the
 * whole entity (`entityDigest`). About 100 bytes for 10 attributes, where the forms would be ~400.
 */
export interface PrimaryEntity {
  names: readonly string[];
  prints: string;
  digest: string;
}

const PRINT = 8;

/** The digest of an entity's names and forms in listing order: equal digests, equal entities. */
export function entityDigest(e: ObservedEntity): string {
  let text = '';
  for (let i = 0; i < e.names.length; i++) text += `${e.names[i]}\u0001${e.forms[i]}\u0002`;
  return digest64(`${e.type}\u0003${text}`);
}

/** The primary's side of an entity read from a broker. */
export function asPrimary(e: ObservedEntity): PrimaryEntity {
  let prints = '';
  for (const form of e.forms) prints += digest64(form);
  return { names: e.names, prints, digest: entityDigest(e) };
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

/** Every attribute OK: the federated entity equals the primary's (same entity digest). */
export function allOk(federated: ObservedEntity): Observation[] {
  if (federated.names.length === 0) return [{ attribute: null, observed: wholeEntity(federated.type), verdict: 'OK' }];
  const out: Observation[] = [];
  for (let i = 0; i < federated.names.length; i++)
    out.push({ attribute: federated.names[i] as string, observed: federated.forms[i] as string, verdict: 'OK' });
  return out.sort(byAttribute);
}

/**
 * Verdicts for one entity: its primary and federated versions (either may be missing).
 * @example judge(asPrimary(primaryRoom), federatedRoom) // [{attribute: 't', observed: '{"type":"Number","value":2}', verdict: 'TAMPERED'}]
 */
export function judge(primary: PrimaryEntity | undefined, federated: ObservedEntity | undefined): Observation[] {
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
    for (let i = 0; i < primary.names.length; i++)
      expected.set(primary.names[i] as string, primary.prints.slice(i * PRINT, (i + 1) * PRINT));
  for (let i = 0; i < federated.names.length; i++) {
    const name = federated.names[i] as string;
    const observed = federated.forms[i] as string;
    const print = expected.get(name);
    out.push({
      attribute: name,
      observed,
      verdict: print !== undefined && print === digest64(observed) ? 'OK' : 'TAMPERED',
    });
    expected.delete(name);
  }
  for (const name of expected.keys()) out.push({ attribute: name, observed: null, verdict: 'TAMPERED' });
  return out.sort(byAttribute);
}
