import { describe, expect, it } from 'vitest';
import { buildSeries, daysBetween, niceScale, type UsageRow } from './chart.ts';

const row = (day: string, model: string, tokens: number, cost: number): UsageRow => ({
  day,
  model,
  tokensIn: tokens,
  tokensOut: 0,
  costMicros: cost,
});

describe('daysBetween', () => {
  it('lists every UTC day, across a month end, from dates or timestamps', () => {
    expect(daysBetween('2026-10-30', '2026-11-02')).toEqual(['2026-10-30', '2026-10-31', '2026-11-01', '2026-11-02']);
    expect(daysBetween('2026-11-02T00:00:00.000Z', '2026-11-02T23:00:00.000Z')).toEqual(['2026-11-02']);
    expect(daysBetween('2026-11-03', '2026-11-02')).toEqual([]);
  });
});

describe('buildSeries', () => {
  const days = daysBetween('2026-11-01', '2026-11-03');
  const rows = [
    row('2026-11-01', 'top', 10, 100),
    row('2026-11-01', 'cheap', 5, 10),
    row('2026-11-03', 'cheap', 7, 20),
    row('2026-11-03', 'cheap', 1, 1),
    row('2026-10-31', 'cheap', 999, 999), // outside the period: left out
  ];

  it('stacks per day and model (models sorted), days without usage at 0', () => {
    const s = buildSeries(rows, days, 'tokens', false);
    expect(s.models).toEqual(['cheap', 'top']);
    expect(s.values).toEqual([
      [5, 10],
      [0, 0],
      [8, 0],
    ]);
    expect(s.max).toBe(15);
  });

  it('adds up over the period when cumulative', () => {
    const s = buildSeries(rows, days, 'cost', true);
    expect(s.values).toEqual([
      [10, 100],
      [10, 100],
      [31, 100],
    ]);
    expect(s.max).toBe(131);
  });

  it('counts tokens in and out', () => {
    const s = buildSeries([{ ...row('2026-11-01', 'm', 3, 0), tokensOut: 4 }], days, 'tokens', false);
    expect(s.values[0]).toEqual([7]);
  });
});

describe('niceScale', () => {
  it.each([
    [0, 0, 1],
    [15, 0, 15],
    [131, 0, 150],
    [131, 1000, 1000],
    [2_400_000, 1_000_000, 3_000_000],
    [0.3, 0, 1],
  ])('max %d, limit %d → top %d', (max, limit, top) => {
    const scale = niceScale(max, limit);
    expect(scale.top).toBe(top);
    expect(scale.top).toBeGreaterThanOrEqual(Math.max(max, limit));
    expect(scale.ticks[0]).toBe(0);
    expect(scale.ticks.at(-1)).toBe(scale.top);
    expect(scale.ticks.length).toBeGreaterThanOrEqual(2);
    expect(scale.ticks.length).toBeLessThanOrEqual(6);
    const step = scale.ticks[1]!;
    expect(Number.isInteger(step)).toBe(true);
    expect(step / 10 ** Math.floor(Math.log10(step))).toBeOneOf([1, 2, 2.5, 5]);
  });
});
