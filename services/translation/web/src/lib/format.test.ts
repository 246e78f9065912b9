import { describe, expect, it } from 'vitest';
import { formatDay, formatInt, formatMicros, formatTime, percent } from './format.ts';

describe('format', () => {
  it('integers with separators', () => expect(formatInt(1234567)).toBe('1,234,567'));

  it.each([
    [0, '$0.00'],
    [1_230_000, '$1.23'],
    [4_200, '$0.0042'],
    [10_000, '$0.01'],
    [1_234_567_890, '$1,234.57'],
  ])('micros %d → %s', (micros, text) => expect(formatMicros(micros)).toBe(text));

  it('days and times', () => {
    expect(formatDay('2026-11-23')).toBe('23 Nov');
    expect(formatDay('not a day')).toBe('not a day');
    expect(formatTime(null)).toBe('never');
    expect(formatTime('2026-11-23T14:05:00Z')).toMatch(/2026/);
  });

  it('percent of a limit', () => {
    expect(percent(50, 200)).toBe(25);
    expect(percent(5, 0)).toBe(0);
  });
});
