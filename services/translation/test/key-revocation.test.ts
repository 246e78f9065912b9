// API-key revocation with the in-process key cache on: the revoking process refuses the key at once; another
// replica within its revocation check interval, at the cost of one shared generation query per interval.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../src/db/index.ts';
import { ApiKeyResolver, revokeApiKey } from '../src/domain/accounts.ts';
import { batch, bearer, type Harness, startHarness } from './harness.ts';

let h: Harness;
beforeAll(async () => {
  // Long TTL and check interval: only the revoking process's own invalidation can explain an immediate 401.
  h = await startHarness({ env: { API_KEY_CACHE_TTL_MS: '600000', API_KEY_REVOCATION_CHECK_MS: '600000' } });
});
afterAll(async () => h?.close());

/** The database, counting statements by name. */
function counting(database: Database): { database: Database; counts: Map<string, number> } {
  const counts = new Map<string, number>();
  const wrapped: Database = Object.create(database);
  wrapped.query = (text: string, params?: unknown[], name?: string) => {
    counts.set(name ?? text, (counts.get(name ?? text) ?? 0) + 1);
    return database.query(text, params, name);
  };
  return { database: wrapped, counts };
}

const keyIdOf = async (apiKey: string) =>
  (await h.database.query<{ id: string }>('SELECT id FROM api_keys WHERE prefix = $1', [apiKey.slice(0, 12)]))[0]!.id;

describe('API-key revocation', () => {
  it('takes effect at once in the revoking process, though the key is cached; audited; idempotent', async () => {
    const { apiKey, orgId } = await h.account();
    const post = () =>
      h.app.inject({ method: 'POST', url: '/api/v1/translate', headers: bearer(apiKey), payload: batch() });
    expect((await post()).statusCode).toBe(200);
    expect((await post()).statusCode).toBe(200); // served from the cache
    const keyId = await keyIdOf(apiKey);
    expect(await revokeApiKey(h.database, { keyId, actor: 'operator' }, h.app.apiKeys)).toBe(true);
    const after = await post();
    expect(after.statusCode).toBe(401);
    expect(after.json()).toEqual({ error: 'missing or invalid credentials' });
    expect(await revokeApiKey(h.database, { keyId, actor: 'operator' }, h.app.apiKeys)).toBe(false);
    const audit = await h.database.query<{ action: string; target: string }>(
      `SELECT action, target FROM audit_log WHERE org_id = $1 AND action = 'api_key.revoke'`,
      [orgId],
    );
    expect(audit).toEqual([{ action: 'api_key.revoke', target: keyId }]);
  });

  it('another replica stops accepting the key once its check interval has passed; cached hits cost one query per interval', async () => {
    const { apiKey } = await h.account();
    const other = counting(h.database);
    const replica = new ApiKeyResolver(other.database, 600_000, 300);
    expect(await replica.resolve(apiKey)).not.toBeNull(); // miss: one principal lookup
    for (let i = 0; i < 50; i++) expect(await replica.resolve(apiKey)).not.toBeNull(); // hits
    expect(other.counts.get('api_key_principal')).toBe(1);
    // 50 hits within (at most a few) check intervals: the generation is read once per interval, not per request.
    expect(other.counts.get('api_key_generation') ?? 0).toBeGreaterThanOrEqual(1);
    expect(other.counts.get('api_key_generation') ?? 0).toBeLessThan(10);

    // Revoked by another process (no resolver passed: this replica only learns it from the generation).
    expect(await revokeApiKey(h.database, { keyId: await keyIdOf(apiKey), actor: 'operator' })).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 350));
    expect(await replica.resolve(apiKey)).toBeNull();
    expect(other.counts.get('api_key_principal')).toBe(2); // the cache was dropped, the key looked up again
  });

  it('the window is the shorter of the check interval and the cache TTL: a replica may serve its cached entry until then', async () => {
    const { apiKey } = await h.account();
    const replica = new ApiKeyResolver(h.database, 300, 600_000);
    expect(await replica.resolve(apiKey)).not.toBeNull();
    await revokeApiKey(h.database, { keyId: await keyIdOf(apiKey), actor: 'operator' });
    await new Promise((resolve) => setTimeout(resolve, 350));
    expect(await replica.resolve(apiKey)).toBeNull(); // the entry expired: looked up again, revoked
  });
});
