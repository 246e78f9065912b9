// Reads vitest JSON reports and prints one closing line that any CI can read:
//   "tests: N passed, N failed, N skipped"
// Usage: node tools/test-summary.ts report.json [report.json ...]
import { existsSync, readFileSync } from 'node:fs';

interface VitestJsonReport {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTodoTests: number;
  numFailedTestSuites: number;
}

let passed = 0;
let failed = 0;
let skipped = 0;
const missing: string[] = [];
for (const file of process.argv.slice(2)) {
  if (!existsSync(file)) {
    missing.push(file);
    continue;
  }
  const report = JSON.parse(readFileSync(file, 'utf8')) as VitestJsonReport;
  passed += report.numPassedTests;
  // A file that fails to load has no failed test but is a failure all the same.
  failed += report.numFailedTests + (report.numFailedTests === 0 ? report.numFailedTestSuites : 0);
  skipped += report.numPendingTests + report.numTodoTests;
}
// A run that never produced its report (it crashed before) counts as one failure.
failed += missing.length;
for (const file of missing) console.error(`test-summary: no report at ${file} (that run did not finish)`);
console.log(`tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
