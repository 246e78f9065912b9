// The translation memory, opt-in per organization: answers without a provider call and without tokens, never across
// organizations, in the privacy export, TMX out and in, deleted when turned off, with the organization, by retention;
// and the review edit that breaks a plural (422).
import { DOMParser } from '@xmldom/xmldom';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, type Harness, type Session, startHarness, WORKER_SECRET } from './harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({
    env: {
      RATE_LIMITS: JSON.stringify([
        { route: '/api/v1/translate', requestsPerMinute: 1000 },
        { route: '/api/v1/translate/file', requestsPerMinute: 1000 },
      ]),
    },
  });
});
afterAll(async () => h?.close());

let n = 0;
/** A signed-in owner with an organization of its own and an API key of it. */
async function team(): Promise<{ owner: Session; orgId: string; apiKey: string }> {
  const owner = await h.signIn(`memory-owner-${++n}`);
  const orgId = (await h.call(owner, 'POST', '/api/v1/orgs', { name: `memory ${n}` })).json().id as string;
  const apiKey = (await h.call(owner, 'POST', '/api/v1/keys', { orgId })).json().apiKey as string;
  return { owner, orgId, apiKey };
}

const items = [
  { id: 'save', text: 'Save your changes' },
  { id: 'files', text: '{count, plural, one {# file} other {# files}}', isIcu: true },
  { id: 'menu', text: 'Open', context: 'menu' },
];
const translate = (apiKey: string, payload: Record<string, unknown> = {}) =>
  h.app.inject({
    method: 'POST',
    url: '/api/v1/translate',
    headers: bearer(apiKey),
    payload: { sourceLocale: 'en', targetLocale: 'de', tier: 'cheap', items, style: {}, glossary: [], ...payload },
  });
const rows = async (orgId: string) =>
  (
    await h.database.query<{ n: number }>('SELECT count(*)::int AS n FROM translation_memory WHERE org_id = $1', [
      orgId,
    ])
  )[0]!.n;
const events = async (orgId: string) =>
  (await h.database.query<{ n: number }>('SELECT count(*)::int AS n FROM usage_events WHERE org_id = $1', [orgId]))[0]!
    .n;

