// The rest of the session API on real PostgreSQL, signed in through the local GitHub: reviews, MFA (TOTP with
// step-up), privacy export and delete (checked by reading the database afterwards) and the billing webhook
// (signatures made by the official `stripe` package).
import { generate } from 'otplib';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BILLING_SECRET, batch, bearer, type Harness, type Session, startHarness } from './harness.ts';

let h: Harness;
let clock = Date.parse('2026-11-24T10:00:00Z');
beforeAll(async () => {
  h = await startHarness({ provider: 'pseudo', now: () => clock });
});
afterAll(async () => h?.close());

let n = 0;
/** A new user signed in through the local GitHub (a fresh login each time). */
const signIn = (name: string) => h.signIn(`${name}-${++n}`);
const call: Harness['call'] = (...args) => h.call(...args);

async function orgOf(owner: Session): Promise<string> {
  return (await call(owner, 'POST', '/api/v1/orgs', { name: `org ${++n}` })).json().id;
}

async function reviewItem(orgId: string, over: Record<string, unknown> = {}): Promise<string> {
  const v = {
    source: 'You have {count, plural, one {# file} other {# files}}',
    target: 'Sie haben {count, plural, one {# Datei} other {# Dateien}}',
    isIcu: true,
    glossary: [{ term: 'Scriptorium', target: null, neverTranslate: true }],
    ...over,
  };
  const [row] = await h.database.query<{ id: string }>(
    `INSERT INTO review_items (org_id, source_locale, target_locale, item_id, source_text, target_text, is_icu, glossary,
                               model, scores, overall)
     VALUES ($1, 'en', 'de', 'files', $2, $3, $4, $5, 'model-cheap', '{"accuracy": 2}', 2.1) RETURNING id`,
    [orgId, v.source, v.target, v.isIcu, JSON.stringify(v.glossary)],
  );
  return row!.id;
}

