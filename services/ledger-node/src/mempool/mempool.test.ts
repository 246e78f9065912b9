import { describe, expect, it } from 'vitest';
import { Mempool } from './mempool.ts';

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
