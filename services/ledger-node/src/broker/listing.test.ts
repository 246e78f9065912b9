// The page reader fuzzed with arbitrary broker answers (bodies and count headers): it returns
// entities only for a consistent, complete listing and otherwise a BrokerReadError, never another
// exception and never a partial result; an entity it cannot read is reported and the others returned.
// NGSI-LD: the types discovered first, listed in groups, an entity of several types kept once.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { BrokerEndpoint } from './endpoint.ts';
import type { BrokerHttp, BrokerResponse } from './http-client.ts';
import { ownerQuery, readBroker, type UnreadableEntity } from './listing.ts';
import { groupTypes, typeNames } from './ngsi-ld.ts';
import { BrokerReadError } from './read-error.ts';

const TYPES = {
  status: 200,
  headers: {},
  body: Buffer.from('{"id":"x","type":"EntityTypeList","typeList":["Room","T"]}'),
};

/**
 * A broker whose every listing answer is scripted (an NGSI-LD broker's type list is fixed): the thing being fuzzed
 * is our parsing of it. `asked` records the URLs.
 */
function scripted(responses: BrokerResponse[], asked: string[] = []): BrokerHttp {
  let i = 0;
  return {
    get: async (_broker, url) => {
      asked.push(url);
      if (url.endsWith('/ngsi-ld/v1/types')) return TYPES;
      return responses[Math.min(i++, responses.length - 1)] as BrokerResponse;
    },
    send: async () => {
      throw new Error('no writes here');
    },
    close: async () => {},
  };
}

const endpoint = (api: 'ngsi-v2' | 'ngsi-ld'): BrokerEndpoint => ({ url: 'http://broker', role: 'federated', api });
const countHeader = (api: 'ngsi-v2' | 'ngsi-ld') => (api === 'ngsi-v2' ? 'fiware-total-count' : 'ngsild-results-count');

describe('readBroker on arbitrary answers', () => {
  it('never throws anything but BrokerReadError, and returns only what the count promised', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('ngsi-v2' as const, 'ngsi-ld' as const),
        fc.array(
          fc.record({
            text: fc.oneof(
              fc.string(),
              fc.jsonValue().map((v) => JSON.stringify(v)),
              fc
                .array(
                  fc.record({
                    id: fc.oneof(fc.string(), fc.integer()),
                    type: fc.constantFrom('T', 'Room'),
                    a: fc.oneof(
                      fc.jsonValue(),
                      fc.record({ type: fc.constantFrom('Number', 'Property'), value: fc.jsonValue() }),
                    ),
                  }),
                  { maxLength: 4 },
                )
                .map((v) => JSON.stringify(v)),
            ),
            count: fc.oneof(fc.constant(undefined), fc.string(), fc.integer({ min: 0, max: 8 }).map(String)),
          }),
          { minLength: 1, maxLength: 4 },
        ),
        async (api, answers) => {
          const responses = answers.map((a) => ({
            status: 200,
            headers: a.count === undefined ? {} : { [countHeader(api)]: a.count },
            body: Buffer.from(a.text),
          }));
          try {
            const unreadable: UnreadableEntity[] = [];
            const entities = await readBroker(scripted(responses), endpoint(api), {
              pageSize: 4,
              attempts: 1,
              onUnreadable: (e) => unreadable.push(e),
            });
            const total = Number(responses[0]?.headers[countHeader(api)]);
            expect(entities.length + unreadable.length).toBe(total);
          } catch (err) {
            expect(err).toBeInstanceOf(BrokerReadError);
          }
        },
      ),
      { numRuns: 1500, seed: 21 },
    );
  });

  it('a listing whose count says more than the pages deliver is inconsistent, not short', async () => {
    const page = (ids: string[]) => JSON.stringify(ids.map((id) => ({ id, type: 'T' })));
    const http = scripted([
      { status: 200, headers: { 'fiware-total-count': '5' }, body: Buffer.from(page(['a', 'b'])) },
      { status: 200, headers: { 'fiware-total-count': '5' }, body: Buffer.from(page(['c'])) },
    ]);
    const err = await readBroker(http, endpoint('ngsi-v2'), { pageSize: 2, attempts: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BrokerReadError);
    expect((err as BrokerReadError).reason).toBe('inconsistent');
  });
});

describe('NGSI-LD listing', () => {
  const ld: BrokerEndpoint = { url: 'http://broker', role: 'federated', api: 'ngsi-ld' };
  const answer = (entities: object[], count = entities.length) => ({
    status: 200,
    headers: { 'ngsild-results-count': String(count) },
    body: Buffer.from(JSON.stringify(entities)),
  });

  it('reads the entity types, then lists them: one query naming them all', async () => {
    const asked: string[] = [];
    const entities = await readBroker(
      scripted(
        [
          answer([
            { id: 'urn:a', type: 'Room' },
            { id: 'urn:b', type: ['T', 'Room'] },
          ]),
        ],
        asked,
      ),
      ld,
    );
    expect(asked[0]).toBe('http://broker/ngsi-ld/v1/types');
    expect(asked[1]).toBe('http://broker/ngsi-ld/v1/entities?type=Room,T&limit=1000&offset=0&count=true');
    expect(entities.map((e) => [e.id, e.type])).toEqual([
      ['urn:a', 'Room'],
      ['urn:b', 'Room,T'],
    ]);
  });

  it('an entity that cannot be read is reported with its id; the rest of the broker is read', async () => {
    const unreadable: UnreadableEntity[] = [];
    const entities = await readBroker(
      scripted([
        answer([
          { id: 'urn:a', type: 'Room', t: { type: 'Property', value: 1 } },
          { id: 'urn:b', type: 'Room', t: { type: 'Nonsense', value: 1 } },
          { id: 'urn:c', type: 'Room' },
        ]),
      ]),
      ld,
      { onUnreadable: (e) => unreadable.push(e) },
    );
    expect(entities.map((e) => e.id)).toEqual(['urn:a', 'urn:c']);
    expect(unreadable).toEqual([{ id: 'urn:b', reason: 'entity urn:b: attribute t has unknown type Nonsense' }]);
  });

  it('types in groups that keep the URL short; an entity of several types belongs to the first query naming one', () => {
    const types = Array.from({ length: 300 }, (_, i) => `https://example.org/types/T${String(i).padStart(3, '0')}`);
    const groups = groupTypes(types, 2048);
    expect(groups.length).toBeGreaterThan(1);
    expect(groups.flat()).toEqual(types);
    for (const g of groups)
      expect(g.map((t) => encodeURIComponent(t).length + 1).reduce((a, b) => a + b)).toBeLessThanOrEqual(2048);
    const queries = groups.map((g, k) => ({ key: `t${k}`, types: g }));
    const last = groups.at(-1)?.[0] as string;
    expect(ownerQuery(queries, `${last},${types[0]}`)).toBe(0);
    expect(ownerQuery(queries, last)).toBe(groups.length - 1);
    expect(ownerQuery([{ key: 'all' }], 'anything')).toBe(0);
  });

  it('reads both forms of the type list and refuses others', () => {
    const body = (v: unknown) => Buffer.from(JSON.stringify(v));
    expect(typeNames('b', body({ type: 'EntityTypeList', typeList: ['B', 'A', 'B'] }))).toEqual(['A', 'B']);
    expect(typeNames('b', body([{ type: 'EntityType', typeName: 'X' }]))).toEqual(['X']);
    for (const bad of [{ typeList: [1] }, { typeList: ['a,b'] }, 'x', [{ id: 'no typeName' }]])
      expect(() => typeNames('b', body(bad))).toThrow(BrokerReadError);
  });
});
