// The page splitter against JSON.parse: for every array of objects, whatever its spacing and its strings, it
// finds exactly the objects JSON.parse finds; for anything else it answers null and never throws.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { BrokerEndpoint } from './endpoint.ts';
import { parsePage, scanPage } from './listing.ts';
import { splitObjects } from './page-elements.ts';
import { BrokerReadError } from './read-error.ts';

const pieces = (text: string): string[] | null => {
  const bytes = Buffer.from(text, 'utf8');
  const bounds = splitObjects(bytes);
  if (!bounds) return null;
  const out: string[] = [];
  for (let k = 0; k < bounds.length; k += 2) out.push(bytes.toString('utf8', bounds[k], bounds[k + 1]));
  return out;
};

/** JSON text of an array of objects with arbitrary whitespace around its tokens. */
const spacedArray = fc
  .tuple(
    fc.array(fc.dictionary(fc.string(), fc.jsonValue()), { maxLength: 5 }),
    fc.array(fc.constantFrom('', ' ', '\n', '\t', '\r\n  '), { minLength: 12, maxLength: 12 }),
  )
  .map(([objects, ws]) => {
    const at = (i: number) => ws[i % ws.length] as string;
    const body = objects.map((o, i) => `${at(i)}${JSON.stringify(o, null, i % 2 ? 1 : 0)}${at(i + 3)}`).join(',');
    return { objects, text: `${at(7)}[${body || at(5)}]${at(9)}` };
  });

describe('splitObjects', () => {
  it('finds the objects JSON.parse finds, each parsing to its element', () => {
    fc.assert(
      fc.property(spacedArray, ({ objects, text }) => {
        const found = pieces(text);
        expect(found).not.toBeNull();
        expect((found as string[]).map((p) => JSON.parse(p))).toEqual(JSON.parse(text));
        expect(found).toHaveLength(objects.length);
      }),
      { numRuns: 2000, seed: 7 },
    );
  });

  it('braces, brackets and escaped quotes inside strings do not end an object', () => {
    const text = String.raw`[{"id":"a}\"]{","v":{"x":["]","\\"]}}, {"id":"b\\","t":"ü{"}]`;
    expect(pieces(text)).toEqual([String.raw`{"id":"a}\"]{","v":{"x":["]","\\"]}}`, String.raw`{"id":"b\\","t":"ü{"}`]);
  });

  it('answers null for what is not an array of objects', () => {
    for (const text of [
      '',
      '{}',
      '[1]',
      '[{}, 2]',
      '[{},]',
      '[{} {}]',
      '[{}',
      '[{"a":"}]',
      '[{}]x',
      '[{}],',
      '[,{}]',
      '[{"a":1}}]',
    ])
      expect(pieces(text), text).toBeNull();
    expect(pieces('[]')).toEqual([]);
    expect(pieces(' [ ] \n')).toEqual([]);
  });

  it('never throws on arbitrary bytes', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 64 }),
          fc.string().map((s) => Buffer.from(s)),
        ),
        (bytes) => {
          const bounds = splitObjects(bytes);
          if (bounds) for (const b of bounds) expect(b).toBeLessThanOrEqual(bytes.length);
        },
      ),
      { numRuns: 3000, seed: 11 },
    );
  });
});

describe('scanPage', () => {
  const endpoint: BrokerEndpoint = { url: 'http://broker', role: 'federated', api: 'ngsi-v2' };
  const page = (text: string, expected: number) => ({
    key: 'all:0',
    query: { key: 'all' },
    queryIndex: 0,
    offset: 0,
    pageSize: 4,
    total: expected,
    expected,
    body: Buffer.from(text),
  });

  it('parses each entity on its own to what parsePage gives; an entity digest is of its own bytes only', () => {
    const a = { id: 'a', type: 'T', t: { type: 'Number', value: 1, metadata: {} } };
    const b = { id: 'b', type: 'T', s: { type: 'Text', value: 'x' } };
    const three = JSON.stringify([a, b, { ...a, id: 'c' }]);
    const scan = scanPage(endpoint, page(three, 3));
    expect([0, 1, 2].map((k) => scan.parse(k))).toEqual(parsePage(endpoint, page(three, 3)));
    expect(scan.raws).toHaveLength(24);
    const two = scanPage(endpoint, page(JSON.stringify([a, b]), 2));
    const spaced = scanPage(endpoint, page(`[ ${JSON.stringify(a)} ,\n${JSON.stringify(b)} ]`, 2));
    expect(two.raws).toBe(scan.raws.slice(0, 16));
    expect(spaced.raws).toBe(two.raws);
    const changed = scanPage(endpoint, page(JSON.stringify([{ ...a, t: { ...a.t, value: 2 } }, b]), 2));
    expect(changed.raws.slice(0, 8)).not.toBe(two.raws.slice(0, 8));
    expect(changed.raws.slice(8)).toBe(two.raws.slice(8));
  });

  it('a page that does not split, or holds too few entities, is the error parsePage gives', () => {
    for (const [text, expected, reason] of [
      ['[{"id":"a","type":"T"}, 7]', 2, 'malformed'],
      ['not json', 1, 'malformed'],
      ['[{"id":"a","type":"T"}]', 2, 'inconsistent'],
    ] as const) {
      const err = (() => {
        try {
          scanPage(endpoint, page(text, expected));
        } catch (e) {
          return e;
        }
      })();
      expect(err, text).toBeInstanceOf(BrokerReadError);
      expect((err as BrokerReadError).reason, text).toBe(reason);
    }
    // Splits, but one entity's bytes are not JSON: the page cannot be trusted (malformed) when it is read.
    const scan = scanPage(
      endpoint,
      page('[{"id":"a","type":"T"},{"id":"b","type":"T","x":{"type":"Text","value":}}]', 2),
    );
    expect(() => scan.parse(1)).toThrow(BrokerReadError);
  });

  it('an entity that is JSON but no entity is reported with its id, the others read', () => {
    const scan = scanPage(
      endpoint,
      page('[{"id":"a","type":"T"},{"id":"b","type":7},{"type":"T"},{"id":"d","type":"T","x":5}]', 4),
    );
    expect(scan.parse(0)).toMatchObject({ id: 'a', type: 'T' });
    expect(scan.parse(1)).toEqual({ id: 'b', reason: 'entity b has no valid type' });
    expect(scan.parse(2)).toEqual({ id: undefined, reason: 'an entity has no string id' });
    expect(scan.parse(3)).toEqual({ id: 'd', reason: 'entity d: attribute x is not an object' });
  });
});
