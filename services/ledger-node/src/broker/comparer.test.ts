// The comparer on its own, without brokers or HTTP: pages and entities as a read would hand them over, judged
// against a primary state and the memory of the chain. A page that matches is recorded OK once and, once final,
// never parsed again; a change on the federated side is TAMPERED; a primary entity missing is TAMPERED with null;
// a change found on a broker judged before is reported as such (missed-change accounting); notified entities are
// judged from what was read of both sides.
import { describe, expect, it } from 'vitest';
import { noUnreadable, type ReadEntity } from './broker-reads.ts';
import { Comparer, type LookContext, scopeOf } from './comparer.ts';
import { DIGEST64_CHARS } from './digest.ts';
import type { BrokerEndpoint } from './endpoint.ts';
import { EntitySet } from './entities.ts';
import { FederatedState } from './federated.ts';
import { type RawPage, scanPage } from './listing.ts';
import { ObservationMemory } from './memory.ts';
import { entityKey, observeEntity } from './observe.ts';
import { PrimaryState } from './primary.ts';
import type { ObservationRecord } from './record.ts';
import { newPassResult } from './status.ts';

const fed: BrokerEndpoint = { url: 'http://fed', role: 'federated', api: 'ngsi-v2' };
const room = (id: string, t: number) => ({ id, type: 'Room', t: { type: 'Number', value: t, metadata: {} } });
const page = (entities: object[]): RawPage => ({
  key: 'all:0',
  query: { key: 'all' },
  queryIndex: 0,
  offset: 0,
  pageSize: 100,
  total: entities.length,
  expected: entities.length,
  body: Buffer.from(JSON.stringify(entities)),
});

/** A comparer over a primary holding `rooms` (id → value), and what it reports as changes found. */
function setup(rooms: Record<string, number>) {
  const memory = new ObservationMemory();
  const primary = new PrimaryState(memory.entities, (i) => memory.primaryChanging(i));
  memory.primary = primary;
  for (const [id, t] of Object.entries(rooms))
    primary.set(memory.entities.intern('Room', id), observeEntity('ngsi-v2', room(id, t)));
  const state = new FederatedState();
  const found: string[] = [];
  const comparer = new Comparer({
    memory,
    primary,
    federated: new Map([[fed.url, state]]),
    missed: (_endpoint, i) => found.push(memory.entities.ref(i).id),
  });
  const scope = memory.scope(scopeOf(fed));
  const ctx = (baseline = false): LookContext => ({
    endpoint: fed,
    scope,
    state,
    listed: new EntitySet(),
    result: newPassResult('full', 0),
    baseline,
    queries: [],
    unreadable: noUnreadable(),
    primaryUnreadable: noUnreadable(),
  });
  /** What a node does once a block holding these records is final. */
  const finalize = (records: ObservationRecord[]) => {
    for (const r of records) memory.apply(r);
  };
  return { memory, primary, state, comparer, scope, ctx, found, finalize };
}

const verdicts = (records: ObservationRecord[]) => records.map((r) => [r.entity, r.verdict, r.seq]);

