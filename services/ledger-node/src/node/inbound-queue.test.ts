import { describe, expect, it } from 'vitest';
import { InboundQueue } from './inbound-queue.ts';

const tick = () => new Promise((r) => setImmediate(r));

describe('inbound queue', () => {
  it('hands items over in order, after the caller returns, and reports its depth', async () => {
    const seen: number[] = [];
    const depths: number[] = [];
    const q = new InboundQueue<number>(
      10,
      (n) => seen.push(n),
      (d) => depths.push(d),
      () => {},
    );
    expect(q.push(1)).toBe(true);
    expect(q.push(2)).toBe(true);
    expect(seen).toEqual([]); // asynchronous: POST /consensus answers before the driver runs
    expect(q.depth).toBe(2);
    await tick();
    expect(seen).toEqual([1, 2]);
    expect(q.depth).toBe(0);
    expect(depths.at(-1)).toBe(0);
  });

  it('refuses beyond its limit and accepts again once drained', async () => {
    const q = new InboundQueue<number>(
      2,
      () => {},
      () => {},
      () => {},
    );
    expect([q.push(1), q.push(2), q.push(3)]).toEqual([true, true, false]);
    await tick();
    expect(q.push(4)).toBe(true);
  });

  it('goes on after a handler throws, and yields to I/O during a long burst', async () => {
    const errors: unknown[] = [];
    const seen: number[] = [];
    const q = new InboundQueue<number>(
      100_000,
      (n) => {
        if (n === 1) throw new Error('bad item');
        const until = performance.now() + 0.5;
        while (performance.now() < until); // 0.5 ms of work per item
        seen.push(n);
      },
      () => {},
      (err) => errors.push(err),
    );
    for (let i = 0; i < 200; i++) q.push(i);
    await tick();
    // One slice is about 20 ms: the first drain stops well before the 200 items (100 ms of work).
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.length).toBeLessThan(199);
    while (q.depth > 0) await tick();
    expect(seen).toHaveLength(199);
    expect(errors).toHaveLength(1);
  });

  it('stop drops what waits and refuses new items', async () => {
    const seen: number[] = [];
    const q = new InboundQueue<number>(
      10,
      (n) => seen.push(n),
      () => {},
      () => {},
    );
    q.push(1);
    q.stop();
    expect(q.push(2)).toBe(false);
    await tick();
    expect(seen).toEqual([]);
  });
});
