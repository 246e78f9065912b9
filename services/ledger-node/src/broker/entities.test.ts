// The entity table against a Map: each key numbered once, in order, found again, read back — over non-ASCII ids,
// ids that differ only by type, and enough keys to grow its buffers and rehash many times.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EntityTable } from './entities.ts';

describe('EntityTable', () => {
  it('numbers each (type, id) once and gives it back', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom('Room', 'Sensor', 'Device,Sensor', 'Tür'), fc.string()), { maxLength: 400 }),
        (keys) => {
          const table = new EntityTable();
          const model = new Map<string, number>();
          for (const [type, id] of keys) {
            const k = JSON.stringify([type, id]);
            const i = table.intern(type, id);
            if (!model.has(k)) model.set(k, model.size);
            expect(i).toBe(model.get(k));
          }
          expect(table.size).toBe(model.size);
          for (const [k, i] of model) {
            const [type, id] = JSON.parse(k) as [string, string];
            expect(table.find(type, id)).toBe(i);
            expect(table.ref(i)).toEqual({ id, type });
          }
          expect(table.find('Nothing', 'x')).toBeUndefined();
        },
      ),
      { numRuns: 300, seed: 4 },
    );
  });

  it('a million keys: found again, ~50 bytes each', () => {
    const table = new EntityTable();
    for (let i = 0; i < 1_000_000; i++) table.intern('Sensor', `urn:ngsi-ld:Sensor:${String(i).padStart(7, '0')}`);
    expect(table.find('Sensor', 'urn:ngsi-ld:Sensor:0999999')).toBe(999_999);
    expect(table.ref(123_456)).toEqual({ id: 'urn:ngsi-ld:Sensor:0123456', type: 'Sensor' });
    expect(table.byteLength / 1_000_000).toBeLessThan(80);
  });
});
