export { freePort } from './ports.ts';
export {
  createTestDatabase,
  findPostgresBinaries,
  startTestPostgres,
  type TestDatabase,
  type TestPostgres,
} from './postgres.ts';
