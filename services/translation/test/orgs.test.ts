// Organizations, invites and session-issued API keys on real PostgreSQL, signed in through the local GitHub: the
// README's role table cell by cell (owner, admin, member, non-member), the owner rules, and the 403 that does not
// disclose whether an organization exists.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batch, bearer, type Harness, type Session, startHarness } from './harness.ts';

let h: Harness;
let clock = Date.parse('2026-11-24T09:00:00Z');
beforeAll(async () => {
  h = await startHarness({ provider: 'pseudo', now: () => clock });
});
afterAll(async () => h?.close());

let n = 0;
/** A new user signed in through the local GitHub (a fresh login each time). */
const signIn = (name: string) => h.signIn(`${name}-${++n}`);
const call: Harness['call'] = (...args) => h.call(...args);

/** An organization with an owner, an admin and a member (and an outsider who belongs to none of it). */
async function team() {
  const owner = await signIn('owner');
  const org = (await call(owner, 'POST', '/api/v1/orgs', { name: `team ${n}` })).json();
  const admin = await signIn('admin');
  const member = await signIn('member');
  const outsider = await signIn('outsider');
  for (const [who, role] of [
    [admin, 'admin'],
    [member, 'member'],
  ] as const) {
    await h.database.query('INSERT INTO memberships (org_id, user_id, role) VALUES ($1, $2, $3)', [
      org.id,
      who.userId,
      role,
    ]);
  }
  return { orgId: org.id as string, owner, admin, member, outsider };
}

type Team = Awaited<ReturnType<typeof team>>;

/** A fresh member of the team's organization (a target to promote or remove). */
async function newMember(t: Team): Promise<Session> {
  const target = await signIn('target');
  await h.database.query("INSERT INTO memberships (org_id, user_id, role) VALUES ($1, $2, 'member')", [
    t.orgId,
    target.userId,
  ]);
  return target;
}
const ROLES = ['owner', 'admin', 'member', 'outsider'] as const;

/** The role table of the README, one row per action: the status each role gets. */
const TABLE: {
  action: string;
  expect: Record<(typeof ROLES)[number], number>;
  run(t: Team, who: Session): ReturnType<typeof call>;
}[] = [
  {
    action: 'list members',
    expect: { owner: 200, admin: 200, member: 200, outsider: 403 },
    run: (t, who) => call(who, 'GET', `/api/v1/orgs/${t.orgId}/members`),
  },
  {
    action: 'see usage',
    expect: { owner: 200, admin: 200, member: 200, outsider: 403 },
    run: (t, who) => call(who, 'GET', `/api/v1/orgs/${t.orgId}/usage`),
  },
  {
    action: 'issue keys for the organization',
    expect: { owner: 200, admin: 200, member: 403, outsider: 403 },
    run: (t, who) => call(who, 'POST', '/api/v1/keys', { orgId: t.orgId }),
  },
  {
    action: 'revoke any key of the organization',
    expect: { owner: 200, admin: 200, member: 404, outsider: 404 },
    run: async (t, who) => {
      // A key someone else issued: the owner's target is the admin's key, everyone else's the owner's.
      const issuer = who === t.owner ? t.admin : t.owner;
      const key = (await call(issuer, 'POST', '/api/v1/keys', { orgId: t.orgId })).json();
      return call(who, 'DELETE', `/api/v1/keys/${key.keyId}`);
    },
  },
  {
    action: 'invite',
    expect: { owner: 200, admin: 200, member: 403, outsider: 403 },
    run: (t, who) => call(who, 'POST', `/api/v1/orgs/${t.orgId}/members`, { email: `new-${++n}@example.com` }),
  },
  {
    action: 'change roles',
    expect: { owner: 200, admin: 200, member: 403, outsider: 403 },
    run: async (t, who) =>
      call(who, 'PATCH', `/api/v1/orgs/${t.orgId}/members/${(await newMember(t)).userId}`, { role: 'admin' }),
  },
  {
    action: 'remove members',
    expect: { owner: 204, admin: 204, member: 403, outsider: 403 },
    run: async (t, who) => call(who, 'DELETE', `/api/v1/orgs/${t.orgId}/members/${(await newMember(t)).userId}`),
  },
  {
    action: 'manage billing',
    expect: { owner: 200, admin: 403, member: 403, outsider: 403 },
    run: (t, who) => call(who, 'GET', `/api/v1/orgs/${t.orgId}/billing`),
  },
];

