import { describe, expect, it } from 'vitest';
import { type MemoryReading, MemoryTrimmer } from './memory-trim.ts';

const MiB = 2 ** 20;

/** A process whose RSS the test sets; gc() gives back what the "pool" holds. */
function processModel() {
  const m: MemoryReading & { pooled: number } = { rss: 200 * MiB, heapUsed: 60 * MiB, external: 10 * MiB, pooled: 0 };
  const calls: unknown[] = [];
  return {
    m,
    calls,
    read: () => ({ rss: m.rss + m.pooled, heapUsed: m.heapUsed, external: m.external }),
    gc: (options: unknown) => {
      calls.push(options);
      m.pooled = 0;
    },
  };
}

describe('MemoryTrimmer', () => {
  it('collects only when the unaccounted memory has grown by more than the slack, then starts from the new floor', () => {
    const p = processModel();
    const trimmer = new MemoryTrimmer({ gc: p.gc, read: p.read, slackBytes: 32 * MiB, busy: () => 0 });
    expect(trimmer.check()).toBeUndefined(); // the first reading is the floor
    p.m.pooled = 30 * MiB;
    expect(trimmer.check()).toBeUndefined();
    p.m.heapUsed += 100 * MiB; // live heap growth is accounted for: no collection
    p.m.rss += 100 * MiB;
    expect(trimmer.check()).toBeUndefined();
    p.m.pooled = 90 * MiB;
    const trim = trimmer.check();
    expect(trim).toMatchObject({ rssBefore: 390 * MiB, rssAfter: 300 * MiB });
    expect(p.calls).toEqual([{ type: 'major', execution: 'sync', flavor: 'last-resort' }]);
    // Native memory that stays (it survived the collection) raises the floor: no collection every check.
    p.m.rss += 50 * MiB;
    p.m.pooled = 40 * MiB;
    expect(trimmer.check()).toBeDefined();
    p.m.pooled = 20 * MiB;
    expect(trimmer.check()).toBeUndefined();
    expect(p.calls).toHaveLength(2);
  });

  it('waits for an idle event loop: no collection while the burst runs, one at the first idle check', () => {
    const p = processModel();
    let utilization = 0.95;
    const trimmer = new MemoryTrimmer({ gc: p.gc, read: p.read, slackBytes: 32 * MiB, busy: () => utilization });
    trimmer.check();
    p.m.pooled = 200 * MiB;
    expect(trimmer.check()).toBeUndefined();
    utilization = 0.1; // at the threshold: still busy
    expect(trimmer.check()).toBeUndefined();
    expect(p.calls).toHaveLength(0);
    utilization = 0.02;
    expect(trimmer.check()).toMatchObject({ rssBefore: 400 * MiB, rssAfter: 200 * MiB });
    expect(p.calls).toHaveLength(1);
  });

  it('does nothing without --expose-gc', () => {
    const p = processModel();
    const trimmer = new MemoryTrimmer({ gc: undefined, read: p.read });
    p.m.pooled = 500 * MiB;
    expect(trimmer.enabled).toBe(false);
    expect(trimmer.check()).toBeUndefined();
  });
});
