// `make bench`: runs each part's benchmark (bench/<part>/run.ts) in turn, or only the parts
// named in BENCH (comma-separated, e.g. BENCH=ledger). Each writes JSON to bench/results/.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const here = import.meta.dirname;
const wanted = process.env.BENCH?.split(',').filter(Boolean);
const parts = readdirSync(here, { withFileTypes: true })
  .filter((d) => d.isDirectory() && d.name !== 'results' && existsSync(join(here, d.name, 'run.ts')))
  .map((d) => d.name)
  .filter((name) => !wanted || wanted.includes(name));

if (parts.length === 0) {
  console.error('make bench: no benchmark found (bench/<part>/run.ts)');
  process.exit(2);
}
let failed = 0;
for (const part of parts) {
  console.log(`\n== bench/${part} ==`);
  const result = spawnSync(process.execPath, [join(here, part, 'run.ts')], { stdio: 'inherit' });
  if (result.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
