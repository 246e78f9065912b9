// Deny-by-default: every registered route is walked with no, wrong and valid credentials.

import type { RouteSpec } from '@scriptorium/http';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BILLING_SECRET, batch, bearer, type Harness, startHarness, WORKER_SECRET } from './harness.ts';

let h: Harness;
let apiKey: string;
/** A signed-in user, owner of `orgId`, with state every session route can act on once. */
let session: { cookie: string; userId: string; email: string };
const ids: Record<string, string> = {};
beforeAll(async () => {
  h = await startHarness();
  apiKey = (await h.account()).apiKey;
  session = await h.signIn('walker');
  const other = await h.signIn('walker-friend');
  const as = (who: { cookie: string }, method: 'POST' | 'GET', url: string, payload?: object) =>
    h.app.inject({ method, url, headers: { cookie: who.cookie }, ...(payload ? { payload } : {}) });
  ids.org = (await as(session, 'POST', '/api/v1/orgs', { name: 'walk' })).json().id;
  await h.database.query("INSERT INTO memberships (org_id, user_id, role) VALUES ($1, $2, 'member')", [
    ids.org,
    other.userId,
  ]);
  ids.member = other.userId;
  ids.invite = (
    await as(session, 'POST', `/api/v1/orgs/${ids.org}/members`, { email: 'pending@example.com' })
  ).json().id;
  ids.key = (await as(session, 'POST', '/api/v1/keys', { orgId: ids.org })).json().keyId;
  // The memory is on, so its TMX import answers its success status.
  await h.database.query('UPDATE organizations SET memory_enabled = true WHERE id = $1', [ids.org]);
  // An organization of someone else that invites the walker.
  const friendOrg = (await as(other, 'POST', '/api/v1/orgs', { name: 'friend' })).json().id;
  ids.inviteToken = (
    await as(other, 'POST', `/api/v1/orgs/${friendOrg}/members`, { email: session.email })
  ).json().token;
  const [review] = await h.database.query<{ id: string }>(
    `INSERT INTO review_items (org_id, source_locale, target_locale, item_id, source_text, target_text, model, scores, overall)
     VALUES ($1, 'en', 'de', 'a', 'Hi', 'Hallo', 'm', '{}', 1) RETURNING id`,
    [ids.org],
  );
  ids.review = review!.id;
  // Erasure is walked by a user of its own (the walker signs out last).
  ids.eraseCookie = (await h.signIn('walker-erased')).cookie;
});
afterAll(async () => h?.close());

/** The valid request of a session route: its path with real ids, and its body. */
const sessionRequests: Record<
  string,
  () => { url: string; payload?: object | string; cookie?: string; contentType?: string }
