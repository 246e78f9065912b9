// The verdict table, row by row, on NGSI-v2 and NGSI-LD, and how values compare: type plus the
// canonical JSON value (number vs string "1", nested objects in any key order, arrays in order).
import { describe, expect, it } from 'vitest';
import type { BrokerApi } from './endpoint.ts';
import { observeEntity } from './observe.ts';
import { allOk, asPrimary, entityDigest, judge as judgeOf } from './verdict.ts';

type Attrs = Record<string, unknown>;
type Entity = ReturnType<typeof observeEntity>;
/** The verdicts of a federated entity against a primary one, the primary held as the watcher holds it. */
const judge = (primary: Entity | undefined, federated: Entity | undefined) =>
  judgeOf(primary && asPrimary(primary), federated);
/** An entity as each API represents an attribute of type T holding value V. */
function entity(api: BrokerApi, id: string, attrs: Record<string, [string, unknown]>) {
  const raw: Attrs = { id, type: 'Room' };
  for (const [name, [type, value]] of Object.entries(attrs))
    raw[name] = api === 'ngsi-v2' ? { type, value, metadata: {} } : { type: 'Property', value };
  return observeEntity(api, raw);
}

describe.each(['ngsi-v2', 'ngsi-ld'] as const)('verdict table on %s', (api) => {
  const P = (attrs: Record<string, [string, unknown]>) => entity(api, 'urn:r:1', attrs);

  it('federated value equals primary value → OK', () => {
    expect(judge(P({ t: ['Number', 21] }), P({ t: ['Number', 21] }))).toEqual([
      { attribute: 't', observed: expect.any(String), verdict: 'OK' },
    ]);
  });

  it('federated value differs from primary value → TAMPERED, with the federated value observed', () => {
    const [o] = judge(P({ t: ['Number', 21] }), P({ t: ['Number', 99] }));
    expect(o?.verdict).toBe('TAMPERED');
    expect(JSON.parse(o?.observed as string)).toMatchObject({ value: 99 });
  });

  it('attribute only in the federated broker → TAMPERED', () => {
    expect(judge(P({ t: ['Number', 1] }), P({ t: ['Number', 1], x: ['Text', 'y'] }))).toEqual([
      { attribute: 't', observed: expect.any(String), verdict: 'OK' },
      { attribute: 'x', observed: expect.any(String), verdict: 'TAMPERED' },
    ]);
  });

  it('entity only in the federated broker → TAMPERED for each of its attributes', () => {
    const out = judge(undefined, P({ a: ['Number', 1], b: ['Text', 'z'] }));
    expect(out.map((o) => [o.attribute, o.verdict])).toEqual([
      ['a', 'TAMPERED'],
      ['b', 'TAMPERED'],
    ]);
  });

  it('attribute missing from the federated broker → TAMPERED with observed null (decided, documented)', () => {
    expect(judge(P({ t: ['Number', 1], u: ['Number', 2] }), P({ t: ['Number', 1] }))).toEqual([
      { attribute: 't', observed: expect.any(String), verdict: 'OK' },
      { attribute: 'u', observed: null, verdict: 'TAMPERED' },
    ]);
  });

  it('entity missing from the federated broker → TAMPERED, observed null, for each attribute', () => {
    expect(judge(P({ t: ['Number', 1] }), undefined)).toEqual([
      { attribute: 't', observed: null, verdict: 'TAMPERED' },
    ]);
  });

  it('an entity without attributes is observed as a whole', () => {
    expect(judge(P({}), P({}))).toEqual([{ attribute: null, observed: '{"type":"Room"}', verdict: 'OK' }]);
    expect(judge(undefined, P({}))).toEqual([{ attribute: null, observed: '{"type":"Room"}', verdict: 'TAMPERED' }]);
    expect(judge(P({}), undefined)).toEqual([{ attribute: null, observed: null, verdict: 'TAMPERED' }]);
  });

  it('the number 1 and the string "1" differ', () => {
    const typeOf = api === 'ngsi-v2' ? ['Number', 'Number'] : ['Property', 'Property'];
    expect(judge(P({ n: [typeOf[0] as string, 1] }), P({ n: [typeOf[1] as string, '1'] }))[0]?.verdict).toBe(
      'TAMPERED',
    );
  });

  it('1.0 equals 1; nested objects compare whatever their key order; arrays compare in order', () => {
    expect(judge(P({ n: ['Number', 1.0] }), P({ n: ['Number', 1] }))[0]?.verdict).toBe('OK');
    const a = { x: { b: [1, { d: 2, c: 3 }], a: null } };
    const b = JSON.parse('{"x":{"a":null,"b":[1,{"c":3,"d":2}]}}');
    expect(judge(P({ o: ['StructuredValue', a] }), P({ o: ['StructuredValue', b] }))[0]?.verdict).toBe('OK');
    expect(judge(P({ l: ['StructuredValue', [1, 2]] }), P({ l: ['StructuredValue', [2, 1]] }))[0]?.verdict).toBe(
      'TAMPERED',
    );
    expect(
      judge(P({ o: ['StructuredValue', { a: 1 }] }), P({ o: ['StructuredValue', { a: 1, b: 2 }] }))[0]?.verdict,
    ).toBe('TAMPERED');
  });
});

