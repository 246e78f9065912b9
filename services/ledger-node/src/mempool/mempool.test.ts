import { describe, expect, it } from 'vitest';
import { Mempool, REGOSSIP_LATE_FACTOR } from './mempool.ts';

const FIRST = 10_000;

describe('mempool', () => {
  it('returns only unseen records, so gossip of the same ids stops', () => {
    const committed = new Set(['c1']);
    const pool = new Mempool({ maxRecords: 10, isCommitted: (id) => committed.has(id) });
    expect(pool.add([{ id: 'a' }, { id: 'b' }, { id: 'c1' }]).map((r) => r.id)).toEqual(['a', 'b']);
    expect(pool.add([{ id: 'a' }, { id: 'd' }]).map((r) => r.id)).toEqual(['d']);
    expect(pool.take(2, 1e6).map((r) => r.id)).toEqual(['a', 'b']);
    pool.removeCommitted([{ id: 'a' }, { id: 'b' }], []);
    committed.add('a');
    committed.add('b');
    // A committed record is never taken in again.
    expect(pool.add([{ id: 'a' }])).toEqual([]);
    expect(pool.size).toBe(1);
  });

  it("gossips its own pending records again at its interval; a peer's records and final ones never", () => {
    let now = 0;
    const pool = new Mempool({ maxRecords: 10, isCommitted: () => false, now: () => now, regossipAfterMs: FIRST });
    pool.add([{ id: 'own-1' }, { id: 'own-2' }]);
    pool.add([{ id: 'peer-1' }], false);
    const due = () => pool.dueForRegossip(10).map((r) => r.id);
    now = FIRST - 1;
    expect(due()).toEqual([]);
    now = FIRST;
    expect(due()).toEqual(['own-1', 'own-2']);
    expect(due()).toEqual([]);
    // Final: no longer pending, never sent again.
    pool.removeCommitted([{ id: 'own-2' }], []);
    const sent: { at: number; ids: string[] }[] = [];
    for (now = FIRST + 1000; now <= 100_000; now += 1000) {
      const ids = due();
      if (ids.length > 0) sent.push({ at: now, ids });
    }
    expect(sent).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10].map((k) => ({ at: k * FIRST, ids: ['own-1'] })));
  });

  it('a record a validator took is gossiped again only as a late safety net', () => {
    let now = 0;
    const pool = new Mempool({ maxRecords: 10, isCommitted: () => false, now: () => now, regossipAfterMs: FIRST });
    const due = () => pool.dueForRegossip(10).map((r) => r.id);
    pool.add([{ id: 'taken' }, { id: 'lost' }]);
    pool.add([{ id: 'peer' }], false);
    pool.delivered([{ id: 'taken' }, { id: 'peer' }, { id: 'unknown' }]);
    now = FIRST;
    expect(due()).toEqual(['lost']);
    now = 2 * FIRST;
    expect(due()).toEqual(['lost']);
    // Taken later, after gossips of its own: from then on the late interval, counted from its arrival.
    pool.delivered([{ id: 'lost' }]);
    now = REGOSSIP_LATE_FACTOR * FIRST - 1;
    expect(due()).toEqual([]);
    now = REGOSSIP_LATE_FACTOR * FIRST;
    expect(due()).toEqual(['taken', 'lost']);
    now = 2 * REGOSSIP_LATE_FACTOR * FIRST - 1;
    expect(due()).toEqual([]);
    now = 2 * REGOSSIP_LATE_FACTOR * FIRST;
    expect(due()).toEqual(['taken', 'lost']);
  });

  it('unset or 0: never', () => {
    let now = 0;
    for (const regossipAfterMs of [undefined, 0]) {
      const pool = new Mempool({ maxRecords: 10, isCommitted: () => false, now: () => now, regossipAfterMs });
      pool.add([{ id: 'a' }]);
      now += 10_000_000;
      expect(pool.dueForRegossip(10)).toEqual([]);
    }
  });

  it('hands out at most `max` records a call, the oldest first', () => {
    let now = 0;
    const pool = new Mempool({ maxRecords: 10, isCommitted: () => false, now: () => now, regossipAfterMs: FIRST });
    pool.add([{ id: 'a' }, { id: 'b' }, { id: 'c' }]);
    now = FIRST;
    expect(pool.dueForRegossip(2).map((r) => r.id)).toEqual(['a', 'b']);
    expect(pool.dueForRegossip(2).map((r) => r.id)).toEqual(['c']);
  });

  it('respects the capacity and the byte limit of a block', () => {
    const pool = new Mempool({ maxRecords: 3, isCommitted: () => false });
    expect(pool.add([{ id: '1' }, { id: '2' }, { id: '3' }, { id: '4' }])).toHaveLength(3);
    expect(pool.take(10, 20)).toHaveLength(2);
  });

  it('drops validator changes that no longer apply', () => {
    const pool = new Mempool({ maxRecords: 3, isCommitted: () => false });
    const k = 'a'.repeat(64);
    pool.addChanges([{ action: 'ADD', validator: k }], []);
    expect(pool.takeChanges([], 8)).toHaveLength(1);
    expect(pool.takeChanges([k], 8)).toHaveLength(0);
    expect(pool.pendingChanges).toBe(0);
  });

  it('does not take a change that does nothing against the active set (a relay arriving after its block)', () => {
    const pool = new Mempool({ maxRecords: 3, isCommitted: () => false });
    const k = 'a'.repeat(64);
    const other = 'b'.repeat(64);
    // The ADD's block is final here: a late copy would wait until a REMOVE of k, then be proposed again.
    expect(pool.addChanges([{ action: 'ADD', validator: k }], [other, k])).toEqual([]);
    expect(pool.addChanges([{ action: 'REMOVE', validator: k }], [other])).toEqual([]);
    expect(pool.pendingChanges).toBe(0);
    expect(pool.addChanges([{ action: 'REMOVE', validator: k }], [other, k])).toHaveLength(1);
    expect(pool.pendingChanges).toBe(1);
  });
});
