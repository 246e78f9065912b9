import type { TestProject } from 'vitest/node';
import { startTestPostgres } from './postgres.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string;
  }
}

/**
 * Starts one PostgreSQL server for the whole integration run; each test file then makes
 * its own database on it with `createTestDatabase(inject('postgresUrl'))`.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startTestPostgres();
  project.provide('postgresUrl', server.url);
  return () => server.stop();
}
