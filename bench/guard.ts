// The regression guard of `make bench`, pure: no files, no clock, no processes (bench/run.ts does the I/O).
// Each run of a part appends one HistoryEntry (bench/results/history/<part>.jsonl); a new run's figures are judged
// against the best comparable recorded run, with a tolerance measured from those runs. The rule is in
// bench/README.md (## regression guard); bench/guard-figures.ts declares which figures are guarded.

export type Better = 'higher' | 'lower';

/** One guarded figure of a part's results JSON. */
export interface GuardedFigure {
  /** Key in the history entries, unique within the part. */
  name: string;
  /** What it is, in words (printed). */
  label: string;
  /** Where it is in bench/results/<part>.json (see `valueAt`). */
  path: string;
  better: Better;
  unit: string;
  /** Speed and memory figures are printed together (a memory setting that costs speed shows both). */
  kind: 'speed' | 'memory';
  /**
   * The least noise assumed for this figure, as a fraction of the best (0.1 = 10 %): the tolerance while there are
   * fewer than MIN_RUNS comparable runs, and its floor after (the measured spread only widens it).
   */
  tolerance: number;
  /** Where the timestamp of the section holding it is, for parts that keep sections of earlier runs. */
  at?: string;
}

/** A part's guarded figures, and what makes two of its runs comparable. */
export interface GuardedPart {
  part: string;
  /** Parts of one group (one program's speed and memory) are printed side by side. */
  group: string;
  figures: readonly GuardedFigure[];
  /** Where the results JSON says when it was measured (joined: the measurement's identity in the history). */
  resultsAt: readonly string[];
  /** Environment variables that change what the part measures, with their defaults: runs compare only when equal. */
  variantEnv: Readonly<Record<string, string>>;
  /** Process settings the part's programs run with (recorded, printed when the best run's differ). */
  settings?: Readonly<Record<string, string>>;
}

/** The kind of machine: only runs on the same kind are compared. */
export interface MachineKind {
  cores: number;
  memoryGiB: number;
  cpu: string;
}

export type Verdict = 'seed' | 'pass' | 'fail' | 'no-baseline' | 'skipped' | 'accepted';

/** One line of bench/results/history/<part>.jsonl. */
export interface HistoryEntry {
  part: string;
  /** When the run ended (ISO 8601). */
  at: string;
  /** The timestamp the results JSON itself carries (identifies the measurement; null when it has none). */
  resultsAt: string | null;
  /** The commit measured (HEAD), null when unknown (see `note`). */
  commit: string | null;
  /** Uncommitted changes outside bench/results/ when it ran. */
  dirty?: boolean;
  machine: MachineKind;
  /** 1-minute load average at the start and at the end of the run; null when unknown. */
  load: { start: number | null; end: number | null };
  variant: Record<string, string>;
  settings?: Record<string, string>;
  figures: Record<string, number>;
  /** The guard's verdict on this run ('seed': entered from earlier results; 'skipped': BENCH_GUARD=0). */
  guard: Verdict;
  /** The figures that failed (never a baseline, nor counted in the noise). */
  failed?: string[];
  /** BENCH_ACCEPT: the reason a deliberate trade-off was accepted; later runs compare only from this run on. */
  accepted?: string;
  note?: string;
}

/** Comparable runs needed before the tolerance is measured rather than the figure's default. */
export const MIN_RUNS = 3;
/** Runs compare only when their load per core differs by at most this much (1.0 = load 2 on 2 cores). */
export const LOAD_WINDOW_PER_CORE = 1.0;

/**
 * A number in a results JSON. `a.b.c` walks objects; `list[key=value]` picks the element of an array whose `key`
 * equals `value` (number or string); `list[max]` / `list[min]` reduce an array of numbers; `list[0]` indexes.
 */
export function valueAt(json: unknown, path: string): number | undefined {
  let node: unknown = json;
  for (const token of path.match(/[^.[\]]+|\[[^\]]*\]/g) ?? []) {
    if (token.startsWith('[')) {
      const inner = token.slice(1, -1);
      if (!Array.isArray(node)) return undefined;
      const eq = inner.indexOf('=');
      if (eq > 0) {
        const key = inner.slice(0, eq);
        const want = inner.slice(eq + 1);
        node = node.find(
          (el) => el !== null && typeof el === 'object' && String((el as Record<string, unknown>)[key]) === want,
        );
      } else if (inner === 'max' || inner === 'min') {
        const nums = node.filter((n): n is number => typeof n === 'number' && Number.isFinite(n));
        if (nums.length === 0) return undefined;
        node = inner === 'max' ? Math.max(...nums) : Math.min(...nums);
      } else {
        node = node[Number(inner)];
      }
    } else {
      if (node === null || typeof node !== 'object') return undefined;
      node = (node as Record<string, unknown>)[token];
    }
  }
  return typeof node === 'number' && Number.isFinite(node) ? node : undefined;
}

