// Zero content retention by default: after a run through every endpoint (successes and failures), no table of
// the database and no captured log line holds a source or translated string. Review items, the workflow's one place
// for text, hold their item and its validator issues and nothing more, and retention deletes them with their issues.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BILLING_SECRET,
  batch,
  bearer,
  type Harness,
  OAUTH_CLIENT_SECRET,
  startHarness,
  WORKER_SECRET,
} from './harness.ts';

let h: Harness;
/** Moves the service's clock (retention periods); the database's own clock stays. */
let shiftMs = 0;
beforeAll(async () => {
  h = await startHarness({ now: () => Date.now() + shiftMs });
});
afterAll(async () => h?.close());

const SECRET_TEXTS = [
  'Quarterly zebra manifesto {name}',
  'Confidential pelican inventory',
  'Obsidian lighthouse schedule',
  'Tangerine submarine playground',
  'Marzipan telescope verdict',
];

async function everyTableAsText(): Promise<{ table: string; text: string }[]> {
  const tables = await h.database.query<{ schema: string; name: string }>(
    `SELECT table_schema AS schema, table_name AS name FROM information_schema.tables
      WHERE table_schema IN ('public', 'drizzle') AND table_type = 'BASE TABLE'`,
  );
  expect(tables.length).toBeGreaterThanOrEqual(17);
  const out: { table: string; text: string }[] = [];
  for (const t of tables) {
    const rows = await h.database.query<{ row: string }>(`SELECT t::text AS row FROM "${t.schema}"."${t.name}" t`);
    out.push({ table: `${t.schema}.${t.name}`, text: rows.map((r) => r.row).join('\n') });
  }
  return out;
}