describe('reviews', () => {
  it('approve, edit (validators, 422 with the issues) and reject; 409 on a decided item; the queue lists them', async () => {
    const owner = await signIn('reviewer');
    const orgId = await orgOf(owner);
    const [a, e, r] = [await reviewItem(orgId), await reviewItem(orgId), await reviewItem(orgId)];
    const queue = (await call(owner, 'GET', `/api/v1/reviews?orgId=${orgId}`)).json().items;
    expect(queue.map((i: { id: string }) => i.id).sort()).toEqual([a, e, r].sort());

    const approved = await call(owner, 'POST', `/api/v1/reviews/${a}`, { type: 'approve' });
    expect(approved.statusCode).toBe(200);
    expect(approved.json()).toMatchObject({
      id: a,
      status: 'approved',
      finalTarget: 'Sie haben {count, plural, one {# Datei} other {# Dateien}}',
      decidedBy: owner.userId,
    });

    const broken = await call(owner, 'POST', `/api/v1/reviews/${e}`, {
      type: 'edit',
      text: 'Sie haben {count} Dateien',
    });
    expect(broken.statusCode).toBe(422);
    const body = broken.json();
    expect(body.error).toBe('the edited text fails the validators');
    expect(body.issues.map((i: { code: string }) => i.code)).toContain('icu_argument_type');
    const fixed = 'Du hast {count, plural, one {# Datei} other {# Dateien}}';
    const edited = await call(owner, 'POST', `/api/v1/reviews/${e}`, { type: 'edit', text: fixed });
    expect(edited.json()).toMatchObject({ status: 'edited', finalTarget: fixed });

    const rejected = await call(owner, 'POST', `/api/v1/reviews/${r}`, { type: 'reject', reason: 'wrong register' });
    expect(rejected.json()).toMatchObject({ status: 'rejected', finalTarget: null, rejectReason: 'wrong register' });

    for (const id of [a, e, r]) {
      const again = await call(owner, 'POST', `/api/v1/reviews/${id}`, { type: 'approve' });
      expect(again.statusCode).toBe(409);
      expect(again.json().error).toMatch(/^the review item is already (approved|edited|rejected)$/);
    }
    expect((await call(owner, 'GET', `/api/v1/reviews?orgId=${orgId}`)).json().items).toEqual([]);
    const decided = (await call(owner, 'GET', `/api/v1/reviews?orgId=${orgId}&status=edited`)).json().items;
    expect(decided.map((i: { id: string }) => i.id)).toEqual([e]);
  });

  it('the glossary of the item applies to an edit; a reject needs a reason; an unknown action is 400', async () => {
    const owner = await signIn('glossary');
    const orgId = await orgOf(owner);
    const id = await reviewItem(orgId, { source: 'Open Scriptorium', target: 'Scriptorium öffnen', isIcu: false });
    const res = await call(owner, 'POST', `/api/v1/reviews/${id}`, { type: 'edit', text: 'Skriptorium öffnen' });
    expect(res.statusCode).toBe(422);
    expect(res.json().issues.map((i: { code: string }) => i.code)).toEqual(['glossary_never_translate']);
    expect((await call(owner, 'POST', `/api/v1/reviews/${id}`, { type: 'reject' })).statusCode).toBe(400);
    expect((await call(owner, 'POST', `/api/v1/reviews/${id}`, { type: 'publish' })).statusCode).toBe(400);
  });

  it('404 for an unknown item and for another organization’s item (not revealed); 403 for a foreign queue', async () => {
    const owner = await signIn('owner');
    const stranger = await signIn('stranger');
    const orgId = await orgOf(owner);
    const id = await reviewItem(orgId);
    const foreign = await call(stranger, 'POST', `/api/v1/reviews/${id}`, { type: 'approve' });
    const unknown = await call(stranger, 'POST', '/api/v1/reviews/00000000-0000-4000-8000-000000000000', {
      type: 'approve',
    });
    expect([foreign.statusCode, foreign.body]).toEqual([404, '{"error":"review item not found"}']);
    expect([unknown.statusCode, unknown.body]).toEqual([404, '{"error":"review item not found"}']);
    expect((await call(stranger, 'GET', `/api/v1/reviews?orgId=${orgId}`)).statusCode).toBe(403);
    expect((await call(null, 'POST', `/api/v1/reviews/${id}`, { type: 'approve' })).statusCode).toBe(401);
  });
});

/** The current TOTP code of `secret` at the test clock (optionally `steps` periods later). */
const totp = (secret: string, steps = 0) => generate({ secret, epoch: Math.floor(clock / 1000) + steps * 30 });

