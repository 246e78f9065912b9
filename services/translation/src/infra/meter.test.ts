import { describe, expect, it } from 'vitest';
import { costMicros, periodStart, utcDay } from '../domain/metering.ts';

describe('metering arithmetic', () => {
  it('prices per million tokens and rounds up', () => {
    expect(costMicros(1_000_000, 0, { in: 150_000, out: 600_000 })).toBe(150_000);
    expect(costMicros(1, 1, { in: 150_000, out: 600_000 })).toBe(1);
    expect(costMicros(0, 0, { in: 5, out: 5 })).toBe(0);
  });

  it('computes UTC days and epoch-aligned periods', () => {
    const t = Date.parse('2026-11-22T23:59:59Z');
    expect(utcDay(t)).toBe('2026-11-22');
    expect(periodStart(t, 1)).toBe('2026-11-22');
    const p = periodStart(t, 30);
    const days = (Date.parse(`${p}T00:00:00Z`) - Date.parse('1970-01-01T00:00:00Z')) / 86_400_000;
    expect(days % 30).toBe(0);
    expect(Date.parse(`${p}T00:00:00Z`) <= t && t < Date.parse(`${p}T00:00:00Z`) + 30 * 86_400_000).toBe(true);
  });
});
