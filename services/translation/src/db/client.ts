// Opens the database: PostgreSQL through `pg` (production, integration tests) or embedded PGlite (`make dev`,
// smoke tests). The drizzle instance serves the query builder; `query` runs raw parameterized SQL on the hot paths.
import { mkdirSync } from 'node:fs';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import pg from 'pg';
import * as schema from './schema.ts';

export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;

export interface Database {
  readonly kind: 'postgres' | 'pglite';
  readonly db: Db;
  /**
   * Raw parameterized SQL ($1, $2, …); returns the rows. With `name`, PostgreSQL keeps the statement prepared per
   * connection (hot paths: parsed and planned once).
   */
  query<T = Record<string, unknown>>(text: string, params?: unknown[], name?: string): Promise<T[]>;
  close(): Promise<void>;
}

// int8 (bigint) comes back as a JS number: every bigint column here holds counts and micro-units far below 2^53.
pg.types.setTypeParser(20, (v) => Number(v));

/**
 * Opens `url`: `postgres://…` uses a `pg` pool; `pglite:memory` or `pglite:/path/to/dir` uses PGlite.
 * @example const database = await openDatabase('pglite:memory');
 */
export async function openDatabase(url: string, opts: { poolMax?: number } = {}): Promise<Database> {
  if (url.startsWith('pglite:')) return openPglite(url.slice('pglite:'.length).replace(/^\/\//, ''));
  const pool = new pg.Pool({ connectionString: url, max: opts.poolMax ?? 10, idleTimeoutMillis: 30_000 });
  // An idle client that loses its connection must not crash the process.
  pool.on('error', () => {});
  const db = drizzlePg(pool, { schema }) as unknown as Db;
  return {
    kind: 'postgres',
    db,
    async query<T>(text: string, params: unknown[] = [], name?: string) {
      const result = await pool.query(name ? { name, text, values: params } : { text, values: params });
      return result.rows as T[];
    },
    close: () => pool.end(),
  };
}

async function openPglite(path: string): Promise<Database> {
  const inMemory = path === '' || path === 'memory';
  if (!inMemory) mkdirSync(path, { recursive: true });
  // Loaded lazily: production (pg) never pays for the embedded database.
  const { PGlite } = await import('@electric-sql/pglite');
  const { drizzle: drizzlePglite } = await import('drizzle-orm/pglite');
  const client = inMemory ? new PGlite() : new PGlite(path);
  await client.waitReady;
  // PGlite returns int8 as bigint: parse it as a number like the pg pool does.
  const db = drizzlePglite(client, { schema }) as unknown as Db;
  return {
    kind: 'pglite',
    db,
    async query<T>(text: string, params: unknown[] = []) {
      const result = await client.query(text, params, { parsers: { 20: (v: string) => Number(v) } });
      return result.rows as T[];
    },
    close: () => client.close(),
  };
}
