// Reads vitest JSON reports and prints one closing line that any CI can read:
//   "tests: N passed, N failed, N skipped"
// Before it, each failed test (up to MAX_SHOWN) with the first line of its failure, so that the end of a CI log,
// often all a reader gets, says what failed and why.
// Usage: node tools/test-summary.ts report.json [report.json ...]
import { existsSync, readFileSync } from 'node:fs';

interface VitestJsonReport {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTodoTests: number;
  numFailedTestSuites: number;
  testResults?: {
    name: string;
    status?: string;
    message?: string;
    assertionResults?: { fullName: string; status: string; failureMessages?: string[] }[];
  }[];
}

/** Failed tests listed before the summary line, at most. */
const MAX_SHOWN = 12;
const MAX_LINE = 400;

// biome-ignore lint/suspicious/noControlCharactersInRegex: the ANSI escapes a failure message may carry
const plain = (text: string) => text.replace(/\u001b\[[0-9;]*m/g, '');
const firstLine = (text: string) => {
  const line = plain(text).trim().split('\n')[0] ?? '';
  return line.length > MAX_LINE ? `${line.slice(0, MAX_LINE)}…` : line;
};

let passed = 0;
let failed = 0;
let skipped = 0;
const missing: string[] = [];
const failures: string[] = [];
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
  for (const suite of report.testResults ?? []) {
    const failedTests = (suite.assertionResults ?? []).filter((t) => t.status === 'failed');
    for (const t of failedTests) failures.push(`${t.fullName}: ${firstLine(t.failureMessages?.[0] ?? '')}`);
    if (failedTests.length === 0 && suite.status === 'failed')
      failures.push(`${suite.name}: ${firstLine(suite.message ?? 'the file failed to run')}`);
  }
}
// A run that never produced its report (it crashed before) counts as one failure.
failed += missing.length;
for (const file of missing) console.error(`test-summary: no report at ${file} (that run did not finish)`);
for (const line of failures.slice(0, MAX_SHOWN)) console.error(`test-summary: FAILED ${line}`);
if (failures.length > MAX_SHOWN) console.error(`test-summary: … and ${failures.length - MAX_SHOWN} more failed`);
console.log(`tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
