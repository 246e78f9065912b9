// The tables bench/peers prints: per round, and the medians over the rounds. A ratio is how far ours is ahead:
// ours ÷ theirs where more is better, theirs ÷ ours where less is (so > 1 always means ours ahead).

export interface Row {
  part: 'ledger' | 'translation';
  measure: string;
  unit: string;
  better: 'higher' | 'lower';
  ours: number | undefined;
  /** One per peer setting, in the order of the part's names. */
  theirs: (number | undefined)[];
}

export const PEER_NAMES: Record<Row['part'], (comet: string[]) => string[]> = {
  ledger: (comet) => comet,
  translation: () => ['Portkey'],
};

export function ratio(better: Row['better'], ours: number | undefined, theirs: number | undefined): number | undefined {
  if (ours === undefined || theirs === undefined) return undefined;
  const [num, den] = better === 'higher' ? [ours, theirs] : [theirs, ours];
  return den > 0 && num >= 0 ? num / den : undefined;
}

const fmt = (x: number | undefined) =>
  x === undefined || Number.isNaN(x)
    ? '—'
    : Math.abs(x) >= 100
      ? String(Math.round(x))
      : String(Math.round(x * 100) / 100);
const fmtRatio = (x: number | undefined) => (x === undefined ? '—' : `${Math.round(x * 100) / 100}×`);

function print(header: string[], lines: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? '').length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  console.log(line(header));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const l of lines) console.log(line(l));
}

function headerFor(names: string[]): string[] {
  return ['measure', 'ours', ...names.flatMap((n) => [n, 'ratio'])];
}

export function printRound(rows: Row[], loadAverage: { start: number[]; end: number[] }, comet: string[]): void {
  const la = (x: number[]) => x.map((v) => v.toFixed(2)).join(' ');
  console.log(`\nload average at start ${la(loadAverage.start)}, at end ${la(loadAverage.end)}`);
  for (const part of ['ledger', 'translation'] as const) {
    const mine = rows.filter((r) => r.part === part);
    if (mine.length === 0) continue;
    console.log(`\n${part}`);
    print(
      headerFor(PEER_NAMES[part](comet)),
      mine.map((r) => [
        `${r.measure} (${r.unit})`,
        fmt(r.ours),
        ...r.theirs.flatMap((t) => [fmt(t), fmtRatio(ratio(r.better, r.ours, t))]),
      ]),
    );
  }
}

function median(xs: number[]): number | undefined {
  if (xs.length === 0) return undefined;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1]! + s[m]!) / 2;
}

const spread = (xs: number[]) =>
  xs.length === 0 ? '—' : `${fmt(median(xs))} (${fmt(Math.min(...xs))}–${fmt(Math.max(...xs))})`;
const defined = (xs: (number | undefined)[]) => xs.filter((x): x is number => x !== undefined && !Number.isNaN(x));

/** Per row: the median over the rounds with its range, and the per-round ratios' median and range. */
export function printSummary(rounds: Row[][], comet: string[]): void {
  console.log(`\nover ${rounds.length} rounds: median (min–max); ratio: median of the rounds' ratios (min–max)`);
  const first = rounds[0] ?? [];
  for (const part of ['ledger', 'translation'] as const) {
    const idx = first.map((r, i) => [r, i] as const).filter(([r]) => r.part === part);
    if (idx.length === 0) continue;
    console.log(`\n${part}`);
    print(
      headerFor(PEER_NAMES[part](comet)),
      idx.map(([row, i]) => {
        const same = rounds.map((rs) => rs[i]!);
        return [
          `${row.measure} (${row.unit})`,
          spread(defined(same.map((r) => r.ours))),
          ...row.theirs.flatMap((_, k) => {
            const ratios = defined(same.map((r) => ratio(r.better, r.ours, r.theirs[k])));
            return [
              spread(defined(same.map((r) => r.theirs[k]))),
              ratios.length === 0
                ? '—'
                : `${fmtRatio(median(ratios))} (${fmtRatio(Math.min(...ratios))}–${fmtRatio(Math.max(...ratios))})`,
            ];
          }),
        ];
      }),
    );
  }
}
