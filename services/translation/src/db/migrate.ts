// Applies the one migrations folder (drizzle's migrator), and tells whether a database is behind.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import type { PgliteDatabase } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import type { Database } from './client.ts';

export const migrationsFolder = join(import.meta.dirname, 'migrations');

export interface MigrationStatus {
  /** Migrations in the folder. */
  total: number;
  /** Migrations recorded as applied in the database. */
  applied: number;
  /** Tags of the migrations not applied yet. */
  pending: string[];
}

/** Applies every pending migration; returns how many were applied. */
export async function migrate(database: Database): Promise<number> {
  const before = await migrationStatus(database);
  if (database.kind === 'pglite') {
    await migratePglite(database.db as unknown as PgliteDatabase, { migrationsFolder });
  } else {
    await migratePg(database.db as unknown as NodePgDatabase, { migrationsFolder });
  }
  return before.pending.length;
}

/** Compares the migrations folder with drizzle's journal table in the database. */
export async function migrationStatus(database: Database): Promise<MigrationStatus> {
  const files = readMigrationFiles({ migrationsFolder });
  const tags = journalTags();
  const [exists] = await database.query<{ present: boolean }>(
    `SELECT to_regclass('drizzle.__drizzle_migrations') IS NOT NULL AS present`,
  );
  let last = 0;
  let applied = 0;
  if (exists?.present) {
    const [row] = await database.query<{ last: string | number | null; n: string | number }>(
      'SELECT max(created_at) AS last, count(*) AS n FROM drizzle.__drizzle_migrations',
    );
    last = Number(row?.last ?? 0);
    applied = Number(row?.n ?? 0);
  }
  const pending = files.flatMap((f, i) => (f.folderMillis > last ? [tags[i] ?? String(f.folderMillis)] : []));
  return { total: files.length, applied, pending };
}

function journalTags(): string[] {
  // The journal lists the tags in the same order readMigrationFiles returns the files.
  const journal = JSON.parse(readFileSync(join(migrationsFolder, 'meta', '_journal.json'), 'utf8')) as {
    entries: { tag: string }[];
  };
  return journal.entries.map((e) => e.tag);
}
