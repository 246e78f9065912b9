// GitHub sign-in through the real @fastify/oauth2 client against the local GitHub-compatible OAuth server (real HTTP),
// sessions (cookie attributes, absolute and idle expiry, sign-out) and the CSRF origin check, on real PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../src/infra/secrets.ts';
import {
  cookieHeader,
  type Harness,
  OAUTH_CLIENT_ID,
  OAUTH_CLIENT_SECRET,
  PUBLIC_BASE_URL,
  startHarness,
} from './harness.ts';

let h: Harness;
let clock = Date.parse('2026-11-24T08:00:00Z');
beforeAll(async () => {
  h = await startHarness({ provider: 'pseudo', now: () => clock });
});
afterAll(async () => h?.close());

/** Through the flow as `login` up to the callback; returns the callback's answer (cookies of the start sent along). */
async function callback(login: string) {
  const start = await h.app.inject({ method: 'GET', url: '/auth/github' });
  const approved = await fetch(`${start.headers.location}&login=${login}`, { redirect: 'manual' });
  const back = new URL(approved.headers.get('location')!);
  return h.app.inject({
    method: 'GET',
    url: `${back.pathname}${back.search}`,
    headers: { cookie: cookieHeader(start.headers['set-cookie']) },
  });
}

const me = (cookie: string, extra: Record<string, string> = {}) =>
  h.app.inject({ method: 'GET', url: '/api/v1/me', headers: { cookie, ...extra } });

describe('GitHub sign-in (authorization code with state and PKCE)', () => {
  it('redirects to the configured authorize endpoint with state, an S256 challenge and the callback', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/auth/github' });
    expect(res.statusCode).toBe(302);
    const location = new URL(res.headers.location as string);
    expect(`${location.origin}${location.pathname}`).toBe(h.github.authorizeUrl);
    expect(location.searchParams.get('client_id')).toBe(OAUTH_CLIENT_ID);
    expect(location.searchParams.get('redirect_uri')).toBe(`${PUBLIC_BASE_URL}/auth/github/callback`);
    expect(location.searchParams.get('scope')).toBe('read:user user:email');
    expect(location.searchParams.get('state')).toMatch(/.{16,}/);
    expect(location.searchParams.get('code_challenge_method')).toBe('S256');
    expect(location.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const cookies = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
    expect(cookies.some((c) => c.startsWith('oauth2-redirect-state=') && /HttpOnly/i.test(c))).toBe(true);
    expect(cookies.some((c) => c.startsWith('oauth2-code-verifier=') && /HttpOnly/i.test(c))).toBe(true);
  });

  it('creates the user from /user and the verified primary e-mail, and sets the session cookie', async () => {
    h.github.addUser({
      login: 'ada',
      id: 4242,
      name: 'Ada Lovelace',
      emails: [
        { email: 'ada-unverified@example.com', primary: false, verified: false },
        { email: 'Ada@Example.com', primary: true, verified: true },
      ],
    });
    const done = await callback('ada');
    expect(done.statusCode).toBe(302);
    expect(done.headers.location).toBe('/');
    const sessionCookie = ([] as string[])
      .concat(done.headers['set-cookie'] ?? [])
      .find((c) => c.startsWith('session-token='))!;
    expect(sessionCookie).toMatch(/HttpOnly/i);
    expect(sessionCookie).toMatch(/SameSite=Lax/i);
    expect(sessionCookie).toMatch(/Secure/i); // NODE_ENV=test: only development drops Secure
    expect(sessionCookie).toMatch(/Path=\//);
    // The token exchange sent the verifier, the client credentials in the body and asked for JSON.
    const exchange = h.github.tokenRequests.at(-1)!;
    expect(exchange.body.code_verifier).toMatch(/^[A-Za-z0-9_-]{43,128}$/);
    expect(exchange.body.client_id).toBe(OAUTH_CLIENT_ID);
    expect(exchange.body.client_secret).toBe(OAUTH_CLIENT_SECRET);
    expect(String(exchange.headers.accept)).toContain('application/json');
    const cookie = cookieHeader(done.headers['set-cookie'], 'session-token');
    const profile = (await me(cookie)).json();
    expect(profile).toMatchObject({
      email: 'Ada@Example.com',
      name: 'Ada Lovelace',
      mfaEnabled: false,
      organizations: [],
    });
    // Stored hashed: the token itself is nowhere in the database.
    const token = cookie.slice('session-token='.length);
    const [row] = await h.database.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM sessions WHERE token_hash = $1',
      [sha256(token)],
    );
    expect(row!.n).toBe(1);
    const [users] = await h.database.query<{ github_id: string }>('SELECT github_id FROM users WHERE id = $1', [
      profile.id,
    ]);
    expect(users!.github_id).toBe('4242');
    // Signing in again links the same user.
    expect((await h.signIn('ada', 'Ada@Example.com')).userId).toBe(profile.id);
  });

  it('links a user made by the CLI (same verified e-mail) instead of creating another', async () => {
    const [cli] = await h.database.query<{ id: string }>(
      "INSERT INTO users (email) VALUES ('grace@example.com') RETURNING id",
    );
    const session = await h.signIn('grace', 'grace@example.com');
    expect(session.userId).toBe(cli!.id);
  });

  it('refuses a callback whose state does not match, a replayed code and an account without a verified primary e-mail', async () => {
    const start = await h.app.inject({ method: 'GET', url: '/auth/github' });
    h.github.addUser({
      login: 'eve',
      id: 666,
      name: null,
      emails: [{ email: 'eve@example.com', primary: true, verified: true }],
    });
    const approved = await fetch(`${start.headers.location}&login=eve`, { redirect: 'manual' });
    const back = new URL(approved.headers.get('location')!);
    const forged = new URL(back);
    forged.searchParams.set('state', 'not-the-state');
    const cookies = cookieHeader(start.headers['set-cookie']);
    const bad = await h.app.inject({
      method: 'GET',
      url: `${forged.pathname}${forged.search}`,
      headers: { cookie: cookies },
    });
    expect(bad.statusCode).toBe(401);
    expect(bad.json()).toEqual({ error: 'sign-in failed' });
    // Without the state cookie (another browser) the right state is refused too.
    const other = await h.app.inject({ method: 'GET', url: `${back.pathname}${back.search}` });
    expect(other.statusCode).toBe(401);
    h.github.addUser({
      login: 'nomail',
      id: 667,
      name: null,
      emails: [{ email: 'n@example.com', primary: true, verified: false }],
    });
    const unverified = await callback('nomail');
    expect(unverified.statusCode).toBe(401);
    expect(unverified.json().error).toContain('verified primary e-mail');
  });
});

