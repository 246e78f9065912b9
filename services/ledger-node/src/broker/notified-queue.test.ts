// The queue of notified entities: an entity announced again while it waits is one entry, entries come out when due
// and in arrival order, and past the bound announcements are dropped (and the broker reported), never stored.
import { describe, expect, it } from 'vitest';
import { NotifiedQueue } from './notified-queue.ts';

const ref = (n: number) => ({ id: `urn:e:${n}`, type: 'T' });

describe('NotifiedQueue', () => {
  it('coalesces repeats, hands out due entities in arrival order, by broker', () => {
    const q = new NotifiedQueue(10);
    expect(q.add('a', [ref(1), ref(2), ref(1)], 100, 100)).toEqual({ added: 2, dropped: 0 });
    expect(q.add('a', [ref(2), ref(3)], 110, 110)).toEqual({ added: 1, dropped: 0 });
    expect(q.add('b', [ref(1)], 120, 2000)).toEqual({ added: 1, dropped: 0 });
    expect(q.size).toBe(4);
    expect(q.has('a', 'T', 'urn:e:2')).toBe(true);
    expect(q.take('a', 2, 150).map((p) => [p.ref.id, p.at])).toEqual([
      ['urn:e:1', 100],
      ['urn:e:2', 100],
    ]);
    expect(q.take('b', 10, 150)).toEqual([]); // not due yet
    expect(q.nextDue()).toBe(110);
    expect(q.take('a', 10, 150).map((p) => p.ref.id)).toEqual(['urn:e:3']);
    expect(q.nextDue()).toBe(2000);
    expect(q.take('b', 10, 2000).map((p) => p.ref.id)).toEqual(['urn:e:1']);
    expect(q.size).toBe(0);
    expect(q.nextDue()).toBeUndefined();
  });

  it('never holds more than its bound: the rest is dropped and the broker reported once', () => {
    const q = new NotifiedQueue(100);
    const refs = Array.from({ length: 10_000 }, (_, n) => ref(n));
    expect(q.add('a', refs, 0, 0)).toEqual({ added: 100, dropped: 9900 });
    expect(q.size).toBe(100);
    expect(q.takeOverflowed()).toEqual(['a']);
    expect(q.takeOverflowed()).toEqual([]);
    q.take('a', 50, 0);
    expect(q.add('a', refs.slice(200, 260), 0, 0)).toEqual({ added: 50, dropped: 10 });
  });
});
