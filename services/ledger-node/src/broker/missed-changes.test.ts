// Missed-change accounting on a fake clock: a change a sweep found is a suspect for its grace, cleared by a
// notification about it, else counted missed on its broker; one announced (waiting or being judged) or dropped by
// the full queue is no suspect; a pass that read the brokers forgets what overflowed before it began.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MissedChanges } from './missed-changes.ts';

const A = 'http://a';
const B = 'http://b';

function setup(announced = new Set<string>()) {
  let now = 1000;
  /** The brokers told of each change counted missed (the subscriber's silent-subscription rule). */
  const told: string[] = [];
  const missed = new MissedChanges({
    now: () => now,
    graceMs: 5000,
    metrics: undefined,
    stopping: () => false,
    announced: (_broker, _type, _id, key) => announced.has(key),
    onMissed: (broker, foundAt) => told.push(`${broker} ${foundAt}`),
  });
  const advance = (ms: number) => {
    now += ms;
    vi.advanceTimersByTime(ms);
  };
  return { missed, advance, announced, told };
}

describe('MissedChanges', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('counts a suspect missed on its broker once its grace has passed without a notification', () => {
    const { missed, advance, told } = setup();
    expect(missed.found(A, 'Room', 'r1')).toBe(true);
    expect(missed.found(B, 'Room', 'r1')).toBe(true);
    expect(missed.suspected).toBe(2);
    advance(4000);
    expect(missed.missed).toBe(0);
    expect(told).toEqual([]);
    advance(1200);
    expect([missed.missedOn(A), missed.missedOn(B), missed.missed, missed.suspected]).toEqual([1, 1, 2, 0]);
    expect(told).toEqual([`${A} 1000`, `${B} 1000`]); // found at the clock's start
  });

  it('a notification within the grace clears the suspect', () => {
    const { missed, advance } = setup();
    missed.found(A, 'Room', 'r1');
    missed.found(A, 'Room', 'r2');
    missed.notified(A, 'r1');
    advance(6000);
    expect(missed.missedOn(A)).toBe(1);
  });

  it('what a notification announced (waiting or being judged) is no suspect', () => {
    const { missed, advance } = setup(new Set([`${A}\nr1`]));
    expect(missed.found(A, 'Room', 'r1')).toBe(false);
    advance(6000);
    expect(missed.missed).toBe(0);
  });

  it('an announcement the full queue dropped is no suspect until a pass begun after it has read the brokers', () => {
    const { missed, advance } = setup();
    missed.overflow(A, 'r1', 1000);
    expect(missed.found(A, 'Room', 'r1')).toBe(false);
    missed.passRead(1000); // began at the same moment: not after
    expect(missed.found(A, 'Room', 'r1')).toBe(false);
    missed.passRead(1001);
    expect(missed.found(A, 'Room', 'r1')).toBe(true);
    advance(6000);
    expect(missed.missedOn(A)).toBe(1);
  });

  it('a suspect found later waits its own grace (the timer looks again)', () => {
    const { missed, advance } = setup();
    missed.found(A, 'Room', 'r1');
    advance(3000);
    missed.found(A, 'Room', 'r2');
    advance(2200);
    expect([missed.missed, missed.suspected]).toEqual([1, 1]);
    advance(5000);
    expect([missed.missed, missed.suspected]).toEqual([2, 0]);
  });

  it('after a stop, a suspect found on the next start is counted missed (the timer is armed again)', () => {
    const { missed, advance } = setup();
    missed.found(A, 'Room', 'r1');
    missed.stop();
    advance(6000);
    expect(missed.missed).toBe(0);
    missed.found(A, 'Room', 'r2');
    advance(5200);
    expect(missed.missedOn(A)).toBe(2);
  });
});