describe('comparison details per API', () => {
  it('NGSI-v2: the attribute type counts, metadata does not', () => {
    const p = observeEntity('ngsi-v2', { id: 'r', type: 'Room', t: { type: 'Number', value: 1, metadata: { a: 1 } } });
    const sameValueOtherMeta = observeEntity('ngsi-v2', {
      id: 'r',
      type: 'Room',
      t: { type: 'Number', value: 1, metadata: { TimeInstant: { type: 'DateTime', value: '2026-01-01' } } },
    });
    const otherType = observeEntity('ngsi-v2', { id: 'r', type: 'Room', t: { type: 'Float', value: 1 } });
    expect(judge(p, sameValueOtherMeta)[0]?.verdict).toBe('OK');
    expect(judge(p, otherType)[0]?.verdict).toBe('TAMPERED');
  });

  it('NGSI-LD: Property vs Relationship, object, languageMap, sub-properties ignored, multi-attributes by datasetId', () => {
    const ld = (attr: unknown) => observeEntity('ngsi-ld', { id: 'urn:r', type: 'Room', a: attr });
    const rel = ld({ type: 'Relationship', object: 'urn:site:1', observedAt: '2026-01-01T00:00:00Z' });
    expect(judge(rel, ld({ type: 'Relationship', object: 'urn:site:1' }))[0]?.verdict).toBe('OK');
    expect(judge(rel, ld({ type: 'Relationship', object: 'urn:site:2' }))[0]?.verdict).toBe('TAMPERED');
    expect(judge(rel, ld({ type: 'Property', value: 'urn:site:1' }))[0]?.verdict).toBe('TAMPERED');
    const lang = ld({ type: 'LanguageProperty', languageMap: { en: 'hall', fr: 'salle' } });
    expect(judge(lang, ld({ type: 'LanguageProperty', languageMap: { fr: 'salle', en: 'hall' } }))[0]?.verdict).toBe(
      'OK',
    );
    expect(
      judge(ld({ type: 'Property', value: 1, unitCode: 'CEL' }), ld({ type: 'Property', value: 1 }))[0]?.verdict,
    ).toBe('OK');
    const multi = ld([
      { type: 'Property', value: 1, datasetId: 'urn:ds:a' },
      { type: 'Property', value: 2, datasetId: 'urn:ds:b' },
    ]);
    const reordered = ld([
      { type: 'Property', value: 2, datasetId: 'urn:ds:b' },
      { type: 'Property', value: 1, datasetId: 'urn:ds:a' },
    ]);
    const swapped = ld([
      { type: 'Property', value: 2, datasetId: 'urn:ds:a' },
      { type: 'Property', value: 1, datasetId: 'urn:ds:b' },
    ]);
    expect(judge(multi, reordered)[0]?.verdict).toBe('OK');
    expect(judge(multi, swapped)[0]?.verdict).toBe('TAMPERED');
  });

  it('equal entities have equal digests, and allOk gives what judge gives for them', () => {
    const mk = (v: number, type = 'T') =>
      observeEntity('ngsi-v2', { id: 'a', type, v: { type: 'Number', value: v }, w: { type: 'Text', value: 'x' } });
    expect(entityDigest(mk(1))).toBe(entityDigest(mk(1.0)));
    expect(entityDigest(mk(1))).not.toBe(entityDigest(mk(2)));
    expect(entityDigest(mk(1))).not.toBe(entityDigest(mk(1, 'U')));
    expect(asPrimary(mk(1)).digest).toBe(entityDigest(mk(1)));
    expect(allOk(mk(1))).toEqual(judge(mk(1), mk(1)));
    const bare = observeEntity('ngsi-v2', { id: 'a', type: 'T' });
    expect(allOk(bare)).toEqual(judge(bare, bare));
  });
});
