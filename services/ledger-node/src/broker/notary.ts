// Which records an entity's observations need: one for each attribute whose verdict or observed
// value differs from the last record the chain holds for it ("identical observations are not
// recorded repeatedly"). Records already pending or committed are filtered by the caller through
// the mempool's seen-set (their ids are content-derived, so a repeat has the same id).
import { entityDigest, type ObservationMemory, observationDigest } from './memory.ts';
import { buildRecord, type ObservationRecord, type ObservationScope } from './record.ts';
import type { EntityObservations } from './verdict.ts';

/**
 * @param includeOk false when no more OK records can be taken (the mempool is full): OK observations are then
 * neither built nor settled (a later pass records them), TAMPERED ones still are.
 * @example recordsFor(memory, {broker: 'https://fed1'}, {id: 'R1', type: 'Room', observations}) // [] when settled
 */
export function recordsFor(
  memory: ObservationMemory,
  scope: ObservationScope,
  entity: EntityObservations,
  includeOk = true,
): ObservationRecord[] {
  const digest = entityDigest(entity.observations);
  if (memory.settled(scope, entity.type, entity.id, digest)) return [];
  const out: ObservationRecord[] = [];
  let skipped = false;
  const recorded = memory.lastRecorded(scope, entity.type, entity.id);
  for (const o of entity.observations) {
    const last = recorded.get(o.attribute);
    if (last && last.digest === observationDigest(o.verdict, o.observed)) continue;
    if (!includeOk && o.verdict === 'OK') {
      skipped = true;
      continue;
    }
    out.push(buildRecord(scope, entity, o, last ? last.seq + 1 : 0));
  }
  if (out.length === 0 && !skipped) memory.settle(scope, entity.type, entity.id, digest);
  return out;
}