> = {
  'POST /auth/logout': () => ({ url: '/auth/logout' }),
  'GET /api/v1/me': () => ({ url: '/api/v1/me' }),
  'POST /api/v1/orgs': () => ({ url: '/api/v1/orgs', payload: { name: 'another' } }),
  'GET /api/v1/orgs': () => ({ url: '/api/v1/orgs' }),
  'GET /api/v1/orgs/:id/members': () => ({ url: `/api/v1/orgs/${ids.org}/members` }),
  'POST /api/v1/orgs/:id/members': () => ({
    url: `/api/v1/orgs/${ids.org}/members`,
    payload: { email: 'x@example.com' },
  }),
  'PATCH /api/v1/orgs/:id/members/:userId': () => ({
    url: `/api/v1/orgs/${ids.org}/members/${ids.member}`,
    payload: { role: 'admin' },
  }),
  'DELETE /api/v1/orgs/:id/members/:userId': () => ({ url: `/api/v1/orgs/${ids.org}/members/${ids.member}` }),
  'GET /api/v1/orgs/:id/invites': () => ({ url: `/api/v1/orgs/${ids.org}/invites` }),
  'DELETE /api/v1/orgs/:id/invites/:inviteId': () => ({ url: `/api/v1/orgs/${ids.org}/invites/${ids.invite}` }),
  'GET /api/v1/orgs/:id/usage': () => ({ url: `/api/v1/orgs/${ids.org}/usage` }),
  'GET /api/v1/orgs/:id/billing': () => ({ url: `/api/v1/orgs/${ids.org}/billing` }),
  'POST /api/v1/invites/accept': () => ({ url: '/api/v1/invites/accept', payload: { token: ids.inviteToken! } }),
  'POST /api/v1/keys': () => ({ url: '/api/v1/keys', payload: { orgId: ids.org } }),
  'GET /api/v1/keys': () => ({ url: '/api/v1/keys' }),
  'DELETE /api/v1/keys/:id': () => ({ url: `/api/v1/keys/${ids.key}` }),
  'GET /api/v1/reviews': () => ({ url: `/api/v1/reviews?orgId=${ids.org}` }),
  'POST /api/v1/reviews/:id': () => ({ url: `/api/v1/reviews/${ids.review}`, payload: { type: 'approve' } }),
  'POST /api/v1/mfa': () => ({ url: '/api/v1/mfa', payload: { action: 'enroll' } }),
  'POST /api/v1/privacy/export': () => ({ url: '/api/v1/privacy/export' }),
  'POST /api/v1/privacy/delete': () => ({ url: '/api/v1/privacy/delete', cookie: ids.eraseCookie! }),
  'GET /api/v1/orgs/:id/memory': () => ({ url: `/api/v1/orgs/${ids.org}/memory` }),
  'PUT /api/v1/orgs/:id/memory': () => ({ url: `/api/v1/orgs/${ids.org}/memory`, payload: { enabled: true } }),
  'GET /api/v1/orgs/:id/memory.tmx': () => ({ url: `/api/v1/orgs/${ids.org}/memory.tmx` }),
  'POST /api/v1/orgs/:id/memory.tmx': () => ({
    url: `/api/v1/orgs/${ids.org}/memory.tmx`,
    payload: '<tmx version="1.4"><header srclang="en"/><body/></tmx>',
    contentType: 'application/x-tmx+xml',
  }),
};

const WEBHOOK = '/api/billing/webhook';
const webhookEvent = JSON.stringify({ id: 'evt_walk', type: 'charge.refunded', data: { object: {} } });

/** The success status a route documents (its first 2xx or 3xx). */
const success = (spec: RouteSpec) => Number(Object.keys(spec.responses).find((s) => Number(s) < 400));
/** Public steps of the sign-in flow whose own failure (no valid state) is a 401. */
const SIGN_IN_CALLBACK = '/auth/github/callback';

const bodies: Record<string, unknown> = {
  '/api/v1/translate': batch(1),
  '/api/v1/translate/file': {
    format: 'json',
    content: '{"a": "Save"}',
    sourceLocale: 'en',
    targetLocale: 'de',
    tier: 'cheap',
  },
  '/api/v1/judge': { sourceLocale: 'en', targetLocale: 'de', items: [{ id: 'a', source: 'Hi', target: 'Hallo' }] },
  '/api/v1/playground': { source: 'Hi', targetLocale: 'de' },
};

const call = (spec: RouteSpec, headers: Record<string, string>) => {
  if (spec.url === WEBHOOK)
    return h.app.inject({
      method: 'POST',
      url: WEBHOOK,
      headers: { 'content-type': 'application/json', ...headers },
      payload: webhookEvent,
    });
  const {
    cookie,
    contentType,
    ...concrete
  }: { url: string; payload?: object | string; cookie?: string; contentType?: string } = sessionRequests[
    `${spec.method} ${spec.url}`
  ]?.() ?? {
    url: spec.url,
    ...(bodies[spec.url] ? { payload: bodies[spec.url] as object } : {}),
  };
  // A route walked with its own session (erasure) uses it in place of the walker's.
  const withCookie = {
    ...(cookie && headers.cookie === session.cookie ? { ...headers, cookie } : headers),
    ...(contentType ? { 'content-type': contentType } : {}),
  };
  return h.app.inject({ method: spec.method, headers: withCookie, ...concrete });
};

