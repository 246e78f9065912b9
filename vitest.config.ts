import { join } from 'node:path';
import { cacheDir } from '@scriptorium/kube-testenv';
import { defineConfig } from 'vitest/config';

// Three projects: `unit` runs pure logic beside its code (src/**/*.test.ts, sim/**/*.test.ts, a browser app's
// web/**/*.test.ts, the benchmarks' regression guard bench/*.test.ts, and the check of
// the monitoring files in deploy/monitoring, the end-to-end suite's helpers deploy/e2e/*.unit.test.ts);
// `integration` runs tests that start real processes, servers and PostgreSQL (test/**/*.test.ts);
// `e2e` runs deploy/e2e on a real cluster (make e2e-local, make e2e-kind; not part of make test).
const parts = '{packages/*,services/*,operator,harness}';

export default defineConfig({
  // Vitest keeps each test file's last duration here and starts the longest files first. Outside the repository, so
  // that a fresh clone (CI) finds them too: without them it orders files by size, and the integration stage's
  // longest files started last and ran alone at its end.
  cacheDir: join(cacheDir(), 'vite'),
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: [
            `${parts}/src/**/*.test.ts`,
            `${parts}/sim/**/*.test.ts`,
            'services/*/web/**/*.test.ts',
            'tools/**/*.test.ts',
            'bench/*.test.ts',
            'deploy/monitoring/**/*.test.ts',
            'deploy/e2e/**/*.unit.test.ts',
          ],
          testTimeout: 20_000,
          // vitest's default is one worker fewer than the cores: one on these 2-core machines. Pure tests share
          // nothing, so both cores run them (the simulator's seed shards are most of the time).
          maxWorkers: 2,
          // One module graph per worker, not one per file: importing it again for each of some 150 small files
          // cost the stage about 27 s of its 174 (CI's step table). So a unit test leaves no global state behind
          // (fake timers restored in afterEach, no module mocks).
          isolate: false,
        },
      },
      {
        test: {
          name: 'integration',
          include: [`${parts}/test/**/*.test.ts`],
          globalSetup: ['packages/test-support/src/vitest-global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 180_000,
          // Each file starts real servers and processes, which mostly wait (on each other, on timers, on the
          // network): the stage keeps the two cores about half busy with two files at a time, busy with four.
          maxWorkers: 4,
        },
      },
      {
        // The end-to-end suite on a real cluster (KUBECONFIG): make e2e-local / make e2e-kind run it; make test
        // does not. One journey per file, steps in order; all files side by side (each in a namespace of its own,
        // with an operator watching only it), since they wait on pods far more than they compute (a CI run's
        // end-to-end stage kept about one of the two cores busy).
        test: {
          name: 'e2e',
          include: ['deploy/e2e/**/*.test.ts'],
          // The suite's own helpers are checked by the unit stage.
          exclude: ['deploy/e2e/**/*.unit.test.ts'],
          testTimeout: 900_000,
          hookTimeout: 900_000,
          maxWorkers: 4,
        },
      },
    ],
  },
});
