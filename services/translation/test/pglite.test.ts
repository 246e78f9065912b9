// Smoke test on embedded PGlite (the `make dev` default) with the pseudo provider: migrations, the main routes,
// the in-memory rate-limit store, and `serve` refusing a database whose migrations are behind.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { migrationStatus, openDatabase } from '../src/db/index.ts';
import { MemoryRateLimitStore } from '../src/infra/rate-limiter.ts';
import { MigrationsBehindError, startServer } from '../src/server.ts';
import { batch, bearer, type Harness, startHarness, WORKER_SECRET } from './harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ pglite: true, provider: 'pseudo' });
});
afterAll(async () => h?.close());

describe('PGlite + pseudo provider', () => {
  it('migrates, translates, judges, plays, drains and enforces retention', async () => {
    expect(h.database.kind).toBe('pglite');
    expect(h.app.rateLimits.store).toBeInstanceOf(MemoryRateLimitStore);
    expect((await migrationStatus(h.database)).pending).toEqual([]);
    const { apiKey } = await h.account();
    const t = await h.app.inject({
      method: 'POST',
      url: '/api/v1/translate',
      headers: bearer(apiKey),
      payload: batch(2, {
        items: [{ id: 'a', text: 'Hello {name}, you have {n, plural, one {# file} other {# files}}', isIcu: true }],
      }),
    });
    expect(t.statusCode).toBe(200);
    expect(t.json().translations[0].text).toContain('{name}');
    expect(t.json().tokensIn).toBeGreaterThan(0);
    const j = await h.app.inject({
      method: 'POST',
      url: '/api/v1/judge',
      headers: bearer(apiKey),
      payload: { sourceLocale: 'en', targetLocale: 'de', items: [{ id: 'a', source: 'Hi {x}', target: 'Hallo' }] },
    });
    expect(j.statusCode).toBe(200);
    expect(j.json().judge).toBe('heuristic');
    const p = await h.app.inject({
      method: 'POST',
      url: '/api/v1/playground',
      payload: { source: 'Hello', targetLocale: 'fr' },
    });
    expect(p.statusCode).toBe(200);
    expect(
      (await h.app.inject({ method: 'POST', url: '/api/worker', headers: bearer(WORKER_SECRET) })).statusCode,
    ).toBe(200);
    expect(
      (await h.app.inject({ method: 'POST', url: '/api/retention', headers: bearer(WORKER_SECRET) })).statusCode,
    ).toBe(200);
    expect((await h.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
  });

  it('serve refuses to start on a database whose migrations are behind', async () => {
    const database = await openDatabase('pglite:memory');
    const config = loadConfig({ DATABASE_URL: 'pglite:memory', PORT: '0', HOST: '127.0.0.1' });
    await expect(startServer(config, { database })).rejects.toBeInstanceOf(MigrationsBehindError);
  });
});
