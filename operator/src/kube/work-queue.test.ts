import { describe, expect, it } from 'vitest';
import { ExponentialBackoff, WorkQueue } from './work-queue.ts';

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('WorkQueue', () => {
  it('dedupes a key that already waits', async () => {
    const q = new WorkQueue();
    q.add('a');
    q.add('a');
    q.add('b');
    expect(q.length).toBe(2);
    expect(q.pending('a')).toBe(true);
    expect(q.pending('c')).toBe(false);
    expect(await q.get()).toBe('a');
    expect(q.pending('a')).toBe(false); // handed out, not queued again
    q.add('a'); // added while processed: it runs again after done()
    expect(q.pending('a')).toBe(true);
    expect(await q.get()).toBe('b');
  });

  it('never hands the same key to two workers; a key added while processed runs again after', async () => {
    const q = new WorkQueue();
    const seen: string[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    q.add('a');
    const run = q.run(4, async (key) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      seen.push(key);
      if (seen.length === 1) {
        q.add('a'); // arrives while 'a' is processed
        q.add('a');
      }
      await tick();
      inFlight--;
      return undefined;
    });
    for (let i = 0; i < 20 && seen.length < 2; i++) await tick();
    q.shutDown();
    await run;
    expect(seen).toEqual(['a', 'a']);
    expect(maxInFlight).toBe(1);
  });

  it('retries a failing key with growing backoff and forgets it after a success', async () => {
    const backoff = new ExponentialBackoff(1, 1000);
    const q = new WorkQueue({ backoff });
    let calls = 0;
    const errors: number[] = [];
    q.add('x');
    const run = q.run(
      1,
      async () => {
        calls++;
        if (calls < 4) throw new Error('boom');
        return undefined;
      },
      (_key, _err, delay) => errors.push(delay),
    );
    for (let i = 0; i < 100 && calls < 4; i++) await tick();
    q.shutDown();
    await run;
    expect(errors).toEqual([1, 2, 4]);
    expect(q.retries('x')).toBe(0);
  });

  it('requeues after the delay a handler asks for', async () => {
    const q = new WorkQueue();
    let calls = 0;
    q.add('k');
    const run = q.run(1, async () => {
      calls++;
      return calls === 1 ? { requeueAfterMs: 10 } : undefined;
    });
    for (let i = 0; i < 50 && calls < 2; i++) await tick();
    q.shutDown();
    await run;
    expect(calls).toBe(2);
  });

  it('reports the depth and stops handing out keys after shutdown', async () => {
    const depths: number[] = [];
    const q = new WorkQueue({ onDepth: (d) => depths.push(d) });
    q.add('a');
    q.add('b');
    q.shutDown();
    q.add('c');
    expect(depths).toEqual([1, 2]);
    expect(await q.get()).toBeUndefined();
  });
});

describe('ExponentialBackoff', () => {
  it('doubles up to the cap', () => {
    const b = new ExponentialBackoff(100, 500);
    expect([b.next('k'), b.next('k'), b.next('k'), b.next('k')]).toEqual([100, 200, 400, 500]);
    b.forget('k');
    expect(b.next('k')).toBe(100);
  });
});
