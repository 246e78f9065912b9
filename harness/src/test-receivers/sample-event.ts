// A tamper event with a fixed record, for tests of the notification channels.

import { type TamperEvent, tamperEvent } from '@scriptorium/ledger-node/notify';
import type { LightEvidence } from '@scriptorium/ledger-protocol';
import vectors from '@scriptorium/ledger-protocol/test-vectors' with { type: 'json' };

/** A TAMPERED record's event; its evidence is the shared vectors' (well-formed and real, for another record). */
export function sampleEvent(id = 'a'.repeat(64), entity = 'urn:ngsi-ld:Sensor:000001'): TamperEvent {
  const record = {
    id,
    broker: 'https://fed1.example:1026',
    entity,
    entity_type: 'Sensor',
    attribute: 'temperature',
    observed: { type: 'Number', value: -1000 },
    verdict: 'TAMPERED',
    seq: 1,
  };
  const evidence = (vectors.light.find((v) => v.valid) as { evidence: unknown }).evidence as LightEvidence;
  return tamperEvent({ chainId: 'dev', blockTime: 1_764_000_000_000, record, evidence });
}
