// An observation as an integrity record. Its id is the SHA-256 of the record's canonical form
// (RFC 8785) without the id, so it is derived from the content alone (broker and tenant, entity,
// attribute, observed value, verdict, sequence), never from the node or the clock: validators
// observing the same change build the same record, and the chain holds it once.
//
// `seq` numbers the records of one (broker, tenant, entity, attribute): 0 for the first, then the
// last finalized one's + 1. It keeps a value seen again later (tampered, restored, tampered the same
// way) a new record rather than a duplicate id the chain would refuse.

import type { IntegrityRecord } from '@scriptorium/ledger-protocol';
import { canonicalize, sha256Hex } from '@scriptorium/ledger-protocol';
import type { Observation, Verdict } from './verdict.ts';

/** Where the observations come from: the federated broker and the watched tenant. */
export interface ObservationScope {
  broker: string;
  service?: string | undefined;
  servicePath?: string | undefined;
}

/** A JSON value, as the chain's IntegrityRecord allows in any field besides id. */
type Json = IntegrityRecord[string];

/** The record's content: everything its id is derived from. */
export type ObservationFields = {
  broker: string;
  service?: string;
  service_path?: string;
  entity: string;
  entity_type: string;
  attribute: string | null;
  /** What the federated broker holds ({type, value} or the NGSI-LD equivalent), null when absent. */
  observed: Json;
  verdict: Verdict;
  seq: number;
};

/** An integrity record written by the watcher (assignable to the chain's IntegrityRecord). */
export type ObservationRecord = { id: string } & ObservationFields;

const encoder = new TextEncoder();

/** The content-derived id of a record's fields (everything but `id`). */
export function recordId(fields: ObservationFields): string {
  return sha256Hex(encoder.encode(canonicalize(fields)));
}

/** @example buildRecord({broker: 'https://fed1'}, {id: 'R1', type: 'Room'}, obs, 0).id // 64 hex */
export function buildRecord(
  scope: ObservationScope,
  entity: { id: string; type: string },
  observation: Observation,
  seq: number,
): ObservationRecord {
  const fields: ObservationFields = {
    broker: scope.broker,
    ...(scope.service ? { service: scope.service } : {}),
    ...(scope.servicePath ? { service_path: scope.servicePath } : {}),
    entity: entity.id,
    entity_type: entity.type,
    attribute: observation.attribute,
    observed: observation.observed === null ? null : (JSON.parse(observation.observed) as Json),
    verdict: observation.verdict,
    seq,
  };
  return { id: recordId(fields), ...fields };
}

/** True for a record the watcher wrote (a finalized block may also hold other records). */
export function isObservationRecord(r: IntegrityRecord): r is IntegrityRecord & ObservationRecord {
  return (
    typeof r.id === 'string' &&
    typeof r.broker === 'string' &&
    typeof r.entity === 'string' &&
    typeof r.entity_type === 'string' &&
    (typeof r.attribute === 'string' || r.attribute === null) &&
    (r.verdict === 'OK' || r.verdict === 'TAMPERED') &&
    Number.isSafeInteger(r.seq) &&
    (r.seq as number) >= 0 &&
    'observed' in r
  );
}

/** The scope a record belongs to, as the memory keys it. */
export const scopeOfRecord = (r: ObservationRecord): ObservationScope => ({
  broker: r.broker,
  service: r.service,
  servicePath: r.service_path,
});