describe('MFA (TOTP)', () => {
  it('verify before enrolling or an unknown action is 400; enroll gives a secret and otpauthUri; a wrong code is 401', async () => {
    const user = await signIn('mfa');
    expect((await call(user, 'POST', '/api/v1/mfa', { action: 'verify', code: '123456' })).statusCode).toBe(400);
    expect((await call(user, 'POST', '/api/v1/mfa', { action: 'disable' })).statusCode).toBe(400);
    const enrolled = await call(user, 'POST', '/api/v1/mfa', { action: 'enroll' });
    expect(enrolled.statusCode).toBe(200);
    const { secret, otpauthUri } = enrolled.json();
    expect(secret).toMatch(/^[A-Z2-7]{26,}$/);
    const uri = new URL(otpauthUri);
    expect(uri.protocol).toBe('otpauth:');
    expect(uri.host).toBe('totp');
    expect(uri.searchParams.get('secret')).toBe(secret);
    expect(uri.searchParams.get('issuer')).toBe('Scriptorium');
    // Encrypted at rest.
    const [row] = await h.database.query<{ enc: string; enabled: boolean }>(
      'SELECT mfa_secret_enc AS enc, mfa_enabled AS enabled FROM users WHERE id = $1',
      [user.userId],
    );
    expect(row!.enc).not.toContain(secret);
    expect(row!.enabled).toBe(false);
    const wrong = await call(user, 'POST', '/api/v1/mfa', { action: 'verify', code: '000000' });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json()).toEqual({ error: 'invalid MFA code' });
    const ok = await call(user, 'POST', '/api/v1/mfa', { action: 'verify', code: await totp(secret) });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({ enabled: true });
    // The same code again is a replay.
    expect((await call(user, 'POST', '/api/v1/mfa', { action: 'verify', code: await totp(secret) })).statusCode).toBe(
      401,
    );
    clock += 30_000;
    expect((await call(user, 'POST', '/api/v1/mfa', { action: 'verify', code: await totp(secret) })).statusCode).toBe(
      200,
    );
    expect((await call(user, 'POST', '/api/v1/mfa', { action: 'enroll' })).statusCode).toBe(409);
  });

  it('once enabled, key issue and revoke and privacy delete need a TOTP check in the last 12 hours', async () => {
    const user = await signIn('stepup');
    const secret = (await call(user, 'POST', '/api/v1/mfa', { action: 'enroll' })).json().secret;
    const key = (await call(user, 'POST', '/api/v1/keys')).json(); // MFA not enabled yet: no step-up
    expect(key.apiKey).toBeDefined();
    expect((await call(user, 'POST', '/api/v1/mfa', { action: 'verify', code: await totp(secret) })).statusCode).toBe(
      200,
    );
    expect((await call(user, 'POST', '/api/v1/keys')).statusCode).toBe(200); // within 12 h of the check
    clock += 12 * 3_600_000 + 60_000;
    // A fresh session (the first one is idle-expired by now) has never passed TOTP.
    const again = await h.signIn(user.email.split('@')[0]!, user.email);
    for (const [method, url] of [
      ['POST', '/api/v1/keys'],
      ['DELETE', `/api/v1/keys/${key.keyId}`],
      ['POST', '/api/v1/privacy/delete'],
    ] as const) {
      const res = await call(again, method, url);
      expect(res.statusCode, url).toBe(403);
      expect(res.json().error).toMatch(/TOTP check in the last 12 hours/);
    }
    expect((await call(again, 'POST', '/api/v1/mfa', { action: 'verify', code: await totp(secret) })).statusCode).toBe(
      200,
    );
    expect((await call(again, 'DELETE', `/api/v1/keys/${key.keyId}`)).statusCode).toBe(200);
  });
});

