// Reading entities into canonical attribute forms; shapes no broker would send are ObserveErrors,
// and arbitrary JSON never throws anything else (fuzzed).

import { canonicalize } from '@scriptorium/ledger-protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ObserveError, observeEntity } from './observe.ts';

describe('observeEntity', () => {
  it('NGSI-v2: {type, value} canonical, metadata left out', () => {
    const e = observeEntity('ngsi-v2', {
      id: 'Room1',
      type: 'Room',
      temperature: { value: 23.5, type: 'Number', metadata: { unit: { type: 'Text', value: 'C' } } },
      pos: { type: 'StructuredValue', value: { y: 2, x: 1 } },
      nothing: { type: 'None', value: null },
    });
    expect(e).toEqual({
      id: 'Room1',
      type: 'Room',
      names: ['temperature', 'pos', 'nothing'],
      forms: [
        '{"type":"Number","value":23.5}',
        '{"type":"StructuredValue","value":{"x":1,"y":2}}',
        '{"type":"None","value":null}',
      ],
    });
  });

  it('NGSI-LD: the value member each attribute type defines, keys in RFC 8785 order', () => {
    const e = observeEntity('ngsi-ld', {
      id: 'urn:ngsi-ld:Room:1',
      type: 'Room',
      '@context': 'https://example.org/ctx.jsonld',
      createdAt: '2026-01-01T00:00:00Z',
      p: { type: 'Property', value: 1, observedAt: '2026-01-01T00:00:00Z' },
      r: { type: 'Relationship', object: 'urn:x' },
      l: { type: 'LanguageProperty', languageMap: { en: 'a' } },
      j: { type: 'JsonProperty', json: { k: [1] } },
    });
    expect(e.names).toEqual(['p', 'r', 'l', 'j']);
    expect(e.forms).toEqual([
      '{"type":"Property","value":1}',
      '{"object":"urn:x","type":"Relationship"}',
      '{"languageMap":{"en":"a"},"type":"LanguageProperty"}',
      '{"json":{"k":[1]},"type":"JsonProperty"}',
    ]);
    for (const f of e.forms) expect(JSON.stringify(JSON.parse(f))).toBe(f);
  });

  it('refuses shapes no broker sends', () => {
    expect(() => observeEntity('ngsi-v2', [])).toThrow(ObserveError);
    expect(() => observeEntity('ngsi-v2', { type: 'T' })).toThrow(/no string id/);
    expect(() => observeEntity('ngsi-v2', { id: 'x' })).toThrow(/no valid type/);
    // NGSI-v2 has no type lists; NGSI-LD's may not be empty, nor hold a name with the list separator.
    for (const [api, type] of [
      ['ngsi-v2', ['A']],
      ['ngsi-ld', []],
      ['ngsi-ld', ['A', 7]],
      ['ngsi-ld', 'A,B'],
    ] as const)
      expect(() => observeEntity(api, { id: 'x', type }), JSON.stringify(type)).toThrow(/no valid type/);
    // The error carries the id once there is one (the watcher reports the entity by it).
    try {
      observeEntity('ngsi-ld', { id: 'urn:x', type: 'T', a: { type: 'Weird' } });
    } catch (err) {
      expect((err as ObserveError).entityId).toBe('urn:x');
    }
    expect(() => observeEntity('ngsi-v2', { id: 'x', type: 'T', a: 5 })).toThrow(/not an object/);
    expect(() => observeEntity('ngsi-v2', { id: 'x', type: 'T', a: { value: 5 } })).toThrow(/no type/);
    expect(() => observeEntity('ngsi-ld', { id: 'x', type: 'T', a: { type: 'Weird', value: 1 } })).toThrow(
      /unknown type/,
    );
  });

  it('an NGSI-LD entity of several types has the set of them: sorted, once each', () => {
    const a = observeEntity('ngsi-ld', { id: 'urn:x', type: ['Sensor', 'Device', 'Sensor'] });
    const b = observeEntity('ngsi-ld', { id: 'urn:x', type: ['Device', 'Sensor'] });
    expect(a.type).toBe('Device,Sensor');
    expect(b.type).toBe(a.type);
    expect(observeEntity('ngsi-ld', { id: 'urn:y', type: ['Sensor'] }).type).toBe('Sensor');
  });

  it('fuzz: any JSON is an entity or an ObserveError, never another exception', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom('ngsi-v2' as const, 'ngsi-ld' as const), (value, api) => {
        try {
          const e = observeEntity(api, value);
          expect(e.names.length).toBe(e.forms.length);
        } catch (err) {
          expect(err).toBeInstanceOf(ObserveError);
        }
      }),
      { numRuns: 2000, seed: 11 },
    );
    fc.assert(
      fc.property(
        fc.dictionary(
          fc.string(),
          fc.record({ type: fc.constantFrom('Number', 'Property', 'Relationship'), value: fc.jsonValue() }),
        ),
        (attrs) => {
          try {
            observeEntity('ngsi-ld', { id: 'urn:x', type: 'T', ...attrs });
          } catch (err) {
            expect(err).toBeInstanceOf(ObserveError);
          }
        },
      ),
      { numRuns: 1000, seed: 12 },
    );
  });
});

describe('canonical forms', () => {
  it('equal canonicalize() for any JSON value, including array-index keys and odd numbers', () => {
    fc.assert(
      fc.property(
        fc.jsonValue(),
        fc.string(),
        fc.constantFrom('ngsi-v2' as const, 'ngsi-ld' as const),
        (value, type, api) => {
          const attr = api === 'ngsi-v2' ? { type: type || 'T', value } : { type: 'Relationship', object: value };
          const [form] = observeEntity(api, { id: 'x', type: 'T', a: attr }).forms;
          const expected =
            api === 'ngsi-v2'
              ? canonicalize({ type: type || 'T', value })
              : canonicalize({ type: 'Relationship', object: value });
          expect(form).toBe(expected);
        },
      ),
      { numRuns: 3000, seed: 13 },
    );
    const idx = observeEntity('ngsi-v2', {
      id: 'x',
      type: 'T',
      a: { type: 'S', value: { 10: 1, 9: 2, b: { 2: 0, a: 1 } } },
    });
    expect(idx.forms[0]).toBe('{"type":"S","value":{"10":1,"9":2,"b":{"2":0,"a":1}}}');
  });
});
