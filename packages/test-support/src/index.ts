export {
  createTestDatabase,
  findPostgresBinaries,
  type LocalPostgresOptions,
  startLocalPostgres,
  startTestPostgres,
  type TestDatabase,
  type TestPostgres,
} from './postgres.ts';
export { FUZZ_CHECKS, type FuzzOptions, type FuzzResult, fuzz, schemathesisBinary } from './schemathesis.ts';