/** A string at a path (the `at` of a section), or undefined. */
export function stringAt(json: unknown, path: string): string | undefined {
  let node: unknown = json;
  for (const key of path.split('.')) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return typeof node === 'string' ? node : undefined;
}

/** The figures of a part found in its results JSON (a figure whose section is older than `since` is left out). */
export function extractFigures(part: GuardedPart, json: unknown, since?: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const f of part.figures) {
    if (f.at && since) {
      const at = stringAt(json, f.at);
      if (!at || Date.parse(at) < Date.parse(since)) continue;
    }
    const v = valueAt(json, f.path);
    if (v !== undefined) out[f.name] = v;
  }
  return out;
}

/** The measurement's identity: the timestamps the results JSON carries, or null. */
export function resultsAtOf(part: GuardedPart, json: unknown): string | null {
  const found = part.resultsAt.map((p) => stringAt(json, p)).filter((v): v is string => v !== undefined);
  return found.length === 0 ? null : found.join(' ');
}

/** The part's variant in an environment: each variant variable's value, or its default. */
export function variantOf(
  part: GuardedPart,
  env: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  return Object.fromEntries(Object.entries(part.variantEnv).map(([k, d]) => [k, env[k] ?? d]));
}

export function machineLabel(m: MachineKind): string {
  return `${m.cores} cores, ${m.memoryGiB} GiB, ${m.cpu}`;
}

export function sameMachineKind(a: MachineKind, b: MachineKind): boolean {
  return a.cores === b.cores && a.memoryGiB === b.memoryGiB && a.cpu === b.cpu;
}

/** The run's load per core: the higher of its start and end 1-minute load averages over the cores; null if unknown. */
export function loadPerCore(e: Pick<HistoryEntry, 'load' | 'machine'>): number | null {
  const known = [e.load.start, e.load.end].filter((v): v is number => typeof v === 'number');
  return known.length === 0 ? null : Math.max(...known) / e.machine.cores;
}

function sameVariant(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) if (a[k] !== b[k]) return false;
  return true;
}

/**
 * The recorded runs a new run of the part may be compared with: same part, same machine kind, same variant, not
 * skipped, from the latest accepted trade-off on, at a load per core within LOAD_WINDOW_PER_CORE of the new run's
 * (a run of unknown load is compared), and not the same measurement (`resultsAt`).
 */
export function comparableRuns(history: readonly HistoryEntry[], current: HistoryEntry): HistoryEntry[] {
  const same = history.filter(
    (e) =>
      e.part === current.part &&
      e.guard !== 'skipped' &&
      sameMachineKind(e.machine, current.machine) &&
      sameVariant(e.variant, current.variant) &&
      !(current.resultsAt !== null && e.resultsAt === current.resultsAt),
  );
  const lastAccepted = same.findLastIndex((e) => e.guard === 'accepted');
  const from = lastAccepted < 0 ? same : same.slice(lastAccepted);
  const load = loadPerCore(current);
  return from.filter((e) => {
    const l = loadPerCore(e);
    return load === null || l === null || Math.abs(l - load) <= LOAD_WINDOW_PER_CORE;
  });
}

/** How much worse `value` is than `best`, as a fraction of the best (negative when better). */
export function worseBy(better: Better, best: number, value: number): number {
  if (best === 0) return value === best ? 0 : better === 'higher' ? 1 : Number.POSITIVE_INFINITY;
  return better === 'higher' ? (best - value) / best : (value - best) / best;
}

export interface Tolerance {
  /** Fraction of the best. */
  value: number;
  /** 'history': the spread of `runs` comparable runs (floored by the default); 'default': fewer than MIN_RUNS. */
  from: 'history' | 'default';
  runs: number;
  /** The measured spread (worst vs best comparable run), when there were enough runs. */
  spread?: number;
}

