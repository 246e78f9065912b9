// Which records an entity's observations need: one for each attribute whose verdict or observed
// value differs from the last record the chain holds for it ("identical observations are not
// recorded repeatedly"). Records already pending or committed are filtered by the caller through
// the mempool's seen-set (their ids are content-derived, so a repeat has the same id).
import { type ObservationMemory, observationDigest, type ScopeMemory } from './memory.ts';
import { buildRecord, type ObservationRecord } from './record.ts';
import type { Observation } from './verdict.ts';

/**
 * @example recordsFor(memory, memory.scope({broker: 'https://fed1'}), 7, {id: 'R1', type: 'Room'}, observations) // [] when all recorded
 */
export function recordsFor(
  memory: ObservationMemory,
  scope: ScopeMemory,
  entityNumber: number,
  entity: { id: string; type: string },
  observations: readonly Observation[],
): ObservationRecord[] {
  const out: ObservationRecord[] = [];
  const recorded = memory.lastRecorded(scope, entityNumber);
  for (const o of observations) {
    const last = recorded.get(o.attribute);
    if (last && last.digest === observationDigest(o.verdict, o.observed)) continue;
    out.push(buildRecord(scope.scope, entity, o, last ? last.seq + 1 : 0));
  }
  return out;
}