describe('Comparer.lookInto', () => {
  it('records a matching page OK once; final, the same page is settled and its entities need no parse', () => {
    const { comparer, scope, ctx, finalize } = setup({ r1: 1, r2: 2 });
    const p = page([room('r1', 1), room('r2', 2)]);
    const scan = scanPage(fed, p);
    const first = ctx();
    const out: ObservationRecord[] = [];
    const numbers = comparer.lookInto(first, p, scan, undefined, out);
    expect(verdicts(out)).toEqual([
      ['r1', 'OK', 0],
      ['r2', 'OK', 0],
    ]);
    expect(first.result.parsedEntities).toBe(2);
    finalize(out);
    const memo = { digest: 'd', entities: numbers, raws: scan.raws };
    // Final: nothing more to record, and the next judging settles each entity.
    const again: ObservationRecord[] = [];
    comparer.lookInto(ctx(), p, scan, memo, again);
    expect(again).toEqual([]);
    expect(comparer.settled(scope, memo)).toBe(true);
    const third = ctx();
    comparer.lookInto(third, p, scanPage(fed, p), memo, []);
    expect(third.result.parsedEntities).toBe(0);
  });

  it('a value changed on the federated broker is TAMPERED; only the changed entity is parsed again', () => {
    const { comparer, ctx, finalize, found } = setup({ r1: 1, r2: 2 });
    const p = page([room('r1', 1), room('r2', 2)]);
    const scan = scanPage(fed, p);
    const out: ObservationRecord[] = [];
    const numbers = comparer.lookInto(ctx(), p, scan, undefined, out);
    finalize(out);
    comparer.lookInto(ctx(), p, scan, { digest: 'd', entities: numbers, raws: scan.raws }, []);
    const changed = page([room('r1', 1), room('r2', 99)]);
    const next = ctx(true);
    const tampered: ObservationRecord[] = [];
    comparer.lookInto(
      next,
      changed,
      scanPage(fed, changed),
      { digest: 'd', entities: numbers, raws: scan.raws },
      tampered,
    );
    // The attribute's second record (its first, OK, is final).
    expect(verdicts(tampered)).toEqual([['r2', 'TAMPERED', 1]]);
    expect(tampered[0]?.observed).toEqual({ type: 'Number', value: 99 });
    expect(next.result.parsedEntities).toBe(1);
    // A complete read was judged before (baseline): the change is one a sweep found.
    expect(found).toEqual(['r2']);
  });

  it('an entity listed twice in one read fails the read; out = null validates without judging', () => {
    const { comparer, ctx } = setup({ r1: 1 });
    const twice = page([room('r1', 1), room('r1', 1)]);
    expect(() => comparer.lookInto(ctx(), twice, scanPage(fed, twice), undefined, [])).toThrow(/twice/);
    const p = page([room('r1', 5)]);
    const c = ctx();
    const numbers = comparer.lookInto(c, p, scanPage(fed, p), undefined, null);
    expect(numbers).toHaveLength(1);
    expect(c.listed.has(numbers[0] as number)).toBe(true);
  });

  it('an unreadable entity is noted and skipped; an entity whose primary side was unreadable is not judged', () => {
    const { comparer, ctx } = setup({ r1: 1, r2: 2 });
    const p = page([{ id: 'bad', type: 7 }, room('r1', 50), room('r2', 60)]);
    const c = ctx();
    c.primaryUnreadable.ids.add('r1');
    const out: ObservationRecord[] = [];
    comparer.lookInto(c, p, scanPage(fed, p), undefined, out);
    expect(c.unreadable.list.map((u) => u.id)).toEqual(['bad']);
    expect(verdicts(out)).toEqual([['r2', 'TAMPERED', 0]]);
  });
});

describe('Comparer.judgeMissing', () => {
  it('a primary entity the federated broker lacks is TAMPERED with null, once; settled once final', () => {
    const { comparer, memory, scope, finalize } = setup({ r1: 1 });
    const i = memory.entities.find('Room', 'r1') as number;
    const records = comparer.judgeMissing(scope, i);
    expect(records.map((r) => [r.verdict, r.observed])).toEqual([['TAMPERED', null]]);
    finalize(records);
    expect(comparer.judgeMissing(scope, i)).toEqual([]);
    // Not on the primary: nothing to say.
    expect(comparer.judgeMissing(scope, memory.entities.intern('Room', 'elsewhere'))).toEqual([]);
  });
});

describe('Comparer.judgeNotified', () => {
  const read = (e: object): ReadEntity => {
    const scan = scanPage(fed, page([e]));
    return { e: scan.parse(0) as ReadEntity['e'], raws: scan.raws, at: 0 * DIGEST64_CHARS };
  };

  it('sets the primary from what was read and judges each federated broker against it', () => {
    const { comparer, primary, memory } = setup({ r1: 1 });
    const ref = { id: 'r1', type: 'Room' };
    const key = entityKey('Room', 'r1');
    const out: ObservationRecord[] = [];
    comparer.judgeNotified(
      [fed],
      [{ ref, at: 0, due: 0 }],
      new Map([[key, read(room('r1', 7))]]),
      [new Map([[key, read(room('r1', 8))]])],
      out,
    );
    const i = memory.entities.find('Room', 'r1') as number;
    expect(primary.has(i)).toBe(true);
    expect(verdicts(out)).toEqual([['r1', 'TAMPERED', 0]]);
    expect(out[0]?.observed).toEqual({ type: 'Number', value: 8 });
  });

  it('an entity gone from both sides is dropped from the primary; one unknown to both is ignored', () => {
    const { comparer, primary, memory } = setup({ r1: 1 });
    const out: ObservationRecord[] = [];
    comparer.judgeNotified(
      [fed],
      [
        { ref: { id: 'r1', type: 'Room' }, at: 0, due: 0 },
        { ref: { id: 'never', type: 'Room' }, at: 0, due: 0 },
      ],
      new Map(),
      [new Map()],
      out,
    );
    expect(primary.has(memory.entities.find('Room', 'r1') as number)).toBe(false);
    expect(memory.entities.find('Room', 'never')).toBeUndefined();
    expect(out).toEqual([]);
  });
});
