// File answers of the translation memory: a file the memory answers in full is answered whole the next time — the
// same answer the memory gives string by string (0 tokens, `fromMemory`, nothing metered, no provider request) —
// and only while nothing changed: any change of the memory, another byte, another organization, the memory off, and
// the provider is asked again. Stored only while the memory is on; deleted when it is turned off, with the
// organization, by retention; in the privacy export.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture } from '../src/files/testing.ts';
import { bearer, type Harness, type Session, startHarness, WORKER_SECRET } from './harness.ts';

let h: Harness;
/** While set, every reply breaks the ICU plural (an upstream that got it wrong, the retry too). */
let breakPlural = false;
beforeAll(async () => {
  h = await startHarness({
    wrapProvider: (p) => ({
      ...p,
      async translate(req, opts) {
        const r = await p.translate(req, opts);
        if (!breakPlural) return r;
        return {
          ...r,
          translations: r.translations.map((t) =>
            t.text.includes('plural') ? { ...t, text: '{n, plural, other {# wiadomości}}' } : t,
          ),
        };
      },
    }),
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
/** A signed-in owner with an organization of its own (memory on unless asked) and an API key of it. */
async function team(memory = true): Promise<{ owner: Session; orgId: string; apiKey: string }> {
  const owner = await h.signIn(`memory-files-owner-${++n}`);
  const orgId = (await h.call(owner, 'POST', '/api/v1/orgs', { name: `memory files ${n}` })).json().id as string;
  const apiKey = (await h.call(owner, 'POST', '/api/v1/keys', { orgId })).json().apiKey as string;
  if (memory) await h.call(owner, 'PUT', `/api/v1/orgs/${orgId}/memory`, { enabled: true });
  return { owner, orgId, apiKey };
}

const json = JSON.stringify(
  {
    inbox: {
      title: 'Inbox',
      greeting: 'Hello {name}, see <b>this</b>',
      count: '{n, plural, one {# message} other {# messages}}',
    },
    actions: { save: 'Save your changes', close: 'Close' },
  },
  null,
  2,
);

const translateFile = (apiKey: string, payload: Record<string, unknown> = {}) =>
  h.app.inject({
    method: 'POST',
    url: '/api/v1/translate/file',
    headers: bearer(apiKey),
    payload: { format: 'json', content: json, sourceLocale: 'en', targetLocale: 'pl', tier: 'cheap', ...payload },
  });
const count = async (table: string, orgId: string) =>
  (await h.database.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE org_id = $1`, [orgId]))[0]!.n;
const fileAnswers = (orgId: string) => count('translation_memory_files', orgId);
const entries = (orgId: string) => count('translation_memory', orgId);
/** What metering holds for the organization: usage events and their tokens, the budget spent and reserved, the quota. */
const metered = async (orgId: string) =>
  (
    await h.database.query(
      `SELECT (SELECT count(*)::int FROM usage_events WHERE org_id = $1) AS events,
              (SELECT COALESCE(sum(tokens_in + tokens_out), 0)::int FROM usage_events WHERE org_id = $1) AS tokens,
              (SELECT COALESCE(sum(spent_micros), 0)::int FROM budget_usage WHERE scope = 'org:' || $1) AS spent,
              (SELECT COALESCE(sum(reserved_micros), 0)::int FROM budget_usage WHERE scope = 'org:' || $1) AS reserved,
              (SELECT COALESCE(sum(used_tokens + reserved_tokens), 0)::int FROM quota_usage WHERE org_id = $1)
                AS quota`,
      [orgId],
    )
  )[0];
/** Provider requests made while `run` runs. */
async function providerRequests(run: () => Promise<unknown>): Promise<number> {
  const before = h.fake!.requestCount;
  await run();
  return h.fake!.requestCount - before;
}

describe('file answers of the translation memory', () => {
  it('the second run is answered whole: no provider request, 0 tokens, fromMemory, nothing metered — the same answer as string by string', async () => {
    const t = await team();
    const first = await translateFile(t.apiKey);
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json()).toMatchObject({ fromMemory: 0, issues: [] });
    expect(first.json().tokensIn).toBeGreaterThan(0);
    expect(await fileAnswers(t.orgId)).toBe(1);
    const usage = await metered(t.orgId);
    expect(usage).toMatchObject({ events: 1, reserved: 0 });
    let second: Awaited<ReturnType<typeof translateFile>> | undefined;
    expect(await providerRequests(async () => (second = await translateFile(t.apiKey)))).toBe(0);
    expect(second!.statusCode).toBe(200);
    expect(second!.headers['content-type']).toBe('application/json; charset=utf-8');
    // Counted by the rate limit like any call.
    expect(first.headers.ratelimitremaining).toMatch(/^\d+$/);
    expect(Number(second!.headers.ratelimitremaining)).toBe(Number(first.headers.ratelimitremaining) - 1);
    expect(second!.json()).toEqual({
      content: first.json().content,
      format: 'json',
      model: 'model-cheap',
      tokensIn: 0,
      tokensOut: 0,
      issues: [],
      fromMemory: 5,
    });
    // Metered as any call the memory answers: no usage event, no tokens, nothing reserved or spent.
    expect(await metered(t.orgId)).toEqual(usage);
    // The memory's answer string by string (the file answer removed) is the same answer.
    await h.database.query('DELETE FROM translation_memory_files WHERE org_id = $1', [t.orgId]);
    let unitByUnit: Awaited<ReturnType<typeof translateFile>> | undefined;
    expect(await providerRequests(async () => (unitByUnit = await translateFile(t.apiKey)))).toBe(0);
    expect(unitByUnit!.json()).toEqual(second!.json());
    // ...and it made the file answer again (a run the memory answers in full).
    expect(await fileAnswers(t.orgId)).toBe(1);
  });

  it('XLIFF 2.0 with inline codes and several segments: the same answer whole as string by string', async () => {
    const t = await team();
    const content = fixture('app.xliff2.xlf');
    const first = await translateFile(t.apiKey, { format: 'xliff', content });
    expect(first.statusCode, first.body).toBe(200);
    let second: Awaited<ReturnType<typeof translateFile>> | undefined;
    expect(
      await providerRequests(async () => (second = await translateFile(t.apiKey, { format: 'xliff', content }))),
    ).toBe(0);
    expect(second!.json()).toMatchObject({ content: first.json().content, tokensIn: 0, tokensOut: 0 });
    await h.database.query('DELETE FROM translation_memory_files WHERE org_id = $1', [t.orgId]);
    const unitByUnit = await translateFile(t.apiKey, { format: 'xliff', content });
    expect(unitByUnit.json()).toEqual(second!.json());
  });

  it('positive controls: with the memory off, or a file one byte different, the provider is asked', async () => {
    const off = await team(false);
    await translateFile(off.apiKey);
    expect(await providerRequests(() => translateFile(off.apiKey))).toBeGreaterThan(0);
    // Zero retention: nothing stored while the memory is off.
    expect(await fileAnswers(off.orgId)).toBe(0);
    expect(await entries(off.orgId)).toBe(0);

    const t = await team();
    await translateFile(t.apiKey);
    const changed = json.replace('Close', 'Closf');
    expect(changed.length).toBe(json.length);
    let res: Awaited<ReturnType<typeof translateFile>> | undefined;
    expect(await providerRequests(async () => (res = await translateFile(t.apiKey, { content: changed })))).toBe(1);
    expect(res!.json()).toMatchObject({ fromMemory: 4 });
    expect(res!.json().tokensIn).toBeGreaterThan(0);
    // One byte of layout: not the same file (no file answer), every string still from the memory.
    const spaced = `${json} `;
    let layout: Awaited<ReturnType<typeof translateFile>> | undefined;
    expect(await providerRequests(async () => (layout = await translateFile(t.apiKey, { content: spaced })))).toBe(0);
    expect(layout!.json()).toMatchObject({ fromMemory: 5, tokensIn: 0 });
  });

  it('other parameters are other answers: locale pair, glossary, model', async () => {
    const t = await team();
    await translateFile(t.apiKey);
    expect(await fileAnswers(t.orgId)).toBe(1);
    expect(await providerRequests(() => translateFile(t.apiKey, { targetLocale: 'de' }))).toBeGreaterThan(0);
    // The top tier is another model: the memory answers string by string (its entries do not depend on the model),
    // under another file answer that reports that model.
    const top = await translateFile(t.apiKey, { targetLocale: 'de', tier: 'top' });
    expect(top.json()).toMatchObject({ model: 'model-top', tokensIn: 0, fromMemory: 5 });
    const topAgain = await translateFile(t.apiKey, { targetLocale: 'de', tier: 'top' });
    expect(topAgain.json()).toEqual(top.json());
    const answers = await fileAnswers(t.orgId);
    // A glossary and a style are other answers too (the memory's entries are rechecked against the glossary).
    const glossary = [{ term: 'Inbox', target: null, neverTranslate: true }];
    for (const payload of [{ glossary }, { style: { tone: 'formal' } }]) {
      const res = await translateFile(t.apiKey, { targetLocale: 'de', ...payload });
      expect(res.json()).toMatchObject({ model: 'model-cheap', tokensIn: 0, fromMemory: 5 });
    }
    expect(await fileAnswers(t.orgId)).toBe(answers + 2);
  });

  it('any change of the memory invalidates it: a review edit and a TMX import are what the next run answers', async () => {
    const t = await team();
    await translateFile(t.apiKey);
    const edited = 'Zapisz zmiany (po przeglądzie)';
    const [item] = await h.database.query<{ id: string }>(
      `INSERT INTO review_items (org_id, source_locale, target_locale, item_id, source_text, target_text, is_icu, model, scores, overall)
       VALUES ($1, 'en', 'pl', 'x', 'Save your changes', 'Zapisz', false, 'model-cheap', '{}', 2) RETURNING id`,
      [t.orgId],
    );
    const review = await h.call(t.owner, 'POST', `/api/v1/reviews/${item!.id}`, { type: 'edit', text: edited });
    expect(review.statusCode, review.body).toBe(200);
    expect(await fileAnswers(t.orgId)).toBe(0);
    let res: Awaited<ReturnType<typeof translateFile>> | undefined;
    expect(await providerRequests(async () => (res = await translateFile(t.apiKey)))).toBe(0);
    expect(JSON.parse(res!.json().content).actions.save).toBe(edited);
    expect(res!.json()).toMatchObject({ fromMemory: 5, tokensIn: 0 });
    // Answered whole again, with the edit.
    expect(await fileAnswers(t.orgId)).toBe(1);
    expect(JSON.parse((await translateFile(t.apiKey)).json().content).actions.save).toBe(edited);

    const imported = 'Zamknij (z importu)';
    const tmx = `<?xml version="1.0" encoding="UTF-8"?>
<tmx version="1.4"><header creationtool="test" creationtoolversion="1" segtype="sentence" o-tmf="test" adminlang="en" srclang="en" datatype="plaintext"/>
<body><tu><tuv xml:lang="en"><seg>Close</seg></tuv><tuv xml:lang="pl"><seg>${imported}</seg></tuv></tu></body></tmx>`;
    const upload = await h.app.inject({
      method: 'POST',
      url: `/api/v1/orgs/${t.orgId}/memory.tmx`,
      headers: { cookie: t.owner.cookie, 'content-type': 'application/x-tmx+xml' },
      payload: tmx,
    });
    expect(upload.json()).toMatchObject({ imported: 1 });
    expect(JSON.parse((await translateFile(t.apiKey)).json().content).actions.close).toBe(imported);
  });

  it('a generation moved in the database (another replica’s change) is no longer answered', async () => {
    const t = await team();
    await translateFile(t.apiKey);
    await h.database.query(
      `UPDATE translation_memory SET target_text = 'Skrzynka (zmieniona)' WHERE org_id = $1 AND source_text = 'Inbox'`,
      [t.orgId],
    );
    // Without a generation change the answer would still be the stored file (the point of the generation).
    expect(JSON.parse((await translateFile(t.apiKey)).json().content).inbox.title).not.toBe('Skrzynka (zmieniona)');
    await h.database.query('UPDATE organizations SET memory_generation = memory_generation + 1 WHERE id = $1', [
      t.orgId,
    ]);
    expect(JSON.parse((await translateFile(t.apiKey)).json().content).inbox.title).toBe('Skrzynka (zmieniona)');
  });

  it('a first run with a flagged string stores no file answer: the next run asks the provider for that string', async () => {
    const t = await team();
    breakPlural = true;
    try {
      const first = await translateFile(t.apiKey);
      expect(first.json().issues.map((i: { itemId: string }) => i.itemId)).toContain('inbox.count');
    } finally {
      breakPlural = false;
    }
    expect(await fileAnswers(t.orgId)).toBe(0);
    expect(await providerRequests(() => translateFile(t.apiKey))).toBe(1);
    expect(await fileAnswers(t.orgId)).toBe(1);
    expect(await providerRequests(() => translateFile(t.apiKey))).toBe(0);
  });

  it('never across organizations: the same file in another organization with its memory on goes to the provider', async () => {
    const a = await team();
    const b = await team();
    await translateFile(a.apiKey);
    await translateFile(a.apiKey);
    let res: Awaited<ReturnType<typeof translateFile>> | undefined;
    expect(await providerRequests(async () => (res = await translateFile(b.apiKey)))).toBeGreaterThan(0);
    expect(res!.json()).toMatchObject({ fromMemory: 0 });
    expect(res!.json().tokensIn).toBeGreaterThan(0);
  });

  it('concurrent first runs of one file: whatever is stored answers as the memory does string by string', async () => {
    const t = await team();
    const firsts = await Promise.all([1, 2, 3].map(() => translateFile(t.apiKey)));
    for (const res of firsts) expect(res.statusCode, res.body).toBe(200);
    expect(await fileAnswers(t.orgId)).toBeLessThanOrEqual(1);
    let whole: Awaited<ReturnType<typeof translateFile>> | undefined;
    expect(await providerRequests(async () => (whole = await translateFile(t.apiKey)))).toBe(0);
    expect(await fileAnswers(t.orgId)).toBe(1);
    await h.database.query('DELETE FROM translation_memory_files WHERE org_id = $1', [t.orgId]);
    expect((await translateFile(t.apiKey)).json()).toEqual(whole!.json());
  });

  it('a dry run still tells what the memory would answer, string by string', async () => {
    const t = await team();
    await translateFile(t.apiKey);
    const dry = await translateFile(t.apiKey, { dryRun: true });
    expect(dry.json()).toMatchObject({ dryRun: true, items: 0, fromMemory: 5, providerRequests: 0, priceMicros: 0 });
  });

  it('turning the memory off deletes its file answers; back on, the first run goes to the provider', async () => {
    const t = await team();
    await translateFile(t.apiKey);
    expect(await fileAnswers(t.orgId)).toBe(1);
    await h.call(t.owner, 'PUT', `/api/v1/orgs/${t.orgId}/memory`, { enabled: false });
    expect(await fileAnswers(t.orgId)).toBe(0);
    expect(await providerRequests(() => translateFile(t.apiKey))).toBeGreaterThan(0);
    expect(await fileAnswers(t.orgId)).toBe(0);
    await h.call(t.owner, 'PUT', `/api/v1/orgs/${t.orgId}/memory`, { enabled: true });
    expect(await providerRequests(() => translateFile(t.apiKey))).toBeGreaterThan(0);
    expect(await providerRequests(() => translateFile(t.apiKey))).toBe(0);
  });

  it('privacy: the export holds the file answers the person’s calls made; erasure deletes them with the organization', async () => {
    const t = await team();
    const first = (await translateFile(t.apiKey)).json();
    const bundle = (await h.call(t.owner, 'POST', '/api/v1/privacy/export')).json();
    expect(bundle.translationMemoryFiles).toHaveLength(1);
    expect(bundle.translationMemoryFiles[0]).toMatchObject({
      orgId: t.orgId,
      format: 'json',
      sourceLocale: 'en',
      targetLocale: 'pl',
      content: first.content,
      issues: [],
      fromMemory: 5,
    });
    const erased = await h.call(t.owner, 'POST', '/api/v1/privacy/delete');
    expect(erased.json().plan.deletedOrganizations).toContain(t.orgId);
    expect(await fileAnswers(t.orgId)).toBe(0);
  });

  it('retention: an answer unused for the period, or of an earlier generation, is deleted and counted; a use a day later refreshes it and its entries', async () => {
    const t = await team();
    await translateFile(t.apiKey);
    await h.database.query(
      `UPDATE translation_memory_files SET last_used_at = now() - interval '3 days' WHERE org_id = $1`,
      [t.orgId],
    );
    await h.database.query(`UPDATE translation_memory SET last_used_at = now() - interval '3 days' WHERE org_id = $1`, [
      t.orgId,
    ]);
    expect(await providerRequests(() => translateFile(t.apiKey))).toBe(0);
    const ages = await h.database.query<{ age: number }>(
      `SELECT extract(epoch FROM now() - last_used_at)::float8 AS age FROM translation_memory WHERE org_id = $1
       UNION ALL
       SELECT extract(epoch FROM now() - last_used_at)::float8 FROM translation_memory_files WHERE org_id = $1`,
      [t.orgId],
    );
    expect(ages).toHaveLength(6);
    for (const { age } of ages) expect(age).toBeLessThan(60);

    const retention = () => h.app.inject({ method: 'POST', url: '/api/retention', headers: bearer(WORKER_SECRET) });
    await h.database.query(
      `UPDATE translation_memory_files SET last_used_at = now() - interval '400 days' WHERE org_id = $1`,
      [t.orgId],
    );
    expect((await retention()).json().deleted.memoryFileAnswers).toBeGreaterThanOrEqual(1);
    expect(await fileAnswers(t.orgId)).toBe(0);
    // An entry past the period: deleted, the generation moves, and the file answer made before goes with it.
    await translateFile(t.apiKey);
    expect(await fileAnswers(t.orgId)).toBe(1);
    await h.database.query(
      `UPDATE translation_memory SET last_used_at = now() - interval '400 days' WHERE org_id = $1 AND source_text = 'Close'`,
      [t.orgId],
    );
    const deleted = (await retention()).json().deleted;
    expect(deleted.memoryEntries).toBeGreaterThanOrEqual(1);
    expect(deleted.memoryFileAnswers).toBeGreaterThanOrEqual(1);
    expect(await fileAnswers(t.orgId)).toBe(0);
    expect(await providerRequests(() => translateFile(t.apiKey))).toBe(1);
  });

  it('on PGlite too: the second run answered whole, the first one stored nothing while the memory was off', async () => {
    const lite = await startHarness({ pglite: true });
    try {
      const owner = await lite.signIn('memory-files-pglite');
      const orgId = (await lite.call(owner, 'POST', '/api/v1/orgs', { name: 'pglite files' })).json().id as string;
      const apiKey = (await lite.call(owner, 'POST', '/api/v1/keys', { orgId })).json().apiKey as string;
      const run = () =>
        lite.app.inject({
          method: 'POST',
          url: '/api/v1/translate/file',
          headers: bearer(apiKey),
          payload: { format: 'json', content: json, sourceLocale: 'en', targetLocale: 'pl', tier: 'cheap' },
        });
      const stored = async () =>
        (await lite.database.query<{ n: number }>('SELECT count(*)::int AS n FROM translation_memory_files'))[0]!.n;
      await run();
      expect(await stored()).toBe(0);
      await lite.call(owner, 'PUT', `/api/v1/orgs/${orgId}/memory`, { enabled: true });
      const first = (await run()).json();
      expect(await stored()).toBe(1);
      const calls = lite.fake!.requestCount;
      expect((await run()).json()).toMatchObject({ content: first.content, tokensIn: 0, tokensOut: 0, fromMemory: 5 });
      expect(lite.fake!.requestCount).toBe(calls);
    } finally {
      await lite.close();
    }
  });
});