describe('the role table, cell by cell', () => {
  let t: Team;
  beforeAll(async () => {
    t = await team();
  });
  for (const row of TABLE) {
    for (const role of ROLES) {
      it(`${row.action}: ${role} → ${row.expect[role]}`, async () => {
        const res = await row.run(t, t[role]);
        expect(res.statusCode, res.body).toBe(row.expect[role]);
        if (res.statusCode === 403) expect(res.json()).toEqual({ error: 'forbidden' });
      });
    }
  }
});

describe('owners', () => {
  it('an admin cannot remove an owner, grant the owner role or demote an owner', async () => {
    const t = await team();
    const base = `/api/v1/orgs/${t.orgId}/members`;
    expect((await call(t.admin, 'DELETE', `${base}/${t.owner.userId}`)).statusCode).toBe(403);
    expect((await call(t.admin, 'PATCH', `${base}/${t.member.userId}`, { role: 'owner' })).statusCode).toBe(403);
    expect((await call(t.admin, 'PATCH', `${base}/${t.owner.userId}`, { role: 'member' })).statusCode).toBe(403);
    expect((await call(t.admin, 'POST', base, { email: 'x@example.com', role: 'owner' })).statusCode).toBe(403);
  });

  it('the last owner cannot leave or step down (409); after handing over the role, they can', async () => {
    const t = await team();
    const base = `/api/v1/orgs/${t.orgId}/members`;
    const leave = await call(t.owner, 'DELETE', `${base}/${t.owner.userId}`);
    expect(leave.statusCode).toBe(409);
    expect(leave.json()).toEqual({ error: 'the last owner cannot leave or be removed' });
    expect((await call(t.owner, 'PATCH', `${base}/${t.owner.userId}`, { role: 'admin' })).statusCode).toBe(409);
    expect((await call(t.owner, 'PATCH', `${base}/${t.admin.userId}`, { role: 'owner' })).statusCode).toBe(200);
    expect((await call(t.owner, 'DELETE', `${base}/${t.owner.userId}`)).statusCode).toBe(204);
    const members = (await call(t.admin, 'GET', base))
      .json()
      .members.map((m: { userId: string; role: string }) => [m.userId, m.role]);
    expect(members).toEqual([
      [t.admin.userId, 'owner'],
      [t.member.userId, 'member'],
    ]);
    // A member may leave.
    expect((await call(t.member, 'DELETE', `${base}/${t.member.userId}`)).statusCode).toBe(204);
  });

  it('403 without disclosure: an unknown organization, someone else’s and a role too low give the same answer', async () => {
    const t = await team();
    const target = await newMember(t);
    // Every session route that takes an organization id, as a non-member calls it.
    const routes = (orgId: string) =>
      [
        ['GET', `/api/v1/orgs/${orgId}/members`, undefined],
        ['POST', `/api/v1/orgs/${orgId}/members`, { email: 'a@example.com' }],
        ['PATCH', `/api/v1/orgs/${orgId}/members/${target.userId}`, { role: 'admin' }],
        ['DELETE', `/api/v1/orgs/${orgId}/members/${target.userId}`, undefined],
        ['GET', `/api/v1/orgs/${orgId}/invites`, undefined],
        ['DELETE', `/api/v1/orgs/${orgId}/invites/00000000-0000-4000-8000-000000000001`, undefined],
        ['GET', `/api/v1/orgs/${orgId}/usage`, undefined],
        ['GET', `/api/v1/orgs/${orgId}/billing`, undefined],
        ['POST', '/api/v1/keys', { orgId }],
        ['GET', `/api/v1/keys?orgId=${orgId}`, undefined],
        ['GET', `/api/v1/reviews?orgId=${orgId}`, undefined],
      ] as const;
    // What may differ between any two answers: the date, the request id and the caller's own rate-limit window.
    const shape = (res: Awaited<ReturnType<typeof call>>) => ({
      status: res.statusCode,
      body: res.body,
      headers: Object.fromEntries(
        Object.entries(res.headers).filter(([k]) => !['date', 'x-request-id', 'ratelimitremaining'].includes(k)),
      ),
    });
    const foreign = routes(t.orgId);
    const unknown = routes('00000000-0000-4000-8000-000000000000');
    const garbage = routes('not-an-id');
    for (const [i, [method, url, body]] of foreign.entries()) {
      const answers = [
        await call(t.outsider, method, url, body),
        await call(t.outsider, ...(unknown[i] as readonly [string, string, object | undefined])),
        await call(t.outsider, ...(garbage[i] as readonly [string, string, object | undefined])),
      ].map(shape);
      expect(answers[0]?.status, `${method} ${url}`).toBe(403);
      expect(answers[0]?.body).toBe('{"error":"forbidden"}');
      expect(answers[1], `${method} ${url}, unknown id`).toEqual(answers[0]);
      expect(answers[2], `${method} ${url}, not an id`).toEqual(answers[0]);
    }
    // A member without the role gets that same 403 (billing is the owner's, invites and keys an admin's).
    for (const [method, url, body] of [foreign[1], foreign[4], foreign[7], foreign[8]]) {
      const own = shape(await call(t.member, method, url, body));
      expect(own, `${method} ${url}, a member`).toEqual(shape(await call(t.outsider, method, url, body)));
    }
  });
});

