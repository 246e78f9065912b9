// A stacked bar chart drawn as SVG by the app: one bar per day, one layer per model, a dashed line at the plan's
// limit, labelled axes; the same numbers as a table for screen readers (and anyone who prefers one).
import { useId } from 'preact/hooks';
import { niceScale, type Series } from '../lib/chart.ts';
import { formatDay } from '../lib/format.ts';
import { DataTable } from './data-table.tsx';

/** Model colours: distinct, each at least 3:1 against white. */
const PALETTE = ['#0b57d0', '#b3261e', '#146c2e', '#8c4a00', '#6c3fb5', '#006a6a', '#a8326e', '#4a5a00'];
export const colourOf = (i: number): string => PALETTE[i % PALETTE.length]!;

const W = 480;
const H = 220;
const PAD = { left: 72, right: 8, top: 18, bottom: 26 };

export interface BarChartProps {
  title: string;
  series: Series;
  /** The plan's limit on this measure (0: none). */
  limit: number;
  limitLabel: string;
  format: (n: number) => string;
}

export function BarChart({ title, series, limit, limitLabel, format }: BarChartProps) {
  const id = useId();
  const { top, ticks } = niceScale(series.max, limit);
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const y = (v: number) => PAD.top + plotH - (v / top) * plotH;
  const n = Math.max(series.days.length, 1);
  const slot = plotW / n;
  const barW = Math.max(1, Math.min(28, slot * 0.7));
  const labelEvery = Math.ceil(n / 5);
  return (
    <figure class="chart" aria-labelledby={`${id}-title`}>
      <figcaption id={`${id}-title`}>{title}</figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-labelledby={`${id}-svg`} preserveAspectRatio="xMidYMid meet">
        <title id={`${id}-svg`}>{title}</title>
        {ticks.map((t) => (
          <g key={t}>
            <line x1={PAD.left} x2={W - PAD.right} y1={y(t)} y2={y(t)} stroke="#d6d8de" />
            <text x={PAD.left - 6} y={y(t) + 4} text-anchor="end" font-size="13" fill="#50525c">
              {format(t)}
            </text>
          </g>
        ))}
        {series.days.map((day, d) => {
          let base = 0;
          const x = PAD.left + d * slot + (slot - barW) / 2;
          return (
            <g key={day}>
              {series.models.map((model, m) => {
                const v = series.values[d]![m]!;
                if (v <= 0) return null;
                const rect = (
                  <rect
                    key={model}
                    x={x}
                    width={barW}
                    y={y(base + v)}
                    height={y(base) - y(base + v)}
                    fill={colourOf(m)}
                  >
                    <title>{`${formatDay(day)} · ${model}: ${format(v)}`}</title>
                  </rect>
                );
                base += v;
                return rect;
              })}
              {d % labelEvery === 0 && (
                <text x={x + barW / 2} y={H - 8} text-anchor="middle" font-size="13" fill="#50525c">
                  {formatDay(day)}
                </text>
              )}
            </g>
          );
        })}
        {limit > 0 && (
          <g>
            <line
              x1={PAD.left}
              x2={W - PAD.right}
              y1={y(limit)}
              y2={y(limit)}
              stroke="#1b1b1f"
              stroke-width="2"
              stroke-dasharray="6 4"
            />
            <text x={W - PAD.right} y={y(limit) - 5} text-anchor="end" font-size="13" fill="#1b1b1f">
              {limitLabel}: {format(limit)}
            </text>
          </g>
        )}
      </svg>
      {series.models.length > 0 && (
        <ul class="legend">
          {series.models.map((model, m) => (
            <li key={model}>
              <svg viewBox="0 0 10 10" width="12" height="12" aria-hidden="true">
                <rect width="10" height="10" fill={colourOf(m)} />
              </svg>{' '}
              {model}
            </li>
          ))}
        </ul>
      )}
      <details>
        <summary>The numbers as a table</summary>
        <DataTable caption={title} columns={['Day', ...series.models]}>
          {series.days.map((day, d) => (
            <tr key={day}>
              <th scope="row">{formatDay(day)}</th>
              {series.models.map((m, i) => (
                <td key={m}>{format(series.values[d]![i]!)}</td>
              ))}
            </tr>
          ))}
        </DataTable>
      </details>
    </figure>
  );
}