describe('sessions', () => {
  it('401 without a session, with an unknown one, and with an API key (an API key is never a session)', async () => {
    expect((await h.app.inject({ method: 'GET', url: '/api/v1/me' })).statusCode).toBe(401);
    expect((await me(`session-token=${'A'.repeat(43)}`)).statusCode).toBe(401);
    const { apiKey } = await h.account();
    const res = await h.app.inject({
      method: 'GET',
      url: '/api/v1/me',
      headers: { authorization: `Bearer ${apiKey}` },
    });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: 'missing or invalid credentials' });
  });

  it('ends when idle for SESSION__IDLE_MINUTES, and at the absolute expiry however active', async () => {
    const { cookie } = await h.signIn('idler');
    clock += 11 * 3_600_000; // 11 h: still within the 12 h idle window
    expect((await me(cookie)).statusCode).toBe(200);
    clock += 11 * 3_600_000; // used 11 h ago: fine again
    expect((await me(cookie)).statusCode).toBe(200);
    clock += 12 * 3_600_000 + 1_000; // idle past 12 h
    expect((await me(cookie)).statusCode).toBe(401);

    const active = await h.signIn('busy');
    for (let i = 0; i < 15; i++) {
      clock += 11 * 3_600_000;
      expect((await me(active.cookie)).statusCode).toBe(200); // 165 h of activity
    }
    clock += 4 * 3_600_000; // 169 h after sign-in: past the absolute 168 h
    expect((await me(active.cookie)).statusCode).toBe(401);
  });

  it('sign-out ends the session at once and clears the cookie', async () => {
    const { cookie } = await h.signIn('leaver');
    const out = await h.app.inject({ method: 'POST', url: '/auth/logout', headers: { cookie } });
    expect(out.statusCode).toBe(200);
    expect(out.json()).toEqual({ signedOut: true });
    expect(String(out.headers['set-cookie'])).toMatch(/session-token=;/);
    expect((await me(cookie)).statusCode).toBe(401);
    expect((await h.app.inject({ method: 'POST', url: '/auth/logout', headers: { cookie } })).statusCode).toBe(401);
  });

  it('CSRF: a state-changing request from another origin is refused; the own origin and non-browser clients pass', async () => {
    const { cookie } = await h.signIn('csrf');
    const create = (headers: Record<string, string>) =>
      h.app.inject({ method: 'POST', url: '/api/v1/orgs', headers: { cookie, ...headers }, payload: { name: 'x' } });
    const evil = await create({ origin: 'https://evil.example' });
    expect(evil.statusCode).toBe(403);
    expect(evil.json()).toEqual({ error: 'cross-origin request refused' });
    expect((await create({ referer: 'https://evil.example/page' })).statusCode).toBe(403);
    expect((await create({ origin: 'null' })).statusCode).toBe(403);
    expect((await create({ origin: PUBLIC_BASE_URL })).statusCode).toBe(200);
    expect((await create({ referer: `${PUBLIC_BASE_URL}/orgs` })).statusCode).toBe(200);
    expect((await create({})).statusCode).toBe(200); // curl
    // Reads are not state-changing.
    expect((await me(cookie, { origin: 'https://evil.example' })).statusCode).toBe(200);
  });

  it('sign-in is audited with the request id, never the token', async () => {
    const { userId, cookie } = await h.signIn('audited');
    const rows = await h.database.query<{ action: string; request_id: string | null; meta: unknown }>(
      "SELECT action, request_id, meta FROM audit_log WHERE actor_user_id = $1 AND action = 'session.sign_in'",
      [userId],
    );
    expect(rows.length).toBe(1);
    expect(rows[0]!.request_id).toBeTruthy();
    expect(JSON.stringify(rows)).not.toContain(cookie.slice('session-token='.length));
  });
});