describe('invites', () => {
  it('400 when the e-mail is missing or invalid', async () => {
    const t = await team();
    for (const payload of [{}, { email: '' }, { email: 'not-an-address' }, { role: 'admin' }]) {
      const res = await call(t.owner, 'POST', `/api/v1/orgs/${t.orgId}/members`, payload);
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatch(/^body\.email/);
    }
  });

  it('invite → link → the invitee signs in and accepts; the wrong account, a second use and an expired one are refused', async () => {
    const t = await team();
    const created = await call(t.admin, 'POST', `/api/v1/orgs/${t.orgId}/members`, {
      email: 'Newcomer@Example.com',
      role: 'admin',
    });
    expect(created.statusCode).toBe(200);
    const inv = created.json();
    expect(inv).toMatchObject({ email: 'Newcomer@Example.com', role: 'admin', invitedBy: t.admin.userId });
    expect(new URL(inv.acceptUrl).searchParams.get('invite')).toBe(inv.token);
    expect(
      (await call(t.admin, 'GET', `/api/v1/orgs/${t.orgId}/invites`)).json().invites.map((i: { id: string }) => i.id),
    ).toEqual([inv.id]);
    // The token is stored hashed only.
    const [stored] = await h.database.query<{ t: string }>('SELECT invites::text AS t FROM invites WHERE id = $1', [
      inv.id,
    ]);
    expect(stored!.t).not.toContain(inv.token);

    const wrong = await signIn('wrong');
    expect((await call(wrong, 'POST', '/api/v1/invites/accept', { token: inv.token })).statusCode).toBe(403);
    const newcomer = await h.signIn('newcomer', 'newcomer@example.com');
    const accepted = await call(newcomer, 'POST', '/api/v1/invites/accept', { token: inv.token });
    expect(accepted.statusCode).toBe(200);
    expect(accepted.json()).toMatchObject({ id: t.orgId, role: 'admin' });
    expect((await call(newcomer, 'POST', '/api/v1/invites/accept', { token: inv.token })).statusCode).toBe(404);
    expect((await call(newcomer, 'GET', `/api/v1/orgs/${t.orgId}/members`)).statusCode).toBe(200);
    expect(
      (await call(t.owner, 'POST', `/api/v1/orgs/${t.orgId}/members`, { email: 'newcomer@example.com' })).statusCode,
    ).toBe(409);

    const late = (await call(t.owner, 'POST', `/api/v1/orgs/${t.orgId}/members`, { email: 'late@example.com' })).json();
    clock += 8 * 86_400_000; // INVITE__TTL_HOURS = 168
    const lateUser = await h.signIn('late', 'late@example.com');
    expect((await call(lateUser, 'POST', '/api/v1/invites/accept', { token: late.token })).statusCode).toBe(404);
    const owner = await h.signIn(t.owner.email.split('@')[0]!); // the first session passed its absolute expiry
    expect((await call(owner, 'GET', `/api/v1/orgs/${t.orgId}/invites`)).json().invites).toEqual([]);
  });

  it('an admin withdraws a pending invite', async () => {
    const t = await team();
    const inv = (await call(t.admin, 'POST', `/api/v1/orgs/${t.orgId}/members`, { email: 'w@example.com' })).json();
    expect((await call(t.member, 'DELETE', `/api/v1/orgs/${t.orgId}/invites/${inv.id}`)).statusCode).toBe(403);
    expect((await call(t.admin, 'DELETE', `/api/v1/orgs/${t.orgId}/invites/${inv.id}`)).statusCode).toBe(204);
    expect((await call(t.admin, 'DELETE', `/api/v1/orgs/${t.orgId}/invites/${inv.id}`)).statusCode).toBe(404);
  });
});

