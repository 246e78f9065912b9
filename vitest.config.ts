import { defineConfig } from 'vitest/config';

// Two projects: `unit` runs pure logic beside its code (src/**/*.test.ts, sim/**/*.test.ts);
// `integration` runs tests that start real processes, servers and PostgreSQL (test/**/*.test.ts).
const parts = '{packages/*,services/*,operator}';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: [`${parts}/src/**/*.test.ts`, `${parts}/sim/**/*.test.ts`, 'tools/**/*.test.ts'],
          testTimeout: 20_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: [`${parts}/test/**/*.test.ts`],
          globalSetup: ['packages/test-support/src/vitest-global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 180_000,
          // Each file starts real servers and processes; two cores are shared between them.
          maxWorkers: 2,
        },
      },
    ],
  },
});
