import { describe, expect, it } from 'vitest';
import { leaseIsFree } from './leader-election.ts';

describe('leaseIsFree', () => {
  const now = Date.parse('2026-01-01T00:00:30Z');
  it('is free when unheld, released or ours', () => {
    expect(leaseIsFree({}, 'a', now)).toBe(true);
    expect(leaseIsFree({ holderIdentity: null }, 'a', now)).toBe(true);
    expect(leaseIsFree({ holderIdentity: 'a', renewTime: '2026-01-01T00:00:29.000000Z' }, 'a', now)).toBe(true);
  });
  it('is held by another until renewTime + duration has passed', () => {
    const held = { holderIdentity: 'b', leaseDurationSeconds: 15, renewTime: '2026-01-01T00:00:20.000000Z' };
    expect(leaseIsFree(held, 'a', now)).toBe(false);
    expect(leaseIsFree({ ...held, renewTime: '2026-01-01T00:00:10.000000Z' }, 'a', now)).toBe(true);
  });
});
