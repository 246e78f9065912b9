// Observations → records: content-derived ids, one record per change, none for a repeat, a new
// sequence number after a finalized record, and the memory rebuilt from the chain after a restart.
import { describe, expect, it } from 'vitest';
import { ObservationMemory } from './memory.ts';
import { recordsFor as buildRecords } from './notary.ts';
import { observeEntity } from './observe.ts';
import { buildRecord, isObservationRecord, type ObservationRecord, type ObservationScope, recordId } from './record.ts';
import { asPrimary, judge, type Observation } from './verdict.ts';

type Scope = ObservationScope;
const scope: Scope = { broker: 'https://fed1.example:1026', service: 'city', servicePath: '/a' };
const room = (t: number, extra: Record<string, unknown> = {}) =>
  observeEntity('ngsi-v2', { id: 'Room1', type: 'Room', t: { type: 'Number', value: t }, ...extra });
const primary = asPrimary(room(21));
const observe = (federated: ReturnType<typeof room>): Observation[] => judge(primary, federated);
const ROOM1 = { id: 'Room1', type: 'Room' };

/** The records the watcher would build for Room1's observations in this scope. */
const recordsFor = (memory: ObservationMemory, s: Scope, observations: Observation[]) =>
  buildRecords(memory, memory.scope(s), memory.entities.intern('Room', 'Room1'), ROOM1, observations);

/** What a node does once a block holding these records is final. */
function finalize(memory: ObservationMemory, records: ObservationRecord[]): void {
  for (const r of records) memory.apply(r);
}

describe('integrity records', () => {
  it('have an id derived from the content alone: same observation, same id; any field changed, another id', () => {
    const o = judge(primary, room(99))[0] as Observation;
    const a = buildRecord(scope, { id: 'Room1', type: 'Room' }, o, 0);
    const b = buildRecord({ ...scope }, { id: 'Room1', type: 'Room' }, { ...o }, 0);
    expect(a).toEqual(b);
    expect(a.id).toMatch(/^[0-9a-f]{64}$/);
    const { id, ...fields } = a;
    expect(recordId(fields)).toBe(id);
    expect(buildRecord(scope, { id: 'Room1', type: 'Room' }, o, 1).id).not.toBe(id);
    expect(buildRecord({ ...scope, broker: 'https://fed2' }, { id: 'Room1', type: 'Room' }, o, 0).id).not.toBe(id);
    expect(a).toMatchObject({
      broker: scope.broker,
      service: 'city',
      service_path: '/a',
      entity: 'Room1',
      entity_type: 'Room',
      attribute: 't',
      observed: { type: 'Number', value: 99 },
      verdict: 'TAMPERED',
      seq: 0,
    });
    expect(isObservationRecord(a)).toBe(true);
    expect(isObservationRecord({ id: 'synthetic-1', entity: 'x', value: 3 })).toBe(false);
  });
});

describe('recordsFor and the memory', () => {
  it('records the first observation, nothing while it is unchanged, then exactly the change', () => {
    const memory = new ObservationMemory();
    const first = recordsFor(memory, scope, observe(room(21)));
    expect(first.map((r) => [r.verdict, r.seq])).toEqual([['OK', 0]]);
    // Not final yet: the same observation gives the same record (the mempool drops the repeat).
    expect(recordsFor(memory, scope, observe(room(21)))).toEqual(first);
    finalize(memory, first);
    expect(recordsFor(memory, scope, observe(room(21)))).toEqual([]);
    expect(recordsFor(memory, scope, observe(room(21)))).toEqual([]);

    const tampered = recordsFor(memory, scope, observe(room(99)));
    expect(tampered.map((r) => [r.attribute, r.verdict, r.seq])).toEqual([['t', 'TAMPERED', 1]]);
    finalize(memory, tampered);
    expect(recordsFor(memory, scope, observe(room(99)))).toEqual([]);

    // Tampered to another value: a new TAMPERED record (the observed value changed).
    const again = recordsFor(memory, scope, observe(room(98)));
    expect(again.map((r) => [r.verdict, r.seq])).toEqual([['TAMPERED', 2]]);
    finalize(memory, again);

    const restored = recordsFor(memory, scope, observe(room(21)));
    expect(restored.map((r) => [r.verdict, r.seq])).toEqual([['OK', 3]]);
    finalize(memory, restored);

    // The same tamper as before is a new record, not the old id.
    const repeat = recordsFor(memory, scope, observe(room(99)));
    expect(repeat).toHaveLength(1);
    expect(repeat[0]?.id).not.toBe(tampered[0]?.id);
  });

  it('only the changed attribute of an entity gets a record', () => {
    const memory = new ObservationMemory();
    const extra = { u: { type: 'Text', value: 'x' } };
    const p = asPrimary(room(21, extra));
    const obs = (f: ReturnType<typeof room>) => judge(p, f);
    finalize(memory, recordsFor(memory, scope, obs(room(21, extra))));
    const out = recordsFor(memory, scope, obs(room(21, { u: { type: 'Text', value: 'evil' } })));
    expect(out.map((r) => [r.attribute, r.verdict])).toEqual([['u', 'TAMPERED']]);
  });

  it('the memory rebuilt from the chain after a restart decides the same', () => {
    const memory = new ObservationMemory();
    const chain: ObservationRecord[] = [];
    for (const t of [21, 99, 21]) {
      const rs = recordsFor(memory, scope, observe(room(t)));
      finalize(memory, rs);
      chain.push(...rs);
    }
    const restarted = new ObservationMemory();
    finalize(restarted, JSON.parse(JSON.stringify(chain)) as ObservationRecord[]);
    expect(recordsFor(restarted, scope, observe(room(21)))).toEqual([]);
    expect(recordsFor(restarted, scope, observe(room(99))).map((r) => r.seq)).toEqual([3]);
    expect(recordsFor(memory, scope, observe(room(99)))).toEqual(recordsFor(restarted, scope, observe(room(99))));
  });

  it('scopes are separate: another broker or tenant starts its own sequence', () => {
    const memory = new ObservationMemory();
    finalize(memory, recordsFor(memory, scope, observe(room(21))));
    expect(recordsFor(memory, { ...scope, servicePath: '/b' }, observe(room(21))).map((r) => r.seq)).toEqual([0]);
    expect(recordsFor(memory, { broker: 'https://fed2' }, observe(room(21))).map((r) => r.seq)).toEqual([0]);
  });
});