describe('privacy', () => {
  it('export: a JSON attachment with the caller’s data and no key hash, session hash or MFA secret', async () => {
    const user = await signIn('exporter');
    const orgId = await orgOf(user);
    const key = (await call(user, 'POST', '/api/v1/keys', { orgId, name: 'laptop' })).json();
    await h.app.inject({ method: 'POST', url: '/api/v1/translate', headers: bearer(key.apiKey), payload: batch(2) });
    const secret = (await call(user, 'POST', '/api/v1/mfa', { action: 'enroll' })).json().secret;
    const res = await call(user, 'POST', '/api/v1/privacy/export');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-disposition']).toBe(`attachment; filename="scriptorium-export-${user.userId}.json"`);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const bundle = res.json();
    expect(bundle.profile).toMatchObject({ id: user.userId, email: user.email });
    expect(bundle.memberships).toEqual([expect.objectContaining({ orgId, role: 'owner' })]);
    expect(bundle.apiKeys).toEqual([expect.objectContaining({ id: key.keyId, prefix: key.prefix, name: 'laptop' })]);
    expect(bundle.usage).toEqual([expect.objectContaining({ apiKeyId: key.keyId, kind: 'translate', requests: 1 })]);
    expect(bundle.sessions.length).toBeGreaterThan(0);
    expect(bundle.audit.map((a: { action: string }) => a.action)).toEqual(
      expect.arrayContaining(['session.sign_in', 'org.create', 'api_key.create', 'mfa.enroll']),
    );
    const text = res.body;
    const [stored] = await h.database.query<{ hash: Buffer; enc: string; session: Buffer }>(
      `SELECT k.hash, u.mfa_secret_enc AS enc, s.token_hash AS session
         FROM api_keys k, users u, sessions s WHERE k.id = $1 AND u.id = $2 AND s.user_id = $2 LIMIT 1`,
      [key.keyId, user.userId],
    );
    for (const forbidden of [
      stored!.hash.toString('hex'),
      stored!.hash.toString('base64'),
      stored!.session.toString('hex'),
      stored!.session.toString('base64'),
      stored!.enc,
      secret,
      key.apiKey,
    ]) {
      expect(text.includes(forbidden)).toBe(false);
    }
    expect(text).not.toMatch(/hash|mfaSecret|tokenHash/i);
  });

  it('delete: transfers, deletes and scrubs by plan; nothing personal left, the audit trail kept, others untouched', async () => {
    const leaver = await signIn('leaver');
    const admin = await signIn('heir-admin');
    const member = await signIn('older-member');
    const coOwner = await signIn('co-owner');
    const shared = await orgOf(leaver); // leaver owns it alone, with an admin and a member: passes to the admin
    await h.database.query(
      `INSERT INTO memberships (org_id, user_id, role, created_at) VALUES
         ($1, $2, 'member', now() - interval '2 days'), ($1, $3, 'admin', now() - interval '1 day')`,
      [shared, member.userId, admin.userId],
    );
    const solo = await orgOf(leaver); // nobody else: deleted
    const coOwned = await orgOf(coOwner); // another owner remains: the leaver just leaves
    await h.database.query("INSERT INTO memberships (org_id, user_id, role) VALUES ($1, $2, 'owner')", [
      coOwned,
      leaver.userId,
    ]);
    const personalKey = (await call(leaver, 'POST', '/api/v1/keys')).json(); // creates the personal organization
    const sharedKey = (await call(leaver, 'POST', '/api/v1/keys', { orgId: shared })).json();
    const adminKey = (await call(admin, 'POST', '/api/v1/keys', { orgId: shared })).json();
    await h.database.query('UPDATE organizations SET external_customer_id = $2 WHERE id = $1', [solo, 'cus_solo_123']);
    await h.database.query(
      "INSERT INTO billing_events (id, type, org_id, customer_ref) VALUES ('evt_solo_1', 'invoice.paid', $1, 'cus_solo_123')",
      [solo],
    );
    await h.database.query(
      "INSERT INTO invites (org_id, email, role, token_hash, expires_at) VALUES ($1, $2, 'member', 'x', now() + interval '1 day')",
      [coOwned, leaver.email],
    );
    const translated = await h.app.inject({
      method: 'POST',
      url: '/api/v1/translate',
      headers: bearer(sharedKey.apiKey),
      payload: batch(1),
    });
    expect(translated.statusCode).toBe(200);
    const auditBefore = (
      await h.database.query<{ n: number }>('SELECT count(*)::int AS n FROM audit_log WHERE actor_user_id = $1', [
        leaver.userId,
      ])
    )[0]!.n;

    const res = await call(leaver, 'POST', '/api/v1/privacy/delete');
    expect(res.statusCode).toBe(200);
    const { deleted, plan } = res.json();
    expect(deleted).toBe(true);
    expect(plan.transferredOrganizations).toEqual([{ orgId: shared, newOwnerId: admin.userId }]);
    expect(plan.deletedOrganizations.sort()).toEqual([solo, personalKey.orgId].sort());
    expect(plan.leftOrganizations).toEqual([coOwned]);
    expect(plan.revokedKeys).toBe(2);
    expect(plan.endedSessions).toBeGreaterThanOrEqual(1);
    expect(plan.pseudonymizedBillingRecords).toBe(1);
    expect(plan.keptAuditEntries).toBe(auditBefore + 1);

    // The session and the keys stop at once.
    expect((await call(leaver, 'GET', '/api/v1/me')).statusCode).toBe(401);
    for (const k of [personalKey, sharedKey]) {
      const r = await h.app.inject({
        method: 'POST',
        url: '/api/v1/translate',
        headers: bearer(k.apiKey),
        payload: batch(1),
      });
      expect(r.statusCode).toBe(401);
    }
    // Nothing personal is left in any table.
    const tables = await h.database.query<{ name: string }>(
      "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'",
    );
    for (const { name } of tables) {
      const rows = await h.database.query<{ row: string }>(`SELECT t::text AS row FROM "${name}" t`);
      const text = rows.map((r) => r.row).join('\n');
      for (const needle of [leaver.userId, leaver.email, 'cus_solo_123', 'leaver-']) {
        expect(text.includes(needle), `${name} holds ${needle}`).toBe(false);
      }
    }
    // The audit trail is still there, under one pseudonymous subject.
    const subjects = await h.database.query<{ actor: string; n: number }>(
      `SELECT actor_user_id AS actor, count(*)::int AS n FROM audit_log
        WHERE actor_user_id LIKE 'pseudonym:%' AND action = 'privacy.delete' GROUP BY 1`,
    );
    expect(subjects).toHaveLength(1);
    const [kept] = await h.database.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM audit_log WHERE actor_user_id = $1',
      [subjects[0]!.actor],
    );
    expect(kept!.n).toBe(auditBefore + 1);
    const [billing] = await h.database.query<{ ref: string }>(
      "SELECT customer_ref AS ref FROM billing_events WHERE id = 'evt_solo_1'",
    );
    expect(billing!.ref).toMatch(/^pseudonym:[0-9a-f]{32}$/);
    // Other members' data is untouched: the heir owns the organization, the member stays, the admin's key works.
    const members = (await call(admin, 'GET', `/api/v1/orgs/${shared}/members`)).json().members;
    expect(members.map((m: { userId: string; role: string }) => [m.userId, m.role])).toEqual([
      [member.userId, 'member'],
      [admin.userId, 'owner'],
    ]);
    expect(
      (
        await h.app.inject({
          method: 'POST',
          url: '/api/v1/translate',
          headers: bearer(adminKey.apiKey),
          payload: batch(1),
        })
      ).statusCode,
    ).toBe(200);
    expect((await call(coOwner, 'GET', `/api/v1/orgs/${coOwned}/members`)).json().members).toHaveLength(1);
  });
});

