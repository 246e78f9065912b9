// The closing line of every test run, and the failures listed before it, from vitest JSON reports.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const script = join(import.meta.dirname, 'test-summary.ts');

function summarize(reports: object[], extra: string[] = []): { stdout: string; stderr: string } {
  const dir = mkdtempSync(join(tmpdir(), 'test-summary-'));
  const files = reports.map((r, i) => {
    const file = join(dir, `r${i}.json`);
    writeFileSync(file, JSON.stringify(r));
    return file;
  });
  const run = spawnSync(process.execPath, [script, ...files, ...extra], { encoding: 'utf8' });
  return { stdout: run.stdout, stderr: run.stderr };
}

const report = (over: object) => ({
  numPassedTests: 0,
  numFailedTests: 0,
  numPendingTests: 0,
  numTodoTests: 0,
  numFailedTestSuites: 0,
  testResults: [],
  ...over,
});

describe('test-summary', () => {
  it('sums the reports into the closing line, a missing report counting as a failure', () => {
    const r = summarize(
      [report({ numPassedTests: 5, numPendingTests: 1 }), report({ numPassedTests: 2, numTodoTests: 1 })],
      ['/nonexistent/e2e.json'],
    );
    expect(r.stdout).toBe('tests: 7 passed, 1 failed, 2 skipped\n');
    expect(r.stderr).toContain('no report at /nonexistent/e2e.json');
  });

  it('names each failed test with the first line of its failure (ANSI colours removed), the summary line last', () => {
    const r = summarize([
      report({
        numPassedTests: 1,
        numFailedTests: 2,
        testResults: [
          {
            name: '/repo/deploy/e2e/suite.test.ts',
            status: 'failed',
            assertionResults: [
              { fullName: 'cluster translates', status: 'passed' },
              {
                fullName: 'cluster runs a Job',
                status: 'failed',
                failureMessages: ['\u001b[31mAssertionError: Job e2e-worker; its pods:\u001b[39m\ne2e-worker-x Failed'],
              },
              { fullName: 'cluster columns', status: 'failed', failureMessages: ['Error: not run: the earlier step'] },
            ],
          },
        ],
      }),
      report({
        numFailedTestSuites: 1,
        testResults: [{ name: '/repo/a.test.ts', status: 'failed', message: 'SyntaxError: bad\nat line 1' }],
      }),
    ]);
    expect(r.stderr.trim().split('\n')).toEqual([
      'test-summary: FAILED cluster runs a Job: AssertionError: Job e2e-worker; its pods:',
      'test-summary: FAILED cluster columns: Error: not run: the earlier step',
      'test-summary: FAILED /repo/a.test.ts: SyntaxError: bad',
    ]);
    expect(r.stdout).toBe('tests: 1 passed, 3 failed, 0 skipped\n');
  });
});
