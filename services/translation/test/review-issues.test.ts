// Review items carry the validators' issues, end to end on real PostgreSQL: a signed-in owner's key translates a
// batch the fake upstream gets wrong twice (the answer and the retry), the batch is sampled, the worker's judge flags
// it, and the review list returns each item with what the validators (ICU, placeholders and tags, glossary) found in
// its target — the same issues the translate answer reported, as the OpenAPI document describes them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReviewList } from '../src/http/schemas.ts';
import { validateTranslation } from '../src/validators/index.ts';
import { bearer, type Harness, type Session, startHarness, WORKER_SECRET } from './harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h?.close());

const batch = {
  sourceLocale: 'en',
  targetLocale: 'de',
  tier: 'cheap',
  items: [
    { id: 'greeting', text: 'Hello {name}!', context: 'Walrus context' },
    { id: 'settings', text: 'Open <b>Settings</b>', neighbors: ['Pelican neighbour'] },
    { id: 'brand', text: 'Scriptorium keeps your drafts' },
  ],
  style: { notes: 'Narwhal notes' },
  glossary: [{ term: 'Scriptorium', target: null, neverTranslate: true }],
};

let owner: Session;
let orgId: string;
let translated: { translations: { id: string; text: string }[]; issues: { itemId: string; code: string }[] };

describe('review items carry the validator issues', () => {
  beforeAll(async () => {
    owner = await h.signIn('issue-reviewer');
    orgId = (await h.call(owner, 'POST', '/api/v1/orgs', { name: 'Issues' })).json().id;
    // Sampling and the threshold are the operator's settings of an organization: every batch judged, every one flagged.
    await h.database.query('UPDATE organizations SET judge_sample_rate = 1, review_threshold = 5.1 WHERE id = $1', [
      orgId,
    ]);
    const key = await h.call(owner, 'POST', '/api/v1/keys', { orgId, name: 'issues' });
    expect(key.statusCode).toBe(200);
    h.fake!.set({ invalidReplies: 2 });
    const res = await h.app.inject({
      method: 'POST',
      url: '/api/v1/translate',
      headers: bearer(key.json().apiKey),
      payload: batch,
    });
    h.fake!.set({ invalidReplies: 0 });
    expect(res.statusCode).toBe(200);
    translated = res.json();
    const worker = await h.app.inject({ method: 'POST', url: '/api/worker', headers: bearer(WORKER_SECRET) });
    expect(worker.json()).toMatchObject({ failed: 0 });
  });

  it('the list route returns each flagged item with the issues the validators find in its target', async () => {
    const res = await h.call(owner, 'GET', `/api/v1/reviews?orgId=${orgId}`);
    expect(res.statusCode).toBe(200);
    const { items } = ReviewList.parse(res.json());
    const byId = new Map(items.map((i) => [i.itemId, i]));
    expect([...byId.keys()].sort()).toEqual(['brand', 'greeting', 'settings']);
    expect(byId.get('greeting')!.issues).toEqual([
      { code: 'placeholder_missing', message: 'placeholder {name} missing' },
    ]);
    expect(byId.get('settings')!.issues.map((i) => i.code)).toContain('tag_missing');
    expect(byId.get('brand')!.issues).toEqual([
      { code: 'glossary_never_translate', message: 'term "Scriptorium" must be kept verbatim (neverTranslate)' },
    ]);
    for (const item of items) {
      // The target the client got, and the issues the translate answer reported for it.
      expect(item.targetText).toBe(translated.translations.find((t) => t.id === item.itemId)!.text);
      const reported = translated.issues.filter((i) => i.itemId === item.itemId).map(({ itemId: _, ...i }) => i);
      expect(item.issues).toEqual(reported);
      // The same validators, run again on the stored texts, find the same.
      expect(item.issues).toEqual(
        validateTranslation({
          source: item.sourceText,
          target: item.targetText,
          isIcu: item.isIcu,
          sourceLocale: item.sourceLocale,
          targetLocale: item.targetLocale,
          glossary: item.glossary,
        }),
      );
    }
  });

  it('an issue holds no more customer text than its item: no context, neighbour, style note or other item', async () => {
    const rows = await h.database.query<{ item_id: string; row: string; issues: string }>(
      `SELECT item_id, r::text AS row, issues::text FROM review_items r WHERE org_id = $1`,
      [orgId],
    );
    expect(rows).toHaveLength(3);
    for (const r of rows) {
      for (const needle of ['Walrus', 'Pelican', 'Narwhal']) expect(r.row).not.toContain(needle);
      const others = batch.items.filter((i) => i.id !== r.item_id).map((i) => i.text);
      for (const text of others) expect(r.issues).not.toContain(text);
    }
  });

  it('a decided item keeps its issues; the action’s answer carries them too', async () => {
    const { items } = (await h.call(owner, 'GET', `/api/v1/reviews?orgId=${orgId}`)).json();
    const greeting = items.find((i: { itemId: string }) => i.itemId === 'greeting');
    const edited = await h.call(owner, 'POST', `/api/v1/reviews/${greeting.id}`, {
      type: 'edit',
      text: 'Hallo {name}!',
    });
    expect(edited.statusCode).toBe(200);
    expect(edited.json()).toMatchObject({ status: 'edited', finalTarget: 'Hallo {name}!', issues: greeting.issues });
    const decided = (await h.call(owner, 'GET', `/api/v1/reviews?orgId=${orgId}&status=edited`)).json().items;
    expect(decided.map((i: { issues: unknown }) => i.issues)).toEqual([greeting.issues]);
  });

  it('the OpenAPI document describes the issues of a listed review item', async () => {
    const doc = (await h.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const item =
      doc.paths['/api/v1/reviews'].get.responses['200'].content['application/json'].schema.properties.items.items;
    expect(item.required).toContain('issues');
    expect(item.properties.issues).toMatchObject({
      type: 'array',
      items: { type: 'object', required: ['code', 'message'] },
    });
    expect(Object.keys(item.properties.issues.items.properties).sort()).toEqual(['code', 'message']);
  });
});