describe('billing webhook (Stripe scheme)', () => {
  const stripe = new Stripe('sk_test_unused');
  const post = (payload: string, signature?: string) =>
    h.app.inject({
      method: 'POST',
      url: '/api/billing/webhook',
      headers: { 'content-type': 'application/json', ...(signature ? { 'stripe-signature': signature } : {}) },
      payload,
    });
  const sign = (payload: string, opts: { timestamp?: number; secret?: string } = {}) =>
    stripe.webhooks.generateTestHeaderString({
      payload,
      secret: opts.secret ?? BILLING_SECRET,
      timestamp: opts.timestamp ?? Math.floor(clock / 1000),
    });

  it('valid signatures update the plan, status and quota; a redelivery changes nothing; unknown types are acknowledged', async () => {
    await h.database.query("UPDATE plans SET external_price_id = 'price_team' WHERE id = 'team'");
    const owner = await signIn('payer');
    const orgId = await orgOf(owner);
    const created = JSON.stringify({
      id: 'evt_sub_1',
      type: 'customer.subscription.created',
      data: {
        object: {
          id: 'sub_1',
          customer: 'cus_1',
          status: 'active',
          current_period_end: 1798000000,
          metadata: { orgId },
          items: { data: [{ price: { id: 'price_team' } }] },
        },
      },
    });
    const ok = await post(created, sign(created));
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toEqual({ received: true, duplicate: false, handled: true });
    const org = async () =>
      (
        await h.database.query<{ plan: string; status: string; customer: string; end: Date }>(
          `SELECT plan_id AS plan, subscription_status AS status, external_customer_id AS customer,
                  current_period_end AS "end" FROM organizations WHERE id = $1`,
          [orgId],
        )
      )[0]!;
    expect(await org()).toMatchObject({ plan: 'team', status: 'active', customer: 'cus_1' });
    expect((await org()).end.toISOString()).toBe(new Date(1798000000 * 1000).toISOString());
    // The quota follows the plan.
    const usage = (await call(owner, 'GET', `/api/v1/orgs/${orgId}/usage`)).json();
    expect(usage.quota.tokens).toBe(50_000_000);

    const again = await post(created, sign(created));
    expect(again.json()).toEqual({ received: true, duplicate: true, handled: false });

    const failed = JSON.stringify({
      id: 'evt_inv_1',
      type: 'invoice.payment_failed',
      data: { object: { customer: 'cus_1' } },
    });
    expect((await post(failed, sign(failed))).json().handled).toBe(true);
    expect((await org()).status).toBe('past_due');
    const paid = JSON.stringify({ id: 'evt_inv_2', type: 'invoice.paid', data: { object: { customer: 'cus_1' } } });
    await post(paid, sign(paid));
    expect((await org()).status).toBe('active');

    const gone = JSON.stringify({
      id: 'evt_sub_2',
      type: 'customer.subscription.deleted',
      data: { object: { id: 'sub_1', customer: 'cus_1', status: 'canceled' } },
    });
    await post(gone, sign(gone));
    expect(await org()).toMatchObject({ plan: 'free', status: 'canceled' });

    const other = JSON.stringify({ id: 'evt_x', type: 'charge.refunded', data: { object: { id: 'ch_1' } } });
    expect((await post(other, sign(other))).json()).toEqual({ received: true, duplicate: false, handled: false });
    const audited = await h.database.query<{ action: string }>(
      "SELECT action FROM audit_log WHERE org_id = $1 AND action LIKE 'billing.%' ORDER BY id",
      [orgId],
    );
    expect(audited.map((a) => a.action)).toEqual([
      'billing.subscription',
      'billing.invoice',
      'billing.invoice',
      'billing.subscription',
    ]);
  });

  it('400 for a missing, expired, tampered or wrongly keyed signature; several v1 values: any may match', async () => {
    const payload = JSON.stringify({ id: 'evt_sig', type: 'charge.refunded', data: { object: {} } });
    const bad = async (signature: string | undefined, body = payload) => {
      const res = await post(body, signature);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: 'invalid webhook signature' });
    };
    await bad(undefined);
    await bad('garbage');
    await bad(sign(payload, { timestamp: Math.floor(clock / 1000) - 301 })); // older than 300 s
    await bad(sign(payload, { timestamp: Math.floor(clock / 1000) + 301 }));
    await bad(sign(payload), payload.replace('charge.refunded', 'charge.captured')); // body changed after signing
    await bad(sign(payload, { secret: 'whsec_someone_else' }));
    expect((await post(payload, sign(payload, { timestamp: Math.floor(clock / 1000) - 299 }))).statusCode).toBe(200);
    // Rotation: the header carries the signatures under the old and the new secret.
    const rotated = JSON.stringify({ id: 'evt_rot', type: 'charge.refunded', data: { object: {} } });
    const valid = sign(rotated);
    const old = sign(rotated, { secret: 'whsec_old' });
    const t = valid.split(',')[0]!;
    const both = `${t},${old.split(',')[1]},${valid.split(',')[1]}`;
    expect((await post(rotated, both)).statusCode).toBe(200);
    // A signed body that is not an event.
    await post('{"not": "an event"}', sign('{"not": "an event"}')).then((res) => expect(res.statusCode).toBe(400));
  });
});
