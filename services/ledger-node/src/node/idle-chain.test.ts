// An idle chain stays quiet: the proposer's wait and the round timer's rule (proposal-scheduler.ts), per case.
import { describe, expect, it } from 'vitest';
import { proposalDelayMs, roundTimerWait } from './proposal-scheduler.ts';

const settings = { blockDelayMs: 50, emptyBlockIntervalMs: 60_000 };

describe('proposalDelayMs', () => {
  it('work pending: the batching delay', () => {
    expect(proposalDelayMs(true, 0, 0, settings)).toBe(50);
    expect(proposalDelayMs(true, 0, 90_000, { ...settings, emptyBlockIntervalMs: 0 })).toBe(50);
  });
  it('idle: until the empty-block interval has passed since the height opened; interval 0: never', () => {
    expect(proposalDelayMs(false, 0, 0, settings)).toBe(60_000);
    expect(proposalDelayMs(false, 0, 59_000, settings)).toBe(1000);
    expect(proposalDelayMs(false, 0, 61_000, settings)).toBe(0);
    expect(proposalDelayMs(false, 0, 61_000, { ...settings, emptyBlockIntervalMs: 0 })).toBeUndefined();
  });
  it('after a round change: at once, work or not (the chain was busy)', () => {
    expect(proposalDelayMs(false, 2, 0, { ...settings, emptyBlockIntervalMs: 0 })).toBe(0);
  });
});

describe('roundTimerWait', () => {
  it('idle (not busy, or busy only in the future): the whole timeout again', () => {
    expect(roundTimerWait(10_000, 2000, undefined)).toBe(2000);
    expect(roundTimerWait(10_000, 2000, 12_000)).toBe(2000);
  });
  it('busy: a full timeout from the moment it became busy, then the timeout goes through', () => {
    expect(roundTimerWait(10_000, 2000, 9_500)).toBe(1500);
    expect(roundTimerWait(10_000, 2000, 8_000)).toBe(0);
    expect(roundTimerWait(10_000, 2000, 1_000)).toBe(0);
  });
});
