import { afterEach, describe, expect, it, vi } from 'vitest';
import { Coalescer } from './coalescer.ts';

function recorder(opts: { failBatch?: (args: number[]) => boolean; maxInFlight?: number; maxBatch?: number } = {}) {
  const log: string[] = [];
  let inFlight = 0;
  let maxSeen = 0;
  const c = new Coalescer<number, number>({
    batch: async (args) => {
      inFlight++;
      maxSeen = Math.max(maxSeen, inFlight);
      log.push(`batch ${args.join(',')}`);
      await new Promise((r) => setTimeout(r, 5));
      inFlight--;
      if (opts.failBatch?.(args)) throw new Error('batch failed');
      return args.map((a) => a * 10);
    },
    single: async (a) => {
      log.push(`single ${a}`);
      if (a < 0) throw new Error(`bad ${a}`);
      return a * 10;
    },
    maxInFlight: opts.maxInFlight ?? 1,
    maxBatch: opts.maxBatch ?? 100,
  });
  return { c, log, maxSeen: () => maxSeen };
}

describe('Coalescer', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('sends a lone call through the single path', async () => {
    const { c, log } = recorder();
    expect(await c.submit(4)).toBe(40);
    expect(log).toEqual(['single 4']);
  });

  it('sends a lone call on the next turn of the event loop: no timer delays it', async () => {
    // Every timer frozen (setTimeout, setInterval, Date): a call that waited for one would never be sent.
    vi.useFakeTimers({ toFake: ['setTimeout', 'setInterval', 'Date'] });
    const sent: number[] = [];
    const c = new Coalescer<number, number>({
      batch: async (args) => args,
      single: async (a) => {
        sent.push(a);
        return a;
      },
      maxInFlight: 1,
      maxBatch: 100,
    });
    const result = c.submit(7);
    expect(sent).toEqual([]);
    await new Promise((r) => setImmediate(r));
    expect(sent).toEqual([7]);
    expect(await result).toBe(7);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('batches only what arrives while a statement is in flight: the first call never waits for company', async () => {
    const log: string[] = [];
    let release: () => void = () => {};
    const c = new Coalescer<number, number>({
      batch: async (args) => {
        log.push(`batch ${args.join(',')}`);
        return args;
      },
      single: async (a) => {
        log.push(`single ${a}`);
        if (a === 1) await new Promise<void>((r) => (release = r));
        return a;
      },
      maxInFlight: 1,
      maxBatch: 100,
    });
    const first = c.submit(1);
    await new Promise((r) => setImmediate(r));
    // The first call went out alone at once; the next three arrive while it is in flight and wait for it.
    expect(log).toEqual(['single 1']);
    const rest = [2, 3, 4].map((a) => c.submit(a));
    await new Promise((r) => setImmediate(r));
    expect(c.queued).toBe(3);
    release();
    expect(await Promise.all([first, ...rest])).toEqual([1, 2, 3, 4]);
    expect(log).toEqual(['single 1', 'batch 2,3,4']);
  });

  it('coalesces calls made in the same turn, and calls made while a batch is in flight into the next', async () => {
    const { c, log, maxSeen } = recorder();
    const first = [1, 2, 3].map((a) => c.submit(a));
    await new Promise((r) => setImmediate(r));
    const second = [4, 5].map((a) => c.submit(a));
    expect(await Promise.all([...first, ...second])).toEqual([10, 20, 30, 40, 50]);
    expect(log).toEqual(['batch 1,2,3', 'batch 4,5']);
    expect(maxSeen()).toBe(1);
  });

  it('caps the batch size and the batches in flight', async () => {
    const { c, log, maxSeen } = recorder({ maxBatch: 2, maxInFlight: 2 });
    expect(await Promise.all([1, 2, 3, 4, 5, 6, 7].map((a) => c.submit(a)))).toEqual([10, 20, 30, 40, 50, 60, 70]);
    expect(log).toEqual(['batch 1,2', 'batch 3,4', 'batch 5,6', 'single 7']);
    expect(maxSeen()).toBe(2);
  });

  it('runs the calls of a failed batch one by one: only the bad one fails', async () => {
    const { c, log } = recorder({ failBatch: (args) => args.some((a) => a < 0) });
    const results = await Promise.allSettled([1, -2, 3].map((a) => c.submit(a)));
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : String(r.reason)))).toEqual([
      10,
      'Error: bad -2',
      30,
    ]);
    expect(log).toEqual(['batch 1,-2,3', 'single 1', 'single -2', 'single 3']);
  });

  it('never re-runs a batch whose answer does not line up with its calls', async () => {
    let singles = 0;
    const c = new Coalescer<number, number>({
      batch: async () => [1],
      single: async () => ++singles,
      maxInFlight: 1,
      maxBatch: 10,
    });
    const results = await Promise.allSettled([1, 2].map((a) => c.submit(a)));
    expect(results.every((r) => r.status === 'rejected')).toBe(true);
    expect(singles).toBe(0);
  });

  it('refuses nonsensical limits', () => {
    expect(
      () =>
        new Coalescer<number, number>({ batch: async () => [], single: async () => 0, maxInFlight: 0, maxBatch: 1 }),
    ).toThrow(RangeError);
  });
});
