// Prints the step table of a CI run from the rows tools/build/lib.sh appended (NAME, seconds, status): one line per
// step in the order they ended, nested steps (NAME with a `/`) indented under their stage, then the run's wall time.
//   node tools/build/step-report.ts .test-results/steps.tsv [WALL_SECONDS]
import { existsSync, readFileSync } from 'node:fs';

export interface StepRow {
  name: string;
  seconds: number;
  status: string;
}

/** The rows of a steps file; lines that are not NAME<TAB>SECONDS<TAB>STATUS are skipped. */
export function parseSteps(text: string): StepRow[] {
  const rows: StepRow[] = [];
  for (const line of text.split('\n')) {
    const [name, seconds, status] = line.split('\t');
    if (!name || !status || !/^\d+$/.test(seconds ?? '')) continue;
    rows.push({ name, seconds: Number(seconds), status });
  }
  return rows;
}

const clock = (s: number) => (s >= 60 ? `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s` : `${s} s`);

/**
 * The table: one row per step in the order they ended (a stage's phases are `stage/phase`, artifacts
 * `build/name`), seconds right-aligned, status; the wall time last when known.
 */
export function renderSteps(rows: readonly StepRow[], wallSeconds?: number): string {
  const label = (r: StepRow) => r.name;
  const width = Math.max(20, ...rows.map((r) => label(r).length));
  const lines = ['ci steps (seconds; ran = a stage that always runs, built = made from its recipe, cached = reused):'];
  for (const r of rows) lines.push(`  ${label(r).padEnd(width)} ${String(r.seconds).padStart(5)}  ${r.status}`);
  const built = rows.filter((r) => r.status === 'built');
  lines.push(
    `  ${built.length} built (${clock(built.reduce((s, r) => s + r.seconds, 0))}), ${rows.filter((r) => r.status === 'cached').length} cached` +
      (wallSeconds !== undefined ? `; the whole run ${clock(wallSeconds)}` : ''),
  );
  return lines.join('\n');
}

if (import.meta.main) {
  const [file, wall] = process.argv.slice(2);
  if (!file || !existsSync(file)) process.exit(0);
  console.log(renderSteps(parseSteps(readFileSync(file, 'utf8')), wall === undefined ? undefined : Number(wall)));
}