/** The noise allowed for a figure given the comparable recorded values (see bench/README.md). */
export function toleranceFor(figure: GuardedFigure, values: readonly number[]): Tolerance {
  if (values.length < MIN_RUNS) return { value: figure.tolerance, from: 'default', runs: values.length };
  const best = bestOf(figure.better, values);
  const worst = figure.better === 'higher' ? Math.min(...values) : Math.max(...values);
  const spread = worseBy(figure.better, best, worst);
  return { value: Math.max(spread, figure.tolerance), from: 'history', runs: values.length, spread };
}

export function bestOf(better: Better, values: readonly number[]): number {
  return better === 'higher' ? Math.max(...values) : Math.min(...values);
}

export type FigureVerdict = 'pass' | 'fail' | 'best' | 'no-baseline' | 'missing';

export interface FigureJudgment {
  figure: GuardedFigure;
  value: number | undefined;
  best?: number;
  bestRun?: HistoryEntry;
  /** Fraction of the best; positive = worse. */
  worseBy?: number;
  tolerance?: Tolerance;
  verdict: FigureVerdict;
}

export interface PartJudgment {
  part: GuardedPart;
  current: HistoryEntry;
  figures: FigureJudgment[];
  failed: boolean;
}

/** Judges each guarded figure of `current` against the comparable runs of `history`. */
export function judgeRun(part: GuardedPart, current: HistoryEntry, history: readonly HistoryEntry[]): PartJudgment {
  const runs = comparableRuns(history, current);
  const figures = part.figures.map((figure): FigureJudgment => {
    const value = current.figures[figure.name];
    if (value === undefined) return { figure, value, verdict: 'missing' };
    const usable = runs.filter((e) => e.figures[figure.name] !== undefined && !e.failed?.includes(figure.name));
    const values = usable.map((e) => e.figures[figure.name] as number);
    if (values.length === 0) return { figure, value, verdict: 'no-baseline' };
    const best = bestOf(figure.better, values);
    const bestRun = usable[values.indexOf(best)];
    const worse = worseBy(figure.better, best, value);
    const tolerance = toleranceFor(figure, values);
    const verdict: FigureVerdict = worse < 0 ? 'best' : worse > tolerance.value ? 'fail' : 'pass';
    return { figure, value, best, bestRun, worseBy: worse, tolerance, verdict };
  });
  return { part, current, figures, failed: figures.some((f) => f.verdict === 'fail') };
}

/** The verdict recorded for the run in its history entry. */
export function runVerdict(j: PartJudgment): { guard: Verdict; failed?: string[] } {
  const failed = j.figures.filter((f) => f.verdict === 'fail').map((f) => f.figure.name);
  if (failed.length > 0) return { guard: 'fail', failed };
  if (j.figures.every((f) => f.verdict === 'no-baseline' || f.verdict === 'missing')) return { guard: 'no-baseline' };
  return { guard: 'pass' };
}

function fmt(v: number): string {
  const abs = Math.abs(v);
  const digits = abs >= 100 ? 0 : abs >= 10 ? 1 : abs >= 1 ? 2 : 3;
  return v.toLocaleString('en-US', { minimumFractionDigits: 0, maximumFractionDigits: digits });
}

function pct(v: number): string {
  return `${(v * 100).toFixed(1)} %`;
}

function loadText(e: Pick<HistoryEntry, 'load'>): string {
  const { start, end } = e.load;
  if (start === null && end === null) return 'load unknown';
  return `load ${start ?? '?'} → ${end ?? '?'}`;
}

function runText(e: HistoryEntry): string {
  const commit = e.commit ? e.commit.slice(0, 7) : 'commit unknown';
  return `${e.at.slice(0, 16).replace('T', ' ')}, ${commit}, ${loadText(e)}`;
}

function settingsText(s: Record<string, string> | undefined): string {
  return s
    ? Object.entries(s)
        .map(([k, v]) => `${k}: ${v}`)
        .join('; ')
    : 'unknown';
}