describe('zero content retention', () => {
  it('no source or translated text in any table or log line', async () => {
    const { apiKey } = await h.account();
    const produced: string[] = [];
    const translate = (text: string, extra: object = {}) =>
      h.app.inject({
        method: 'POST',
        url: '/api/v1/translate',
        headers: bearer(apiKey),
        payload: {
          sourceLocale: 'en',
          targetLocale: 'de',
          tier: 'cheap',
          items: [{ id: 'k1', text, context: `${text} context`, neighbors: [text] }],
          style: { notes: text },
          glossary: [{ term: text.split(' ')[1]!, target: null, neverTranslate: true }],
          ...extra,
        },
      });
    const ok = await translate(SECRET_TEXTS[0]!);
    expect(ok.statusCode).toBe(200);
    produced.push(...ok.json().translations.map((t: { text: string }) => t.text));
    h.fake!.set({ failStatus: 500 });
    expect((await translate(SECRET_TEXTS[1]!)).statusCode).toBe(502);
    h.fake!.set({ failStatus: null, malformed: true });
    expect((await translate(SECRET_TEXTS[1]!)).statusCode).toBe(502);
    h.fake!.set({ malformed: false });
    expect((await translate(SECRET_TEXTS[2]!, { tier: 'gold' })).statusCode).toBe(400);
    const judged = await h.app.inject({
      method: 'POST',
      url: '/api/v1/judge',
      headers: bearer(apiKey),
      payload: {
        sourceLocale: 'en',
        targetLocale: 'de',
        items: [{ id: 'j', source: SECRET_TEXTS[3], target: SECRET_TEXTS[4] }],
      },
    });
    expect(judged.statusCode).toBe(200);
    const play = await h.app.inject({
      method: 'POST',
      url: '/api/v1/playground',
      payload: { source: SECRET_TEXTS[2], targetLocale: 'fr' },
    });
    expect(play.statusCode).toBe(200);
    produced.push(play.json().translation);
    expect(
      (await h.app.inject({ method: 'POST', url: '/api/worker', headers: bearer(WORKER_SECRET) })).statusCode,
    ).toBe(200);
    expect(
      (await h.app.inject({ method: 'POST', url: '/api/retention', headers: bearer(WORKER_SECRET) })).statusCode,
    ).toBe(200);

    const needles = [...SECRET_TEXTS, ...produced, 'zebra', 'pelican', 'lighthouse', 'submarine', 'telescope'];
    expect(produced.length).toBe(2);
    const tables = await everyTableAsText();
    for (const { table, text } of tables) {
      for (const needle of needles) expect(text.includes(needle), `${table} holds "${needle}"`).toBe(false);
    }
    expect(h.logs.length).toBeGreaterThan(5);
    const logText = h.logs.join('\n');
    for (const needle of [...needles, apiKey, WORKER_SECRET]) {
      expect(logText.includes(needle), `logs hold "${needle}"`).toBe(false);
    }
    // Sanity: the scan does see what is stored (usage events were written).
    expect(tables.find((t) => t.table === 'public.usage_events')!.text).toContain('translate');
  });

  it('the session side: no credential, token or MFA secret in any table or log line', async () => {
    const owner = await h.signIn('retention-owner');
    const invitee = await h.signIn('retention-invitee');
    const post = (cookie: string, url: string, payload?: object) =>
      h.app.inject({ method: 'POST', url, headers: { cookie }, ...(payload ? { payload } : {}) });
    const orgId = (await post(owner.cookie, '/api/v1/orgs', { name: 'Zero retention' })).json().id;
    const invite = (await post(owner.cookie, `/api/v1/orgs/${orgId}/members`, { email: invitee.email })).json();
    expect((await post(invitee.cookie, '/api/v1/invites/accept', { token: invite.token })).statusCode).toBe(200);
    const key = (await post(owner.cookie, '/api/v1/keys', { orgId, name: 'scan' })).json();
    const { secret } = (await post(owner.cookie, '/api/v1/mfa', { action: 'enroll' })).json();
    expect((await post(owner.cookie, '/api/v1/mfa', { action: 'verify', code: '000000' })).statusCode).toBe(401);
    const exported = await post(owner.cookie, '/api/v1/privacy/export');
    expect(exported.statusCode).toBe(200);
    const erased = await post(invitee.cookie, '/api/v1/privacy/delete');
    expect(erased.statusCode).toBe(200);
    const webhook = await h.app.inject({
      method: 'POST',
      url: '/api/billing/webhook',
      headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=00' },
      payload: '{}',
    });
    expect(webhook.statusCode).toBe(400);
    expect((await post(owner.cookie, '/auth/logout')).statusCode).toBe(200);

    const secrets = [
      owner.cookie.slice('session-token='.length),
      invitee.cookie.slice('session-token='.length),
      invite.token,
      key.apiKey,
      secret,
      OAUTH_CLIENT_SECRET,
      BILLING_SECRET,
      'mfa-key-material-for-tests',
      ...h.github.issuedTokens,
      ...h.github.tokenRequests.flatMap((r) => [r.body.code!, r.body.code_verifier!]),
    ];
    expect(h.github.issuedTokens.length).toBeGreaterThanOrEqual(2);
    const tables = await everyTableAsText();
    for (const { table, text } of tables) {
      for (const needle of secrets) expect(text.includes(needle), `${table} holds a secret`).toBe(false);
    }
    const logText = h.logs.join('\n');
    for (const needle of [...secrets, invitee.email])
      expect(logText.includes(needle), 'logs hold a secret').toBe(false);
    // The scan sees the new tables: the audit log recorded the session side.
    expect(tables.find((t) => t.table === 'public.audit_log')!.text).toContain('invite.accept');
  });

  it('review items hold their item and its validator issues, nothing more; retention deletes both', async () => {
    const { apiKey, orgId } = await h.account({ judgeSampleRate: 1, reviewThreshold: 5.1 });
    const source = 'Quokka harbour ledger';
    h.fake!.set({ invalidReplies: 2 });
    const res = await h.app.inject({
      method: 'POST',
      url: '/api/v1/translate',
      headers: bearer(apiKey),
      payload: batch(1, {
        items: [{ id: 'q', text: source, context: 'Okapi context', neighbors: ['Axolotl neighbour'] }],
        style: { notes: 'Capybara notes' },
        glossary: [{ term: 'Quokka', target: null, neverTranslate: true }],
      }),
    });
    h.fake!.set({ invalidReplies: 0 });
    expect(res.statusCode).toBe(200);
    const target = res.json().translations[0].text as string;
    expect((await h.app.inject({ method: 'POST', url: '/api/worker', headers: bearer(WORKER_SECRET) })).json()).toEqual(
      expect.objectContaining({ failed: 0 }),
    );
    const [item] = await h.database.query<{ issues: { code: string; message: string }[] }>(
      'SELECT issues FROM review_items WHERE org_id = $1',
      [orgId],
    );
    // The issue names the item's own glossary term: text the item holds, kept only as long as the item.
    expect(item!.issues.map((i) => i.code)).toContain('glossary_never_translate');
    expect(JSON.stringify(item!.issues)).toContain('Quokka');

    const itemTexts = [source, target, 'Quokka', 'harbour'];
    const neverKept = ['Okapi', 'Axolotl', 'Capybara'];
    for (const { table, text } of await everyTableAsText()) {
      for (const needle of neverKept) expect(text.includes(needle), `${table} holds "${needle}"`).toBe(false);
      if (table === 'public.review_items') continue;
      for (const needle of itemTexts) expect(text.includes(needle), `${table} holds "${needle}"`).toBe(false);
    }

    shiftMs = 31 * 86_400_000; // past RETENTION__REVIEW_ITEMS_DAYS (30)
    const retention = await h.app.inject({ method: 'POST', url: '/api/retention', headers: bearer(WORKER_SECRET) });
    shiftMs = 0;
    expect(retention.json().deleted.reviewItems).toBeGreaterThanOrEqual(1);
    for (const { table, text } of await everyTableAsText()) {
      for (const needle of [...itemTexts, ...neverKept]) {
        expect(text.includes(needle), `${table} holds "${needle}" after retention`).toBe(false);
      }
    }
    const logText = h.logs.join('\n');
    for (const needle of [...itemTexts, ...neverKept])
      expect(logText.includes(needle), `logs hold "${needle}"`).toBe(false);
  });
});
