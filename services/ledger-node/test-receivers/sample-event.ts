// A tamper event with a fixed record, for tests of the notification channels.
import { type TamperEvent, tamperEvent } from '../src/notify/event.ts';

/** A TAMPERED record's event (the proof is well-formed, not a real one). */
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
  return tamperEvent({
    chainId: 'dev',
    blockTime: 1_764_000_000_000,
    record,
    proof: {
      height: 7,
      index: 0,
      merkle_root: 'b'.repeat(64),
      block_hash: 'c'.repeat(64),
      record,
      proof: [{ sibling: 'd'.repeat(64), right: true }],
    },
  });
}
