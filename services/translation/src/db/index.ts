export { type Database, type Db, openDatabase } from './client.ts';
export { type MigrationStatus, migrate, migrationStatus, migrationsFolder } from './migrate.ts';
export * as schema from './schema.ts';
