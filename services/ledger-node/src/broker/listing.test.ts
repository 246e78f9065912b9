// The page reader fuzzed with arbitrary broker answers (bodies and count headers): it returns
// entities only for a consistent, complete listing and otherwise a BrokerReadError, never another
// exception and never a partial result.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { BrokerEndpoint } from './endpoint.ts';
import type { BrokerHttp, BrokerResponse } from './http-client.ts';
import { readBroker } from './listing.ts';
import { BrokerReadError } from './read-error.ts';

/** A broker whose every answer is scripted: the thing being fuzzed is our parsing of it. */
function scripted(responses: BrokerResponse[]): BrokerHttp {
  let i = 0;
  return {
    get: async () => {
      const r = responses[Math.min(i++, responses.length - 1)] as BrokerResponse;
      return r;
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
            const entities = await readBroker(scripted(responses), endpoint(api), { pageSize: 4, attempts: 1 });
            const total = Number(responses[0]?.headers[countHeader(api)]);
            expect(entities.length).toBe(total);
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
