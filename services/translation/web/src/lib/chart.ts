// The numbers behind the usage charts: one stacked bar per day (one layer per model), optionally cumulative over the
// period, and a y scale with round ticks that always reaches the plan's limit so the limit line is on the chart.

export interface UsageRow {
  day: string;
  model: string;
  tokensIn: number;
  tokensOut: number;
  costMicros: number;
}

export type Metric = 'tokens' | 'cost';

export interface Series {
  days: string[];
  models: string[];
  /** `values[d][m]`: the metric of model `m` on day `d` (cumulative when asked). */
  values: number[][];
  /** The highest bar. */
  max: number;
}

const value = (row: UsageRow, metric: Metric) => (metric === 'tokens' ? row.tokensIn + row.tokensOut : row.costMicros);

/** Every day from `start` to `end` inclusive (`YYYY-MM-DD`, UTC); at most 400. */
export function daysBetween(start: string, end: string): string[] {
  const out: string[] = [];
  const last = Date.parse(`${end.slice(0, 10)}T00:00:00Z`);
  for (let t = Date.parse(`${start.slice(0, 10)}T00:00:00Z`); t <= last && out.length < 400; t += 86_400_000) {
    out.push(new Date(t).toISOString().slice(0, 10));
  }
  return out;
}

/**
 * Stacks `rows` per day and model over `days`.
 * @example buildSeries(rows, daysBetween('2026-11-01', '2026-11-23'), 'tokens', true)
 */
export function buildSeries(rows: UsageRow[], days: string[], metric: Metric, cumulative: boolean): Series {
  const models = [...new Set(rows.map((r) => r.model))].sort();
  const dayIndex = new Map(days.map((d, i) => [d, i]));
  const values = days.map(() => models.map(() => 0));
  for (const row of rows) {
    const d = dayIndex.get(row.day.slice(0, 10));
    if (d === undefined) continue;
    values[d]![models.indexOf(row.model)]! += value(row, metric);
  }
  if (cumulative) {
    for (let d = 1; d < values.length; d++) {
      for (let m = 0; m < models.length; m++) values[d]![m]! += values[d - 1]![m]!;
    }
  }
  const max = values.reduce(
    (top, v) =>
      Math.max(
        top,
        v.reduce((a, b) => a + b, 0),
      ),
    0,
  );
  return { days, models, values, max };
}

/** A scale from 0 whose top is a round number ≥ both the data and the limit, with at most 5 ticks of a whole step. */
export function niceScale(max: number, limit = 0): { top: number; ticks: number[] } {
  const need = Math.max(max, limit, 1);
  const rough = need / 4;
  // Counts are whole numbers: no step below 1.
  const magnitude = Math.max(1, 10 ** Math.floor(Math.log10(rough)));
  const step = [1, 2, 2.5, 5, 10].map((f) => f * magnitude).find((s) => s * 4 >= need) ?? 10 * magnitude;
  const count = Math.ceil(need / step);
  const top = step * count;
  return { top, ticks: Array.from({ length: count + 1 }, (_, i) => i * step) };
}
