// `make bench`: runs each part's benchmark (bench/<part>/run.ts) in turn, or only the parts
// named in BENCH (comma-separated, e.g. BENCH=ledger). Each writes JSON to bench/results/.
//
// Then the regression guard (bench/guard.ts, the figures in bench/guard-figures.ts; bench/README.md,
// ## regression guard): each guarded part's run is appended to bench/results/history/<part>.jsonl and its figures
// are printed against the best comparable recorded run; a drop beyond the noise makes `make bench` fail.
//   BENCH_GUARD=0     do not judge (the run is recorded as 'skipped' and is never a baseline)
//   BENCH_RECORD=0    do not append to the history
//   BENCH_ACCEPT=why  a deliberate trade-off: record the run as the new baseline (later runs compare from it on)
//   --check-only      run no benchmark: judge the results JSON already in bench/results/ (or --results=<dir>)
//                     against the history, append nothing; the load is its history entry's, else --load=<start>,<end>
//                     (1-minute load averages), else the load now
import { execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import {
  extractFigures,
  formatGroupContext,
  formatJudgment,
  type GuardedPart,
  type HistoryEntry,
  judgeRun,
  type MachineKind,
  type PartJudgment,
  resultsAtOf,
  runVerdict,
  variantOf,
} from './guard.ts';
import { GUARDED_PARTS, guardedPart } from './guard-figures.ts';

const here = import.meta.dirname;
const root = join(here, '..');
const historyDir = join(here, 'results', 'history');
const checkOnly = process.argv.includes('--check-only');
const resultsDir =
  process.argv.find((a) => a.startsWith('--results='))?.slice('--results='.length) ?? join(here, 'results');
const guardOn = process.env.BENCH_GUARD !== '0';
const recordOn = process.env.BENCH_RECORD !== '0' && !checkOnly;
const accept = process.env.BENCH_ACCEPT?.trim() || undefined;
const loadArg = process.argv
  .find((a) => a.startsWith('--load='))
  ?.slice('--load='.length)
  .split(',')
  .map(Number);

const wanted = process.env.BENCH?.split(',').filter(Boolean);
const parts = readdirSync(here, { withFileTypes: true })
  .filter((d) => d.isDirectory() && d.name !== 'results' && existsSync(join(here, d.name, 'run.ts')))
  .map((d) => d.name)
  .filter((name) => !wanted || wanted.includes(name));

function machineKind(): MachineKind {
  let cpu = cpus()[0]?.model.trim() ?? 'unknown';
  try {
    const line = readFileSync('/proc/cpuinfo', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('model name'));
    if (line) cpu = line.slice(line.indexOf(':') + 1).trim();
  } catch {
    // Not Linux: the model node reports.
  }
  return { cores: cpus().length, memoryGiB: Math.round(totalmem() / 2 ** 30), cpu };
}

function git(args: string[]): string | null {
  try {
    return execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

const load1m = (): number => Math.round(loadavg()[0]! * 100) / 100;

function readHistory(part: string): HistoryEntry[] {
  const file = join(historyDir, `${part}.jsonl`);
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as HistoryEntry);
}

function appendHistory(entry: HistoryEntry): void {
  mkdirSync(historyDir, { recursive: true });
  appendFileSync(join(historyDir, `${entry.part}.jsonl`), `${JSON.stringify(entry)}\n`);
}

/** The entry of a run of `part` that ended now, from its results JSON; null when the run wrote no fresh results. */
function entryOf(g: GuardedPart, started: Date, loadStart: number, machine: MachineKind): HistoryEntry | null {
  const file = join(resultsDir, `${g.part}.json`);
  if (!existsSync(file) || statSync(file).mtimeMs < started.getTime()) {
    console.error(`guard ${g.part}: ${file} was not written by this run: nothing recorded`);
    return null;
  }
  const json: unknown = JSON.parse(readFileSync(file, 'utf8'));
  const dirty = git(['status', '--porcelain', '--', '.', ':!bench/results']);
  return {
    part: g.part,
    at: new Date().toISOString(),
    resultsAt: resultsAtOf(g, json),
    commit: git(['rev-parse', 'HEAD']),
    dirty: dirty === null ? undefined : dirty.length > 0,
    machine,
    load: { start: loadStart, end: load1m() },
    variant: variantOf(g, process.env),
    ...(g.settings ? { settings: { ...g.settings } } : {}),
    figures: extractFigures(g, json, started.toISOString()),
    guard: 'skipped',
  };
}

/** --check-only: the results JSON as it stands, with the load and commit of its history entry when it has one. */
function entryAsItStands(g: GuardedPart, machine: MachineKind, history: HistoryEntry[]): HistoryEntry | null {
  const file = join(resultsDir, `${g.part}.json`);
  if (!existsSync(file)) return null;
  const json: unknown = JSON.parse(readFileSync(file, 'utf8'));
  const resultsAt = resultsAtOf(g, json);
  const recorded = history.find((e) => resultsAt !== null && e.resultsAt === resultsAt);
  return {
    part: g.part,
    at: recorded?.at ?? statSync(file).mtime.toISOString(),
    resultsAt,
    commit: recorded ? recorded.commit : git(['rev-parse', 'HEAD']),
    machine: recorded?.machine ?? machine,
    load:
      recorded?.load ??
      (loadArg
        ? { start: loadArg[0] ?? null, end: loadArg[1] ?? loadArg[0] ?? null }
        : { start: load1m(), end: load1m() }),
    variant: recorded?.variant ?? variantOf(g, process.env),
    ...(recorded?.settings || g.settings ? { settings: { ...(recorded?.settings ?? g.settings) } } : {}),
    figures: extractFigures(g, json),
    guard: 'skipped',
  };
}

const machine = machineKind();
const judgments: PartJudgment[] = [];
let failed = 0;

if (checkOnly) {
  for (const g of GUARDED_PARTS.filter((p) => !wanted || wanted.includes(p.part))) {
    const history = readHistory(g.part);
    const entry = entryAsItStands(g, machine, history);
    if (!entry) continue;
    const j = judgeRun(g, entry, history);
    judgments.push(j);
    console.log(formatJudgment(j).join('\n'));
  }
} else {
  if (parts.length === 0) {
    console.error('make bench: no benchmark found (bench/<part>/run.ts)');
    process.exit(2);
  }
  for (const part of parts) {
    console.log(`\n== bench/${part} ==`);
    const started = new Date();
    const loadStart = load1m();
    const result = spawnSync(process.execPath, [join(here, part, 'run.ts')], { stdio: 'inherit' });
    if (result.status !== 0) {
      failed++;
      continue;
    }
    const g = guardedPart(part);
    if (!g) continue;
    const entry = entryOf(g, started, loadStart, machine);
    if (!entry) continue;
    const history = readHistory(part);
    if (guardOn) {
      const j = judgeRun(g, entry, history);
      judgments.push(j);
      console.log(formatJudgment(j).join('\n'));
      Object.assign(entry, runVerdict(j));
    }
    if (accept) {
      entry.guard = 'accepted';
      entry.accepted = accept;
      delete entry.failed;
      console.log(`guard ${part}: BENCH_ACCEPT: this run is the new baseline (${accept})`);
    }
    if (recordOn) appendHistory(entry);
  }
}

// Beside each judged part, the other parts of its group (speed beside memory) as last recorded.
const measured = new Set(judgments.map((j) => j.part.part));
for (const group of new Set(judgments.map((j) => j.part.group))) {
  const history = GUARDED_PARTS.filter((p) => p.group === group).flatMap((p) => readHistory(p.part));
  const lines = formatGroupContext(group, GUARDED_PARTS, measured, history, machine);
  if (lines.length > 0) console.log(`guard [${group}]:\n${lines.join('\n')}`);
}

const regressions = accept ? [] : judgments.filter((j) => j.failed);
if (regressions.length > 0) {
  console.error(
    `\nmake bench: REGRESSION beyond the measured noise in ${regressions.map((j) => `bench/${j.part.part}`).join(', ')}` +
      ' (figures above; bench/README.md, ## regression guard). BENCH_ACCEPT="<why>" records a deliberate trade-off.',
  );
}
process.exit(failed || regressions.length > 0 ? 1 : 0);