describe('API keys through the session API', () => {
  it('issues a key (secret once), lists it without secret or hash, the key translates, revocation stops it', async () => {
    const t = await team();
    const issued = await call(t.admin, 'POST', '/api/v1/keys', { orgId: t.orgId, name: 'ci' });
    expect(issued.statusCode).toBe(200);
    const { apiKey, prefix, keyId } = issued.json();
    expect(apiKey).toMatch(/^sk_live_[0-9A-Za-z]{43}$/);
    expect(apiKey.startsWith(prefix)).toBe(true);
    const listed = (await call(t.admin, 'GET', `/api/v1/keys?orgId=${t.orgId}`)).json().keys;
    const mine = listed.find((k: { id: string }) => k.id === keyId);
    expect(mine).toMatchObject({
      prefix,
      name: 'ci',
      orgId: t.orgId,
      userId: t.admin.userId,
      lastUsedAt: null,
      revokedAt: null,
    });
    expect(JSON.stringify(listed)).not.toContain(apiKey.slice(prefix.length));
    expect(Object.keys(mine).sort()).toEqual([
      'createdAt',
      'id',
      'lastUsedAt',
      'name',
      'orgId',
      'prefix',
      'revokedAt',
      'userId',
    ]);
    // A member sees only their own keys; the owner sees the organization's.
    expect((await call(t.member, 'GET', '/api/v1/keys')).json().keys).toEqual([]);
    expect((await call(t.owner, 'GET', '/api/v1/keys')).json().keys.map((k: { id: string }) => k.id)).toContain(keyId);

    const translate = () =>
      h.app.inject({
        method: 'POST',
        url: '/api/v1/translate',
        headers: bearer(apiKey),
        payload: batch(1),
      });
    expect((await translate()).statusCode).toBe(200);
    const revoked = await call(t.owner, 'DELETE', `/api/v1/keys/${keyId}`);
    expect(revoked.statusCode).toBe(200);
    expect(revoked.json().revokedAt).not.toBeNull();
    expect((await translate()).statusCode).toBe(401);
    expect((await call(t.owner, 'DELETE', `/api/v1/keys/${keyId}`)).statusCode).toBe(200); // idempotent
    expect((await call(t.owner, 'DELETE', '/api/v1/keys/no-such-key')).statusCode).toBe(404);
  });

  it('without orgId the key belongs to the caller’s personal organization', async () => {
    const solo = await signIn('solo');
    const res = await call(solo, 'POST', '/api/v1/keys');
    expect(res.statusCode, res.body).toBe(200);
    const issued = res.json();
    const orgs = (await call(solo, 'GET', '/api/v1/orgs')).json().organizations;
    expect(orgs).toEqual([expect.objectContaining({ id: issued.orgId, personal: true, role: 'owner' })]);
  });

  it('every session route answers 401 without a session', async () => {
    for (const [method, url] of [
      ['POST', '/api/v1/keys'],
      ['GET', '/api/v1/keys'],
      ['DELETE', '/api/v1/keys/x'],
      ['GET', '/api/v1/orgs'],
      ['POST', '/api/v1/orgs'],
      ['GET', '/api/v1/orgs/x/members'],
      ['POST', '/api/v1/orgs/x/members'],
      ['POST', '/api/v1/invites/accept'],
    ] as const) {
      const res = await h.app.inject({ method, url, payload: {} });
      expect(res.statusCode, `${method} ${url}`).toBe(401);
    }
  });
});
