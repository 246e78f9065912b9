// The memory of what the chain recorded, with the digests the primary implies left out: whatever the order of
// records applied, primary values changed or gone, and entities settled, it answers what a memory that stores
// every digest answers — so a value the primary no longer holds is still known as the one recorded.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ObservationMemory, observationDigest } from './memory.ts';
import { observeEntity } from './observe.ts';
import { PrimaryState } from './primary.ts';
import { buildRecord } from './record.ts';

const ATTRS = ['a', 'b', 'c'];
const scope = { broker: 'http://fed' };
const form = (v: number) => JSON.stringify({ type: 'Number', value: v });

function setup() {
  const memory = new ObservationMemory();
  const primary = new PrimaryState(memory.entities, (i) => memory.primaryChanging(i));
  memory.primary = primary;
  const s = memory.scope(scope);
  const setPrimary = (n: number, values: number[] | undefined) => {
    const i = memory.entities.intern('T', `e${n}`);
    const raw: Record<string, unknown> = { id: `e${n}`, type: 'T' };
    values?.forEach((v, k) => {
      raw[ATTRS[k] as string] = { type: 'Number', value: v };
    });
    primary.set(i, values ? observeEntity('ngsi-v2', raw) : undefined);
    return i;
  };
  return { memory, primary, s, setPrimary };
}

describe('ObservationMemory with implied digests', () => {
  it('an OK record of the primary’s value stores no digest; after the primary changes, the recorded one is kept', () => {
    const { memory, s, setPrimary, primary } = setup();
    const i = setPrimary(1, [10, 20, 30]);
    for (const [k, name] of ATTRS.entries())
      memory.apply(
        buildRecord(
          scope,
          { id: 'e1', type: 'T' },
          { attribute: name, observed: form(10 * (k + 1)), verdict: 'OK' },
          0,
        ),
      );
    expect(s.implied[i]).toBe(1);
    expect(s.attrs.get(i)?.length).toBe(1); // every attribute the primary lists: OK, seq 0, implied — one byte
    expect(memory.lastRecorded(s, i).get('a')).toEqual({ seq: 0, digest: observationDigest('OK', form(10)) });
    // A tamper recorded for one attribute: the others still implied, that one's digest stored.
    memory.apply(
      buildRecord(scope, { id: 'e1', type: 'T' }, { attribute: 'b', observed: form(-1), verdict: 'TAMPERED' }, 1),
    );
    expect(s.attrs.get(i)?.length).toBe(1 + 2 + (2 + 8) + 2); // not all implied at seq 0: each attribute listed
    expect(memory.lastRecorded(s, i).get('b')).toEqual({ seq: 1, digest: observationDigest('TAMPERED', form(-1)) });
    setPrimary(1, [11, 20, 30]);
    expect(s.implied[i]).toBe(0);
    expect(memory.lastRecorded(s, i).get('a')).toEqual({ seq: 0, digest: observationDigest('OK', form(10)) });
    expect(primary.printOf(i, 'a')).toBe(observationDigest('OK', form(11)));
  });

  it('fuzz: the same answers as a memory storing every digest', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.record({
              op: fc.constant('primary' as const),
              n: fc.integer({ min: 0, max: 3 }),
              values: fc.option(fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 3, maxLength: 3 }), {
                nil: undefined,
              }),
            }),
            fc.record({
              op: fc.constant('record' as const),
              n: fc.integer({ min: 0, max: 3 }),
              k: fc.integer({ min: 0, max: 2 }),
              v: fc.option(fc.integer({ min: 0, max: 2 }), { nil: undefined }),
              ok: fc.boolean(),
            }),
            fc.record({ op: fc.constant('settle' as const), n: fc.integer({ min: 0, max: 3 }) }),
          ),
          { maxLength: 60 },
        ),
        (ops) => {
          const { memory, s, setPrimary } = setup();
          const model = new Map<string, { seq: number; digest: string }>();
          for (const o of ops) {
            if (o.op === 'primary') setPrimary(o.n, o.values);
            else if (o.op === 'settle') {
              const i = memory.entities.intern('T', `e${o.n}`);
              memory.settle(s, i, '\u0001'.repeat(8), 0);
            } else {
              const name = ATTRS[o.k] as string;
              const observed = o.v === undefined ? null : form(o.v);
              const verdict = o.ok && observed !== null ? 'OK' : 'TAMPERED';
              const key = `e${o.n}/${name}`;
              const seq = (model.get(key)?.seq ?? -1) + 1;
              memory.apply(
                buildRecord(scope, { id: `e${o.n}`, type: 'T' }, { attribute: name, observed, verdict }, seq),
              );
              model.set(key, { seq, digest: observationDigest(verdict, observed) });
            }
          }
          for (let n = 0; n <= 3; n++) {
            const i = memory.entities.find('T', `e${n}`);
            const got = i === undefined ? new Map() : memory.lastRecorded(s, i);
            for (const name of ATTRS) expect(got.get(name), `e${n}/${name}`).toEqual(model.get(`e${n}/${name}`));
          }
        },
      ),
      { numRuns: 400, seed: 8 },
    );
  });
});