describe('authorization walk', () => {
  it('covers the routes of this issue', () => {
    const urls = h.registry.specs.map((s) => `${s.method} ${s.url}`);
    for (const expected of [
      'POST /api/v1/translate',
      'POST /api/v1/judge',
      'POST /api/v1/playground',
      'POST /api/worker',
      'POST /api/retention',
      'GET /',
    ]) {
      expect(urls).toContain(expected);
    }
  });

  it('no credentials: 401 on every protected route, never on public ones', async () => {
    for (const spec of h.registry.specs) {
      const res = await call(spec, {});
      if (spec.url === SIGN_IN_CALLBACK) expect(res.json()).toEqual({ error: 'sign-in failed' });
      else if (spec.security === 'none') expect(res.statusCode, spec.url).not.toBe(401);
      else if (spec.security === 'providerSignature')
        expect(res.json()).toEqual({ error: 'invalid webhook signature' });
      else {
        expect(res.statusCode, spec.url).toBe(401);
        expect(res.json()).toEqual({ error: 'missing or invalid credentials' });
      }
    }
  });

  it('wrong credentials: 401 (an API key is not a worker secret and vice versa)', async () => {
    const wrong = [
      bearer(`sk_live_${'0'.repeat(43)}`),
      bearer('garbage'),
      { authorization: 'Basic dXNlcjpwYXNz' },
      { authorization: 'Bearer' },
      bearer(''),
    ];
    for (const spec of h.registry.specs.filter((s) => s.security !== 'none')) {
      const others =
        spec.security === 'apiKey'
          ? [bearer(WORKER_SECRET)]
          : spec.security === 'session'
            ? [bearer(apiKey), { cookie: `session-token=${apiKey}` }, { cookie: `session-token=${'x'.repeat(43)}` }]
            : [bearer(apiKey)];
      for (const headers of [...wrong, ...others]) {
        const res = await call(spec, headers);
        // A payment-provider signature that does not verify is a 400, as the document says.
        expect(res.statusCode, `${spec.url} ${JSON.stringify(headers)}`).toBe(
          spec.security === 'providerSignature' ? 400 : 401,
        );
      }
    }
  });

  it('valid credentials: the route answers its success status', async () => {
    // Sign-out last: it ends the walker's session.
    const specs = [...h.registry.specs].sort(
      (a, b) => Number(a.url === '/auth/logout') - Number(b.url === '/auth/logout'),
    );
    for (const spec of specs) {
      if (spec.url === SIGN_IN_CALLBACK) continue; // the full flow is sign-in.test.ts
      const headers: Record<string, string> =
        spec.security === 'apiKey'
          ? bearer(apiKey)
          : spec.security === 'workerSecret'
            ? bearer(WORKER_SECRET)
            : spec.security === 'session'
              ? { cookie: session.cookie }
              : spec.security === 'providerSignature'
                ? {
                    'stripe-signature': new Stripe('sk_test_unused').webhooks.generateTestHeaderString({
                      payload: webhookEvent,
                      secret: BILLING_SECRET,
                    }),
                  }
                : {};
      const res = await call(spec, headers);
      expect(res.statusCode, `${spec.method} ${spec.url}: ${res.body.slice(0, 200)}`).toBe(success(spec));
    }
  });

  it('the OpenAPI document lists every route', async () => {
    const doc = (await h.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const documented = h.registry.specs.filter((s) => !s.internal);
    expect(documented.length).toBeGreaterThan(20);
    for (const spec of documented) {
      const operation = doc.paths[spec.url.replace(/:(\w+)/g, '{$1}')]?.[spec.method.toLowerCase()];
      expect(operation, `${spec.method} ${spec.url}`).toBeDefined();
      expect(operation.security).toEqual(spec.security === 'none' ? [] : [{ [spec.security]: [] }]);
    }
  });

  it('every session route has a valid request in this walk', () => {
    const sessionRoutes = h.registry.specs.filter((s) => s.security === 'session').map((s) => `${s.method} ${s.url}`);
    expect(sessionRoutes.filter((r) => !sessionRequests[r])).toEqual([]);
  });
});