/** Rows of cells as lines, each column padded to its widest cell (numbers right-aligned). */
function table(rows: readonly (readonly string[])[], indent = '  '): string[] {
  const widths: number[] = [];
  for (const row of rows) {
    for (const [i, cell] of row.entries()) widths[i] = Math.max(widths[i] ?? 0, cell.length);
  }
  const numeric = (cell: string) => /^[\d,.]+ /.test(cell);
  return rows.map(
    (row) =>
      indent +
      row
        .map((cell, i) => (numeric(cell) ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
        .join('  ')
        .trimEnd(),
  );
}

function toleranceText(f: FigureJudgment): string {
  const tol = f.tolerance as Tolerance;
  if (tol.from === 'default') return `${pct(tol.value)} (default; ${tol.runs} run${tol.runs === 1 ? '' : 's'})`;
  const spread = tol.spread as number;
  return `${pct(tol.value)} (spread of ${tol.runs} runs ${pct(spread)}${spread < f.figure.tolerance ? ', floor' : ''})`;
}

/** The printed comparison of one part's run. */
export function formatJudgment(j: PartJudgment): string[] {
  const c = j.current;
  const lpc = loadPerCore(c);
  const window =
    lpc === null
      ? ''
      : ` (${lpc.toFixed(2)} per core; compared with runs at ${Math.max(0, lpc - LOAD_WINDOW_PER_CORE).toFixed(2)}–${(lpc + LOAD_WINDOW_PER_CORE).toFixed(2)} per core)`;
  const lines = [`guard ${j.part.part} [${j.part.group}]: ${machineLabel(c.machine)}; ${loadText(c)}${window}`];
  const rows: string[][] = [['', '', 'figure', 'now', 'best recorded', 'change', 'tolerance', 'best run']];
  for (const f of j.figures) {
    const label = `${f.figure.label} (${f.figure.better} is better)`;
    const kind = f.figure.kind;
    if (f.verdict === 'missing') {
      rows.push(['----', kind, label, 'not measured']);
      continue;
    }
    const now = `${fmt(f.value as number)} ${f.figure.unit}`;
    if (f.verdict === 'no-baseline') {
      rows.push(['new', kind, label, now, 'no comparable run recorded']);
      continue;
    }
    const w = f.worseBy as number;
    rows.push([
      f.verdict === 'fail' ? 'FAIL' : f.verdict === 'best' ? 'best' : 'ok',
      kind,
      label,
      now,
      `${fmt(f.best as number)} ${f.figure.unit}`,
      w === 0 ? 'equal' : w < 0 ? `${pct(-w)} better` : `${pct(w)} worse`,
      toleranceText(f),
      runText(f.bestRun as HistoryEntry),
    ]);
  }
  lines.push(...table(rows));
  if (c.settings) lines.push(`  settings now: ${settingsText(c.settings)}`);
  const otherSettings = new Map<string, string[]>();
  for (const f of j.figures) {
    const text = f.bestRun ? settingsText(f.bestRun.settings) : undefined;
    if (text !== undefined && text !== settingsText(c.settings))
      otherSettings.set(text, [...(otherSettings.get(text) ?? []), f.figure.label]);
  }
  for (const [text, labels] of otherSettings)
    lines.push(`  the best ${labels.join(', ')} ran with other settings: ${text}`);
  if (j.failed) {
    const failed = j.figures.filter((f) => f.verdict === 'fail');
    lines.push(
      `  REGRESSION in bench/${j.part.part}: ${failed.map((f) => `${f.figure.label} ${fmt(f.value as number)} ${f.figure.unit} (best ${fmt(f.best as number)}, ${pct(f.worseBy as number)} worse, tolerance ${pct((f.tolerance as Tolerance).value)})`).join('; ')}`,
    );
  }
  return lines;
}

/**
 * The other figures of the same group that this run did not measure (another part's): the latest recorded value
 * of each and the best on this machine kind, so a speed change is read beside the memory it bought, and back.
 */
export function formatGroupContext(
  group: string,
  parts: readonly GuardedPart[],
  measuredNow: ReadonlySet<string>,
  history: readonly HistoryEntry[],
  machine: MachineKind,
): string[] {
  const lines: string[] = [];
  for (const part of parts.filter((p) => p.group === group && !measuredNow.has(p.part))) {
    const runs = history.filter(
      (e) => e.part === part.part && sameMachineKind(e.machine, machine) && e.guard !== 'skipped',
    );
    const latest = runs.at(-1);
    if (!latest) continue;
    lines.push(
      `  beside it, bench/${part.part} as last recorded (${runText(latest)}; settings: ${settingsText(latest.settings)}):`,
    );
    const rows: string[][] = [];
    for (const f of part.figures) {
      const v = latest.figures[f.name];
      if (v === undefined) continue;
      const values = runs.map((e) => e.figures[f.name]).filter((x): x is number => x !== undefined);
      rows.push([
        '',
        f.kind,
        `${f.label} (${f.better} is better)`,
        `${fmt(v)} ${f.unit}`,
        `best ${fmt(bestOf(f.better, values))} ${f.unit}`,
      ]);
    }
    lines.push(...table(rows));
  }
  return lines;
}
