import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../src/index.ts';

describe('test PostgreSQL helper', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase(inject('postgresUrl'));
  });
  afterAll(async () => {
    await db.drop();
  });

  it('creates a table in a fresh database and reads the rows back', async () => {
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      await client.query('CREATE TABLE greeting (id serial PRIMARY KEY, text text NOT NULL)');
      await client.query('INSERT INTO greeting (text) VALUES ($1), ($2)', ['hello', 'olá']);
      const { rows } = await client.query<{ text: string }>('SELECT text FROM greeting ORDER BY id');
      expect(rows.map((r) => r.text)).toEqual(['hello', 'olá']);
      const current = await client.query<{ db: string }>('SELECT current_database() AS db');
      expect(current.rows[0]?.db).toBe(db.name);
    } finally {
      await client.end();
    }
  });

  it('gives each caller its own database', async () => {
    const other = await createTestDatabase(inject('postgresUrl'));
    try {
      const client = new pg.Client({ connectionString: other.url });
      await client.connect();
      const { rows } = await client.query("SELECT to_regclass('greeting') AS t");
      await client.end();
      expect(rows[0].t).toBeNull();
    } finally {
      await other.drop();
    }
  });
});