describe('translation memory', () => {
  it('is off by default: nothing stored, every call goes to the provider', async () => {
    const t = await team();
    expect((await h.call(t.owner, 'GET', `/api/v1/orgs/${t.orgId}/memory`)).json()).toEqual({
      enabled: false,
      entries: 0,
    });
    await translate(t.apiKey);
    const before = h.fake!.requestCount;
    expect((await translate(t.apiKey)).json().tokensIn).toBeGreaterThan(0);
    expect(h.fake!.requestCount).toBe(before + 1);
    expect(await rows(t.orgId)).toBe(0);
  });

  it('second identical call: answered from the memory, 0 tokens, no provider call, fromMemory; ICU-normalized', async () => {
    const t = await team();
    const on = await h.call(t.owner, 'PUT', `/api/v1/orgs/${t.orgId}/memory`, { enabled: true });
    expect(on.json()).toEqual({ enabled: true, entries: 0 });
    const first = await translate(t.apiKey);
    expect(first.json().translations.every((x: { fromMemory?: boolean }) => x.fromMemory === undefined)).toBe(true);
    expect((await h.call(t.owner, 'GET', `/api/v1/orgs/${t.orgId}/memory`)).json()).toEqual({
      enabled: true,
      entries: 3,
    });
    const calls = h.fake!.requestCount;
    const usage = await events(t.orgId);
    const second = await translate(t.apiKey, {
      items: items.map((i) => (i.id === 'files' ? { ...i, text: '{count,plural,one{# file}other{# files}}' } : i)),
    });
    expect(second.statusCode).toBe(200);
    expect(second.json()).toMatchObject({ tokensIn: 0, tokensOut: 0, issues: [] });
    expect(second.json().translations).toEqual(
      first.json().translations.map((x: { id: string; text: string }) => ({ ...x, fromMemory: true })),
    );
    expect(h.fake!.requestCount).toBe(calls);
    expect(await events(t.orgId)).toBe(usage);
    // Another context is another entry: translated by the provider.
    const other = await translate(t.apiKey, { items: [{ id: 'menu', text: 'Open', context: 'verb' }] });
    expect(other.json().translations[0].fromMemory).toBeUndefined();
    expect(h.fake!.requestCount).toBe(calls + 1);
    // A dry run tells how many the memory would answer.
    const dry = await translate(t.apiKey, { dryRun: true });
    expect(dry.json()).toMatchObject({ dryRun: true, items: 0, fromMemory: 3, providerRequests: 0, priceMicros: 0 });
  });

  it('files: the second run of the same file is answered from the memory (0 tokens, no provider call)', async () => {
    const t = await team();
    await h.call(t.owner, 'PUT', `/api/v1/orgs/${t.orgId}/memory`, { enabled: true });
    const content = JSON.stringify({
      a: { b: 'Hello {name}', c: 'Delete all' },
      d: '{n, plural, one {# day} other {# days}}',
    });
    const file = () =>
      h.app.inject({
        method: 'POST',
        url: '/api/v1/translate/file',
        headers: bearer(t.apiKey),
        payload: { format: 'json', content, sourceLocale: 'en', targetLocale: 'pl', tier: 'cheap' },
      });
    const first = (await file()).json();
    const calls = h.fake!.requestCount;
    const second = (await file()).json();
    expect(second).toMatchObject({ tokensIn: 0, tokensOut: 0, fromMemory: 3, content: first.content, issues: [] });
    expect(h.fake!.requestCount).toBe(calls);
  });

  it('never across organizations: another organization with its memory on gets no hit', async () => {
    const a = await team();
    const b = await team();
    for (const t of [a, b]) await h.call(t.owner, 'PUT', `/api/v1/orgs/${t.orgId}/memory`, { enabled: true });
    await translate(a.apiKey);
    const calls = h.fake!.requestCount;
    const res = await translate(b.apiKey);
    expect(res.json().tokensIn).toBeGreaterThan(0);
    expect(res.json().translations.some((x: { fromMemory?: boolean }) => x.fromMemory)).toBe(false);
    expect(h.fake!.requestCount).toBe(calls + 1);
  });

  it('roles: members read, admins switch; 403 without disclosure for others', async () => {
    const t = await team();
    const stranger = await h.signIn(`memory-stranger-${++n}`);
    const forbidden = await h.call(stranger, 'GET', `/api/v1/orgs/${t.orgId}/memory`);
    const unknown = await h.call(stranger, 'GET', '/api/v1/orgs/no-such-org/memory');
    expect(forbidden.statusCode).toBe(403);
    expect(unknown.statusCode).toBe(403);
    expect(forbidden.json()).toEqual(unknown.json());
    const invite = (await h.call(t.owner, 'POST', `/api/v1/orgs/${t.orgId}/members`, { email: stranger.email })).json();
    expect((await h.call(stranger, 'POST', '/api/v1/invites/accept', { token: invite.token })).statusCode).toBe(200);
    expect((await h.call(stranger, 'GET', `/api/v1/orgs/${t.orgId}/memory`)).statusCode).toBe(200);
    for (const [method, url, body] of [
      ['PUT', `/api/v1/orgs/${t.orgId}/memory`, { enabled: true }],
      ['GET', `/api/v1/orgs/${t.orgId}/memory.tmx`, undefined],
    ] as const) {
      expect((await h.call(stranger, method, url, body)).statusCode, url).toBe(403);
    }
    expect((await h.call(null, 'GET', `/api/v1/orgs/${t.orgId}/memory`)).statusCode).toBe(401);
  });

  it('TMX 1.4b: export, import into another organization (answers from it there), 409 while off, 400 for a bad file', async () => {
    const a = await team();
    const b = await team();
    await h.call(a.owner, 'PUT', `/api/v1/orgs/${a.orgId}/memory`, { enabled: true });
    await translate(a.apiKey);
    const exported = await h.call(a.owner, 'GET', `/api/v1/orgs/${a.orgId}/memory.tmx`);
    expect(exported.statusCode).toBe(200);
    expect(exported.headers['content-type']).toMatch(/^application\/x-tmx\+xml/);
    const doc = new DOMParser().parseFromString(exported.body, 'text/xml');
    expect(doc.getElementsByTagName('tu')).toHaveLength(3);
    const upload = (body: string) =>
      h.app.inject({
        method: 'POST',
        url: `/api/v1/orgs/${b.orgId}/memory.tmx`,
        headers: { cookie: b.owner.cookie, 'content-type': 'application/x-tmx+xml' },
        payload: body,
      });
    expect((await upload(exported.body)).statusCode).toBe(409);
    await h.call(b.owner, 'PUT', `/api/v1/orgs/${b.orgId}/memory`, { enabled: true });
    const imported = await upload(exported.body);
    expect(imported.json()).toEqual({ imported: 3, skipped: 0, entries: 3 });
    const bad = await upload(exported.body.slice(0, 200));
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toMatch(/^TMX does not parse: line \d+/);
    const calls = h.fake!.requestCount;
    const res = await translate(b.apiKey);
    expect(res.json().tokensIn).toBe(0);
    expect(h.fake!.requestCount).toBe(calls);
  });

  it('privacy export includes what the person contributed; turning it off deletes it; erasure deletes it with the organization', async () => {
    const t = await team();
    await h.call(t.owner, 'PUT', `/api/v1/orgs/${t.orgId}/memory`, { enabled: true });
    await translate(t.apiKey);
    const bundle = (await h.call(t.owner, 'POST', '/api/v1/privacy/export')).json();
    expect(bundle.translationMemory).toHaveLength(3);
    expect(bundle.translationMemory[0]).toMatchObject({
      orgId: t.orgId,
      origin: 'translation',
      sourceLocale: 'en',
      targetLocale: 'de',
    });
    const off = await h.call(t.owner, 'PUT', `/api/v1/orgs/${t.orgId}/memory`, { enabled: false });
    expect(off.json()).toEqual({ enabled: false, entries: 0 });
    expect(await rows(t.orgId)).toBe(0);
    await translate(t.apiKey);
    expect(await rows(t.orgId)).toBe(0); // off stays off: nothing new is stored
    await h.call(t.owner, 'PUT', `/api/v1/orgs/${t.orgId}/memory`, { enabled: true });
    await translate(t.apiKey, { targetLocale: 'fr' });
    expect(await rows(t.orgId)).toBe(3);
    const erased = await h.call(t.owner, 'POST', '/api/v1/privacy/delete');
    expect(erased.json().plan.deletedOrganizations).toContain(t.orgId);
    expect(await rows(t.orgId)).toBe(0);
  });

  it('retention deletes entries unused for RETENTION__MEMORY_ENTRIES_DAYS and counts them', async () => {
    const t = await team();
    await h.call(t.owner, 'PUT', `/api/v1/orgs/${t.orgId}/memory`, { enabled: true });
    await translate(t.apiKey);
    await h.database.query(
      `UPDATE translation_memory SET last_used_at = now() - interval '400 days' WHERE org_id = $1 AND source_text = 'Open'`,
      [t.orgId],
    );
    const res = await h.app.inject({ method: 'POST', url: '/api/retention', headers: bearer(WORKER_SECRET) });
    expect(res.json().deleted.memoryEntries).toBe(1);
    expect(await rows(t.orgId)).toBe(2);
  });

  it('a hit refreshes the last use of an entry unused for a day, and leaves a fresher one alone', async () => {
    const t = await team();
    await h.call(t.owner, 'PUT', `/api/v1/orgs/${t.orgId}/memory`, { enabled: true });
    await translate(t.apiKey);
    const age = (interval: string, source: string) =>
      h.database.query(
        `UPDATE translation_memory SET last_used_at = now() - $3::interval WHERE org_id = $1 AND source_text = $2`,
        [t.orgId, source, interval],
      );
    await age('3 days', 'Open');
    await age('2 hours', 'Save your changes');
    const again = (await translate(t.apiKey)).json();
    expect(again.translations.every((x: { fromMemory?: boolean }) => x.fromMemory)).toBe(true);
    const seconds = Object.fromEntries(
      (
        await h.database.query<{ s: string; age: number }>(
          `SELECT source_text AS s, extract(epoch FROM now() - last_used_at)::float8 AS age
             FROM translation_memory WHERE org_id = $1`,
          [t.orgId],
        )
      ).map((r) => [r.s, r.age]),
    );
    expect(seconds.Open).toBeLessThan(60);
    expect(seconds['Save your changes']).toBeGreaterThan(7_000);
  });

  it('reviews: an edit that breaks a plural is 422; approved and edited results go to the memory', async () => {
    const t = await team();
    await h.call(t.owner, 'PUT', `/api/v1/orgs/${t.orgId}/memory`, { enabled: true });
    const item = async (source: string, target: string) => {
      const [row] = await h.database.query<{ id: string }>(
        `INSERT INTO review_items (org_id, source_locale, target_locale, item_id, source_text, target_text, is_icu, model, scores, overall)
         VALUES ($1, 'en', 'pl', 'x', $2, $3, true, 'model-cheap', '{}', 2) RETURNING id`,
        [t.orgId, source, target],
      );
      return row!.id;
    };
    const source = '{n, plural, one {# file} other {# files}}';
    const id = await item(source, '{n, plural, one {# plik} few {# pliki} many {# plików} other {# pliku}}');
    const edit = (text: string) => h.call(t.owner, 'POST', `/api/v1/reviews/${id}`, { type: 'edit', text });
    const missing = await edit('{n, plural, one {# plik} other {# pliku}}');
    expect(missing.statusCode).toBe(422);
    expect(missing.json().issues.map((i: { code: string }) => i.code)).toEqual(['icu_plural_category_missing']);
    const extra = await edit('{n, plural, zero {brak} one {# plik} few {# pliki} many {# plików} other {# pliku}}');
    expect(extra.statusCode).toBe(422);
    expect(extra.json().issues.map((i: { code: string }) => i.code)).toEqual(['icu_plural_category_extra']);
    const good = '{n, plural, one {# plik} few {# pliki} many {# plików} other {# pliku!}}';
    expect((await edit(good)).json()).toMatchObject({ status: 'edited', finalTarget: good });
    const approved = await item('Close', 'Zamknij');
    expect((await h.call(t.owner, 'POST', `/api/v1/reviews/${approved}`, { type: 'approve' })).statusCode).toBe(200);
    const stored = await h.database.query<{ source_text: string; target_text: string; origin: string }>(
      'SELECT source_text, target_text, origin FROM translation_memory WHERE org_id = $1 ORDER BY source_text',
      [t.orgId],
    );
    expect(stored).toEqual([
      { source_text: 'Close', target_text: 'Zamknij', origin: 'review' },
      { source_text: source, target_text: good, origin: 'review' },
    ]);
  });
});
